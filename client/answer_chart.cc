#include "client/answer_chart.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "client/chart/schedule_chart.h"
#include "graph/cost_model.h"
#include "simulator/simulator.h"

namespace placement::cli {
namespace {

namespace pb = ::placement::v1;

absl::StatusOr<Placement> PlacementFromAnswer(const pb::PlaceResponse& answer, const Graph& graph, const Topology& topology) {
  Placement placement;
  placement.device.assign(graph.num_ops(), kNone);
  for (const pb::Assignment& a : answer.assignment()) {
    const OpId op = graph.FindOp(a.op());
    const DeviceId device = topology.FindDevice(a.device());
    if (op == kNone || device == kNone) {
      return absl::FailedPreconditionError(absl::StrCat("the answer places '", a.op(), "' on '", a.device(),
                                                        "', which the graph or cluster loaded here does not have"));
    }
    placement.device[op] = device;
  }
  for (OpId op = 0; op < graph.num_ops(); ++op) {
    if (placement.device[op] == kNone) {
      return absl::FailedPreconditionError(absl::StrCat("the answer does not place '", graph.name(op), "'"));
    }
  }
  return placement;
}

Objective ObjectiveOf(pb::Objective o) {
  switch (o) {
    case pb::OBJECTIVE_THROUGHPUT: return Objective::kThroughput;
    case pb::OBJECTIVE_LATENCY: return Objective::kLatency;
    default: return Objective::kStepTime;
  }
}

}  // namespace

absl::StatusOr<std::string> RenderAnswerChart(const AnswerChartInput& input, const pb::PlaceResponse& answer) {
  absl::StatusOr<LoadedGraph> loaded = LoadGraphFile(input.graph_path, input.load);
  if (!loaded.ok()) return loaded.status();
  const Problem& problem = loaded->problem;
  absl::StatusOr<Topology> topology = ResolveTopology(problem, input.topology_file, input.devices);
  if (!topology.ok()) return topology.status();
  absl::StatusOr<CostModel> costs = CostModel::Create(problem.graph, *topology);
  if (!costs.ok()) return costs.status();
  absl::StatusOr<Placement> placement = PlacementFromAnswer(answer, problem.graph, *topology);
  if (!placement.ok()) return placement.status();
  SimulatorConfig config;
  config.record_timeline = true;
  absl::StatusOr<SimulationResult> sim = Simulate(*costs, *placement, config);
  if (!sim.ok()) return sim.status();
  ChartOptions options;
  options.title = absl::StrCat(input.graph_path, " (", answer.algorithm(), ")");
  options.time_unit = problem.time_unit;
  options.objective = ObjectiveOf(answer.score().objective());
  return RenderScheduleHtml(*costs, *placement, *sim, options);
}

}  // namespace placement::cli
