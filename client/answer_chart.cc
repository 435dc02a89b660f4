#include "client/answer_chart.h"

#include <algorithm>
#include <numeric>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "client/chart/schedule_chart.h"
#include "client/chart_file.h"
#include "graph/cost_model.h"
#include "simulator/plan_simulation.h"
#include "simulator/simulator.h"

namespace placement::cli {
namespace {

namespace pb = ::placement::v1;

absl::StatusOr<Placement> PlacementFromAnswer(const pb::PlaceResponse& answer, const Graph& graph,
                                              const Topology& topology) {
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

// The plan an answer's stages describe, on the graph and cluster loaded here.
absl::StatusOr<ParallelPlan> PlanOfAnswer(const pb::PlaceResponse& answer, const Graph& graph,
                                          const Topology& topology) {
  ParallelPlan plan;
  plan.stage_of_op.assign(graph.num_ops(), -1);
  for (const pb::Stage& stage : answer.stages()) {
    const int32_t s = plan.num_stages();
    plan.stages.emplace_back();
    for (const std::string& name : stage.devices()) {
      const DeviceId d = topology.FindDevice(name);
      if (d == kNone)
        return absl::FailedPreconditionError(absl::StrCat("the answer's stage ", s + 1, " runs on '", name,
                                                          "', which the cluster loaded here does not have"));
      plan.stages.back().devices.push_back(d);
    }
    for (const std::string& name : stage.operators()) {
      const OpId op = graph.FindOp(name);
      if (op == kNone)
        return absl::FailedPreconditionError(absl::StrCat("the answer's stage ", s + 1, " holds '", name,
                                                          "', which the graph loaded here does not have"));
      plan.stage_of_op[op] = s;
    }
  }
  for (OpId op = 0; op < graph.num_ops(); ++op) {
    if (plan.stage_of_op[op] < 0)
      return absl::FailedPreconditionError(absl::StrCat("the answer's stages leave out '", graph.name(op), "'"));
  }
  absl::StatusOr<Schedule> schedule = ParseSchedule(answer.schedule());
  if (!schedule.ok()) return schedule.status();
  plan.schedule = *schedule;
  plan.global_batch = answer.global_batch();
  return plan;
}

absl::StatusOr<std::string> RenderPlanChart(const CostModel& costs, const pb::PlaceResponse& answer,
                                            ChartOptions options) {
  absl::StatusOr<ParallelPlan> plan = PlanOfAnswer(answer, costs.graph(), costs.topology());
  if (!plan.ok()) return plan.status();
  return RenderPlanChartHtml(costs, *std::move(plan), std::move(options));
}

Objective ObjectiveOf(pb::Objective o) {
  switch (o) {
    case pb::OBJECTIVE_THROUGHPUT:
      return Objective::kThroughput;
    case pb::OBJECTIVE_LATENCY:
      return Objective::kLatency;
    default:
      return Objective::kStepTime;
  }
}

}  // namespace

absl::Status WriteAnswerChart(const std::string& path, const AnswerChartInput& input, const pb::PlaceResponse& answer) {
  absl::StatusOr<LoadedGraph> loaded = LoadGraphFile(input.graph_path, input.load);
  if (!loaded.ok()) return absl::Status(loaded.status().code(), absl::StrCat("--chart: ", loaded.status().message()));
  const Problem& problem = loaded->problem;
  absl::StatusOr<Topology> topology = ResolveTopology(problem, input.topology_file, input.devices);
  absl::StatusOr<CostModel> costs =
      topology.ok() ? CostModel::Create(problem.graph, *topology) : absl::StatusOr<CostModel>(topology.status());
  if (!costs.ok()) return absl::Status(costs.status().code(), absl::StrCat("--chart: ", costs.status().message()));
  if (answer.stages_size() > 0) {  // a plan: a few micro-batches through its stages
    ChartOptions options = ChartFor(input.graph_path, answer.algorithm(), problem.time_unit, Objective::kThroughput);
    absl::StatusOr<std::string> html = RenderPlanChart(*costs, answer, options);
    if (!html.ok()) return absl::Status(html.status().code(), absl::StrCat("--chart: ", html.status().message()));
    return WriteChartFile(path, *html);
  }
  absl::StatusOr<Placement> placement = PlacementFromAnswer(answer, problem.graph, *topology);
  if (!placement.ok())
    return absl::Status(placement.status().code(), absl::StrCat("--chart: ", placement.status().message()));
  return WriteScheduleChart(
      path, *costs, *placement, SimulatorConfig{},
      ChartFor(input.graph_path, answer.algorithm(), problem.time_unit, ObjectiveOf(answer.score().objective())));
}

}  // namespace placement::cli
