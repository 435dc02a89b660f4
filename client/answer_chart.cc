#include "client/answer_chart.h"

#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "client/chart/schedule_chart.h"
#include "client/chart_file.h"
#include "client/plan_json.h"
#include "graph/cost_model.h"
#include "simulator/parallel_plan.h"
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
  std::vector<NamedStage> stages;
  for (const pb::Stage& stage : answer.stages()) {
    stages.push_back(NamedStage{{stage.devices().begin(), stage.devices().end()},
                                {stage.operators().begin(), stage.operators().end()}});
  }
  absl::StatusOr<ParallelPlan> plan = PlanFromNamedStages(stages, graph, topology);
  // What the server answered does not match what is loaded here: a precondition of drawing it, not a bad request.
  if (!plan.ok()) return absl::FailedPreconditionError(absl::StrCat("the answer's ", plan.status().message()));
  absl::StatusOr<Schedule> schedule = ParseSchedule(answer.schedule());
  if (!schedule.ok()) return schedule.status();
  plan->schedule = *schedule;
  plan->global_batch = answer.global_batch();
  absl::StatusOr<Sharding> sharding = ParseSharding(answer.sharding());
  if (!sharding.ok()) return sharding.status();
  absl::StatusOr<Recompute> recompute = ParseRecompute(answer.recompute());
  if (!recompute.ok()) return recompute.status();
  plan->sharding = *sharding;
  plan->recompute = *recompute;
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
  // A plan runs the graph bound to its micro-batch, which the server chose where the request left the plan to it.
  GraphLoadOptions load = input.load;
  if (answer.stages_size() > 0 && answer.micro_batch_size() > 0 && load.batch > 0)
    load.batch = answer.micro_batch_size();
  absl::StatusOr<LoadedGraph> loaded = LoadGraphFile(input.graph_path, load);
  if (!loaded.ok()) return absl::Status(loaded.status().code(), absl::StrCat("--chart: ", loaded.status().message()));
  const Problem& problem = loaded->problem;
  absl::StatusOr<Topology> topology =
      ResolveTopology(problem, input.topology_file, input.devices, load.runtime, load.precision);
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
