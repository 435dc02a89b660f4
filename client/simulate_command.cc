#include "client/simulate_command.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "client/chart_file.h"
#include "client/graph_loader.h"
#include "client/report.h"
#include "graph/canonical.h"
#include "graph/placement_json.h"
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

}  // namespace

absl::StatusOr<std::string> RunSimulate(const SimulateOptions& o) {
  if (o.output != "table" && o.output != "json") {
    return absl::InvalidArgumentError(absl::StrCat("--output '", o.output, "' is not one of table, json"));
  }
  if (o.placement_path.empty()) return absl::InvalidArgumentError("simulate needs --placement FILE");
  absl::StatusOr<Objective> objective = ParseObjective(o.objective);
  if (!objective.ok()) return objective.status();
  absl::StatusOr<CostModelKind> cost_model = ParseCostModel(o.cost_model);
  if (!cost_model.ok()) return cost_model.status();
  if (absl::Status s = CheckCostModel(*cost_model, *objective); !s.ok()) return s;
  if (absl::Status s = CheckChartApplies(o.chart_path, o.cost_model); !s.ok()) return s;
  absl::StatusOr<SimulatorConfig> config = MakeConfig(o);
  if (!config.ok()) return config.status();

  absl::StatusOr<LoadedGraph> loaded = LoadGraphFile(o.graph_path, o.load);
  if (!loaded.ok()) return loaded.status();
  const Problem* problem = &loaded->problem;
  absl::StatusOr<Topology> topology = ResolveTopology(*problem, o.topology_file, o.devices);
  if (!topology.ok()) return topology.status();
  absl::StatusOr<CostModel> costs = CostModel::Create(problem->graph, *topology);
  if (!costs.ok()) return costs.status();
  absl::StatusOr<std::string> placement_text = ReadWholeFile(o.placement_path);
  if (!placement_text.ok()) return placement_text.status();
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

  Report report;
  report.graph = &problem->graph;
  report.topology = &*topology;
  report.placement = &*placement;
  report.evaluation = &*evaluation;
  report.time_unit = problem->time_unit;
  report.graph_hash = GraphHash(problem->graph);
  report.warnings = loaded->warnings;
  report.cost_sources = loaded->cost_sources;
  return o.output == "json" ? ReportJson(report) : ReportTable(report);
}

}  // namespace placement::cli
