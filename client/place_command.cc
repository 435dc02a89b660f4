#include "client/place_command.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "client/chart_file.h"
#include "client/report.h"
#include "graph/canonical.h"
#include "policy/parallel/hybrid_placer.h"
#include "policy/placer.h"
#include "policy/placer_families.h"

namespace placement::cli {
namespace {

// "latency,step_time", with the cost models other than the default: "latency(tarnawski)".
std::string ObjectiveList(const Placer& p) {
  std::vector<std::string> names;
  std::string models;
  for (CostModelKind k : p.cost_models()) {
    if (k != CostModelKind::kDefault) absl::StrAppend(&models, models.empty() ? "" : ",", CostModelName(k));
  }
  for (Objective o : p.objectives())
    names.push_back(absl::StrCat(ObjectiveName(o), models.empty() ? "" : absl::StrCat("(", models, ")")));
  return absl::StrJoin(names, ",");
}

absl::StatusOr<absl::Duration> ParseDeadline(const std::string& text) {
  absl::Duration d;
  if (!absl::ParseDuration(text, &d) || d <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--deadline '", text, "' is not a positive duration such as 500ms, 2s or 1m"));
  }
  return d;
}

}  // namespace

absl::StatusOr<std::string> RunPlace(const PlaceOptions& o) {
  if (o.output != "table" && o.output != "json") {
    return absl::InvalidArgumentError(absl::StrCat("--output '", o.output, "' is not one of table, json"));
  }
  absl::StatusOr<Objective> objective = ParseObjective(o.objective);
  if (!objective.ok()) return objective.status();
  absl::StatusOr<CostModelKind> cost_model = ParseCostModel(o.cost_model);
  if (!cost_model.ok()) return cost_model.status();
  if (absl::Status s = CheckCostModel(*cost_model, *objective); !s.ok()) return s;
  if (absl::Status s = CheckChartApplies(o.chart_path, o.cost_model); !s.ok()) return s;
  absl::StatusOr<absl::Duration> deadline = ParseDeadline(o.deadline);
  if (!deadline.ok()) return deadline.status();
  const PlacerRegistry& registry = o.registry != nullptr ? *o.registry : DefaultPlacerRegistry();
  absl::StatusOr<const Placer*> placer = registry.Find(o.algorithm);
  if (!placer.ok()) return placer.status();
  if (absl::Status s = CheckPlacerFits(**placer, *objective, *cost_model); !s.ok()) return s;

  absl::StatusOr<LoadedGraph> loaded = LoadGraphFile(o.graph_path, o.load);
  if (!loaded.ok()) return loaded.status();
  const Problem& input = loaded->problem;
  absl::StatusOr<Topology> topology = ResolveTopology(input, o.topology_file, o.devices);
  if (!topology.ok()) return topology.status();
  absl::StatusOr<CostModel> costs = CostModel::Create(input.graph, *topology);
  if (!costs.ok()) return costs.status();

  PlacementProblem problem;
  problem.costs = &*costs;
  problem.objective = *objective;
  problem.cost_model = *cost_model;
  problem.seed = o.seed;
  if (absl::Status s =
          SetPlanOptions(o.plan.parallelism, o.cost_model, o.plan.schedule, o.plan.global_batch, o.algorithm, problem);
      !s.ok()) {
    return s;
  }
  // The deadline covers the placement only, not reading the graph.
  absl::StatusOr<PlacerResult> result = (*placer)->Place(problem, Budget::For(*deadline));
  if (!result.ok()) {
    // Memory refusals name the next step: the command that measures the step and finds the batch that fits.
    const bool memory = result.status().code() == absl::StatusCode::kFailedPrecondition &&
                        absl::StrContains(result.status().message(), "memory");
    return absl::Status(result.status().code(),
                        absl::StrCat(o.algorithm, ": ", result.status().message(),
                                     memory ? absl::StrCat("; `placectl memory ", o.graph_path,
                                                           o.load.training ? " --training" : "", " --batch ",
                                                           std::max<int64_t>(o.load.batch, 1), " --devices 1x",
                                                           topology->device(0).kind,
                                                           "` says what one step holds and the largest batch that "
                                                           "fits one device")
                                            : ""));
  }
  if (!o.chart_path.empty()) {
    if (absl::Status s = WriteScheduleChart(o.chart_path, *costs, result->placement, problem.simulator,
                                            ChartFor(o.graph_path, result->algorithm, input.time_unit, *objective));
        !s.ok()) {
      return s;
    }
  }

  Report report;
  report.graph = &input.graph;
  report.topology = &*topology;
  report.placement = &result->placement;
  report.evaluation = &result->evaluation;
  report.time_unit = input.time_unit;
  report.graph_hash = GraphHash(input.graph);
  report.warnings = loaded->warnings;
  report.cost_sources = loaded->cost_sources;
  report.algorithm = result->algorithm;
  report.proven_optimal = result->proven_optimal;
  report.best_bound = result->best_bound;
  report.notes = result->notes;
  PlanSummary plan;
  if (result->plan.has_value()) {
    plan = SummarizePlan(*result->plan, input.graph, *topology);
    report.plan = &plan;
  }
  return o.output == "json" ? ReportJson(report) : ReportTable(report);
}

std::string ListAlgorithms(const PlacerRegistry* registry) {
  std::string out = absl::StrFormat("%-16s %-28s %s\n", "algorithm", "objectives", "description");
  for (const Placer* p : (registry != nullptr ? *registry : DefaultPlacerRegistry()).All()) {
    absl::StrAppend(&out, absl::StrFormat("%-16s %-28s %s\n", p->name(), ObjectiveList(*p), p->description()));
  }
  return out;
}

}  // namespace placement::cli
