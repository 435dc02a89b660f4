#include "client/answer_chart.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "client/chart/schedule_chart.h"
#include "client/chart_file.h"
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

absl::Status WriteAnswerChart(const std::string& path, const AnswerChartInput& input, const pb::PlaceResponse& answer) {
  absl::StatusOr<LoadedGraph> loaded = LoadGraphFile(input.graph_path, input.load);
  absl::StatusOr<Topology> topology =
      loaded.ok() ? ResolveTopology(loaded->problem, input.topology_file, input.devices) : loaded.status();
  absl::StatusOr<CostModel> costs =
      topology.ok() ? CostModel::Create(loaded->problem.graph, *topology) : absl::StatusOr<CostModel>(topology.status());
  absl::StatusOr<Placement> placement =
      costs.ok() ? PlacementFromAnswer(answer, loaded->problem.graph, *topology) : costs.status();
  if (!placement.ok()) return absl::Status(placement.status().code(), absl::StrCat("--chart: ", placement.status().message()));
  return WriteScheduleChart(path, *costs, *placement, SimulatorConfig{},
                            ChartFor(input.graph_path, answer.algorithm(), loaded->problem.time_unit,
                                     ObjectiveOf(answer.score().objective())));
}

}  // namespace placement::cli
