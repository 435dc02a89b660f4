#include "client/simulate_command.h"

#include <optional>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "client/chart_file.h"
#include "client/exit_codes.h"
#include "client/graph_loader.h"
#include "client/plan_json.h"
#include "client/report.h"
#include "graph/canonical.h"
#include "graph/placement_json.h"
#include "graph/status_macros.h"
#include "policy/parallel/hybrid_placer.h"
#include "simulator/objectives.h"
#include "simulator/plan_model.h"

namespace placement::cli {
namespace {

absl::StatusOr<SimulatorConfig> MakeConfig(const SimulateOptions& o) {
  SimulatorConfig config;
  if (o.simulator == "placeto") {
    config = SimulatorConfig::Placeto();
  } else if (o.simulator != "default") {
    return absl::InvalidArgumentError(absl::StrCat("--simulator '", o.simulator, "' is not one of default, placeto"));
  }
  if (o.priority == "topological") {
    config.priority = QueuePriority::kTopological;
  } else if (o.priority == "upward_rank") {
    config.priority = QueuePriority::kUpwardRank;
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("--priority '", o.priority, "' is not one of topological, upward_rank"));
  }
  return config;
}

// A plan file binds an ONNX graph to its micro-batch: --batch may be left out, or give the micro-batch or the
// global batch in samples; another batch is a usage error naming the plan's.
absl::StatusOr<GraphLoadOptions> LoadOptionsFor(const SimulateOptions& o, const std::optional<nlohmann::json>& plan) {
  GraphLoadOptions load = o.load;
  if (!plan.has_value() || MicroBatchSizeOf(*plan) <= 1) return load;
  const int64_t micro = MicroBatchSizeOf(*plan), global = GlobalSamplesOf(*plan);
  if (load.batch != 0 && load.batch != micro && load.batch != global) {
    return UsageError(absl::StrCat("--batch ", load.batch, ": the plan's micro-batches hold ", micro, " samples (",
                                   global, " a step); leave out --batch"));
  }
  load.batch = micro;
  return load;
}

// The plan a file gives, scored by the plan model and checked by simulating its step, reported as `place` reports
// a plan, so that simulating an answer gives the answer's figures.
absl::StatusOr<std::string> ReportPlan(const SimulateOptions& o, const CostModel& costs, const PlanFile& file,
                                       CostModelKind cost_model, Report& report) {
  PlacementProblem problem;
  problem.costs = &costs;
  problem.objective = Objective::kThroughput;
  problem.cost_model = cost_model;
  problem.global_batch = file.plan.global_batch;
  problem.schedule = file.plan.schedule;
  problem.sharding = file.plan.sharding;
  problem.recompute = file.plan.recompute;
  absl::StatusOr<PlacerResult> result = PlanResult(problem, file.plan, "");
  if (!result.ok())
    return absl::Status(result.status().code(), absl::StrCat(o.placement_path, ": ", result.status().message()));
  CheckBySimulation(problem, *result);
  if (!o.chart_path.empty()) {
    if (absl::Status s = WritePlanChart(o.chart_path, costs, file.plan,
                                        ChartFor(o.graph_path, "", report.time_unit, Objective::kThroughput));
        !s.ok()) {
      return s;
    }
  }
  PlanSummary plan = SummarizePlan(*result->plan, costs.graph(), costs.topology());
  plan.micro_batch_size = file.micro_batch_size;
  report.placement = &result->placement;
  report.evaluation = &result->evaluation;
  report.plan = &plan;
  return o.output == "json" ? ReportJson(report) : ReportTable(report);
}

// The options that need no file: usage errors naming the flag.
absl::Status CheckSimulateFlags(const SimulateOptions& o) {
  if (o.output != "table" && o.output != "json")
    return UsageError(absl::StrCat("--output '", o.output, "' is not one of table, json"));
  if (o.placement_path.empty()) return UsageError("simulate needs --placement FILE");
  const absl::StatusOr<Objective> objective = ParseObjective(o.objective);
  const absl::StatusOr<CostModelKind> cost_model = ParseCostModel(o.cost_model);
  if (!objective.ok() || !cost_model.ok())
    return AsUsageError(objective.ok() ? cost_model.status() : objective.status());
  RETURN_IF_ERROR(AsUsageError(CheckCostModel(*cost_model, *objective)));
  RETURN_IF_ERROR(AsUsageError(CheckChartApplies(o.chart_path, o.cost_model)));
  return AsUsageError(MakeConfig(o).status());
}

}  // namespace

absl::StatusOr<std::string> RunSimulate(const SimulateOptions& o) {
  RETURN_IF_ERROR(CheckSimulateFlags(o));
  // Checked above: these parse.
  const absl::StatusOr<Objective> objective = ParseObjective(o.objective);
  const absl::StatusOr<CostModelKind> cost_model = ParseCostModel(o.cost_model);
  const absl::StatusOr<SimulatorConfig> config = MakeConfig(o);

  absl::StatusOr<std::string> placement_text = ReadWholeFile(o.placement_path);
  if (!placement_text.ok()) return placement_text.status();
  const std::optional<nlohmann::json> plan_document = PlanDocument(*placement_text);
  absl::StatusOr<GraphLoadOptions> load = LoadOptionsFor(o, plan_document);
  if (!load.ok()) return load.status();
  absl::StatusOr<LoadedGraph> loaded = LoadGraphFile(o.graph_path, *load);
  if (!loaded.ok()) return loaded.status();
  const Problem* problem = &loaded->problem;
  absl::StatusOr<Topology> topology =
      ResolveTopology(*problem, o.topology_file, o.devices, load->runtime, load->precision);
  if (!topology.ok()) return topology.status();
  absl::StatusOr<CostModel> costs = CostModel::Create(problem->graph, *topology);
  if (!costs.ok()) return costs.status();

  Report report;
  report.graph = &problem->graph;
  report.topology = &*topology;
  report.precision = load->precision;
  report.time_unit = problem->time_unit;
  report.graph_hash = GraphHash(problem->graph);
  report.warnings = loaded->warnings;
  report.cost_sources = loaded->cost_sources;
  if (plan_document.has_value()) {
    // A plan is scored per sample and per step; another objective would be ignored, so it is refused.
    if (o.objective_given && o.objective != "throughput") {
      return UsageError(absl::StrCat("--objective ", o.objective, ": ", o.placement_path,
                                     " is a plan, scored by its time per sample and its step (throughput); leave "
                                     "--objective out or give throughput"));
    }
    absl::StatusOr<PlanFile> plan = ParsePlanDocument(*plan_document, problem->graph, *topology);
    if (!plan.ok())
      return absl::Status(plan.status().code(), absl::StrCat(o.placement_path, ": ", plan.status().message()));
    return ReportPlan(o, *costs, *plan, *cost_model, report);
  }

  absl::StatusOr<Placement> placement = ParsePlacementJson(*placement_text, problem->graph, *topology);
  if (!placement.ok()) {
    return absl::Status(placement.status().code(), absl::StrCat(o.placement_path, ": ", placement.status().message()));
  }
  absl::StatusOr<Evaluation> evaluation = EvaluateUnder(*costs, *placement, *objective, *config, *cost_model);
  if (!evaluation.ok()) return evaluation.status();
  if (!o.chart_path.empty()) {
    if (absl::Status s = WriteScheduleChart(o.chart_path, *costs, *placement, *config,
                                            ChartFor(o.graph_path, "", problem->time_unit, *objective));
        !s.ok()) {
      return s;
    }
  }
  report.placement = &*placement;
  report.evaluation = &*evaluation;
  return o.output == "json" ? ReportJson(report) : ReportTable(report);
}

}  // namespace placement::cli
