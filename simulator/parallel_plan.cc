#include "simulator/parallel_plan.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace placement {
namespace {

absl::Status StageError(absl::StatusCode code, const CostModel& costs, const ParallelPlan& plan, int32_t s,
                        absl::string_view why) {
  return absl::Status(code, absl::StrCat(DescribeStage(costs, plan, s), ": ", why));
}

// Indices and shapes: every operator in an existing stage, every stage with operators and devices, no device
// in two groups.
absl::Status CheckShape(const CostModel& costs, const ParallelPlan& plan) {
  const Graph& g = costs.graph();
  const Topology& t = costs.topology();
  if (static_cast<int32_t>(plan.stage_of_op.size()) != g.num_ops()) {
    return absl::InvalidArgumentError(absl::StrCat("the plan assigns ", plan.stage_of_op.size(),
                                                   " operators to stages but the graph has ", g.num_ops()));
  }
  if (plan.stages.empty()) return absl::InvalidArgumentError("the plan has no stage");
  std::vector<int32_t> ops_in(plan.stages.size(), 0);
  for (OpId op = 0; op < g.num_ops(); ++op) {
    const int32_t s = plan.stage_of_op[op];
    if (s < 0 || s >= plan.num_stages()) {
      return absl::InvalidArgumentError(absl::StrCat("operator '", g.name(op), "' is in stage ", s + 1,
                                                     ", but the plan has stages 1..", plan.num_stages()));
    }
    ++ops_in[s];
  }
  std::vector<int32_t> stage_of_device(t.num_devices(), -1);
  for (int32_t s = 0; s < plan.num_stages(); ++s) {
    const std::string name = absl::StrCat("stage ", s + 1);
    if (ops_in[s] == 0) return absl::InvalidArgumentError(absl::StrCat(name, " has no operator"));
    if (plan.stages[s].devices.empty()) return absl::InvalidArgumentError(absl::StrCat(name, " has no device"));
    for (DeviceId d : plan.stages[s].devices) {
      if (d < 0 || d >= t.num_devices()) {
        return absl::InvalidArgumentError(
            absl::StrCat(name, " names device ", d, ", but the topology has devices 0..", t.num_devices() - 1));
      }
      if (stage_of_device[d] >= 0) {
        return absl::InvalidArgumentError(absl::StrCat("device '", t.device(d).name, "' is in the groups of stage ",
                                                       stage_of_device[d] + 1, " and ", name));
      }
      stage_of_device[d] = s;
    }
  }
  return absl::OkStatus();
}

// Every replica's placement must be a valid placement: every operator runs on every device of its group,
// colocation groups share a stage, pinned operators sit on their device.
absl::Status CheckReplicas(const CostModel& costs, const ParallelPlan& plan) {
  int32_t most = 0;
  for (int32_t s = 0; s < plan.num_stages(); ++s) most = std::max(most, plan.replicas(s));
  Placement replica;
  replica.device.resize(plan.stage_of_op.size());
  for (int32_t k = 0; k < most; ++k) {
    for (size_t op = 0; op < plan.stage_of_op.size(); ++op) {
      const std::vector<DeviceId>& group = plan.stages[plan.stage_of_op[op]].devices;
      replica.device[op] = group[k % group.size()];
    }
    if (absl::Status s = ValidatePlacement(costs, replica); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("the plan's replica ", k + 1, ": ", s.message()));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckBatchAndHosts(const CostModel& costs, const ParallelPlan& plan) {
  if (plan.global_batch < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("the global batch must not be negative (got ", plan.global_batch, ")"));
  }
  if (plan.schedule == Schedule::kGPipe && plan.global_batch == 0) {
    return absl::InvalidArgumentError("the gpipe schedule flushes the pipeline every step: give a global batch");
  }
  if (plan.sharding != Sharding::kNone && plan.global_batch == 0) {
    return absl::InvalidArgumentError(absl::StrCat("sharding ", ShardingName(plan.sharding),
                                                   " splits a synchronous step's state: give a global batch"));
  }
  const Topology& t = costs.topology();
  for (int32_t s = 0; s < plan.num_stages(); ++s) {
    if (plan.global_batch > 0 && plan.global_batch < plan.replicas(s)) {
      return StageError(
          absl::StatusCode::kInvalidArgument, costs, plan, s,
          absl::StrCat("the global batch of ", plan.global_batch, " micro-batches is smaller than its ",
                       plan.replicas(s), " replicas: every replica needs at least one micro-batch a step"));
    }
    if (t.data_parallel_across_hosts()) continue;
    const std::vector<DeviceId>& group = plan.stages[s].devices;
    for (DeviceId d : group) {
      if (t.device(d).host != t.device(group.front()).host) {
        return StageError(
            absl::StatusCode::kFailedPrecondition, costs, plan, s,
            absl::StrCat("its group spans hosts ('", t.device(group.front()).name, "' and '", t.device(d).name,
                         "'), but the topology keeps data-parallel groups inside a host"));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::string_view ScheduleName(Schedule s) { return s == Schedule::kGPipe ? "gpipe" : "1f1b"; }

absl::StatusOr<Schedule> ParseSchedule(absl::string_view name) {
  if (name.empty() || name == "1f1b") return Schedule::kOneFOneB;
  if (name == "gpipe") return Schedule::kGPipe;
  return absl::InvalidArgumentError(absl::StrCat("unknown schedule '", name, "'; known schedules are 1f1b, gpipe"));
}

absl::string_view ShardingName(Sharding s) {
  switch (s) {
    case Sharding::kOptimizer:
      return "zero1";
    case Sharding::kGradients:
      return "zero2";
    case Sharding::kParameters:
      return "zero3";
    case Sharding::kNone:
      break;
  }
  return "none";
}

absl::StatusOr<Sharding> ParseSharding(absl::string_view name) {
  if (name.empty() || name == "none") return Sharding::kNone;
  if (name == "zero1") return Sharding::kOptimizer;
  if (name == "zero2") return Sharding::kGradients;
  if (name == "zero3" || name == "fsdp") return Sharding::kParameters;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown sharding '", name, "'; known: none, zero1 (optimizer state), zero2 (and gradients), ",
                   "zero3 or fsdp (and weights)"));
}

absl::string_view RecomputeName(Recompute r) { return r == Recompute::kFull ? "full" : "none"; }

absl::StatusOr<Recompute> ParseRecompute(absl::string_view name) {
  if (name.empty() || name == "none") return Recompute::kNone;
  if (name == "full") return Recompute::kFull;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown recompute '", name, "'; known: none, full (each stage's forward in checkpointed segments)"));
}

absl::Status ValidatePlan(const CostModel& costs, const ParallelPlan& plan) {
  if (absl::Status s = CheckShape(costs, plan); !s.ok()) return s;
  if (absl::Status s = CheckReplicas(costs, plan); !s.ok()) return s;
  return CheckBatchAndHosts(costs, plan);
}

std::string DescribeStage(const CostModel& costs, const ParallelPlan& plan, int32_t stage) {
  const Graph& g = costs.graph();
  const Topology& t = costs.topology();
  OpId first = kNone, last = kNone;
  int32_t count = 0;
  for (OpId op : g.topo_order()) {
    if (op >= static_cast<OpId>(plan.stage_of_op.size()) || plan.stage_of_op[op] != stage) continue;
    if (first == kNone) first = op;
    last = op;
    ++count;
  }
  std::vector<std::string> parts;
  if (first != kNone) {
    parts.push_back(absl::StrCat(count, count == 1 ? " operator" : " operators", " from '", g.name(first), "' to '",
                                 g.name(last), "'"));
  }
  if (stage >= 0 && stage < plan.num_stages() && !plan.stages[stage].devices.empty()) {
    const std::vector<DeviceId>& group = plan.stages[stage].devices;
    const auto name = [&](DeviceId d) { return d >= 0 && d < t.num_devices() ? t.device(d).name : absl::StrCat(d); };
    parts.push_back(absl::StrCat(group.size(), group.size() == 1 ? " replica on " : " replicas on ",
                                 name(group.front()),
                                 group.size() > 1 ? absl::StrCat(" .. ", name(group.back())) : ""));
  }
  return absl::StrCat("stage ", stage + 1, parts.empty() ? "" : absl::StrCat(" (", absl::StrJoin(parts, ", "), ")"));
}

int32_t InFlightMicroBatches(const ParallelPlan& plan, int32_t stage) {
  // Synchronous steps of one stage are no pipeline: each replica runs a micro-batch's forward and backward before
  // the next one's forward, as DistributedDataParallel with gradient accumulation does.
  if (plan.num_stages() == 1 && plan.global_batch > 0) return 1;
  int64_t downstream = 0;
  for (int32_t t = stage; t < plan.num_stages(); ++t) downstream += plan.replicas(t);
  const int64_t r = plan.replicas(stage);
  const int64_t per_step = plan.global_batch > 0 ? (plan.global_batch + r - 1) / r : INT64_MAX;
  if (plan.schedule == Schedule::kGPipe) return static_cast<int32_t>(std::min<int64_t>(per_step, INT32_MAX));
  return static_cast<int32_t>(std::min(2 * ((downstream + r - 1) / r), per_step));
}

Placement FirstReplicaPlacement(const ParallelPlan& plan) {
  Placement p;
  p.device.reserve(plan.stage_of_op.size());
  for (int32_t s : plan.stage_of_op) p.device.push_back(plan.stages[s].devices.front());
  return p;
}

ParallelPlan OneStagePlan(const Graph& graph, std::vector<DeviceId> devices) {
  ParallelPlan plan;
  plan.stage_of_op.assign(graph.num_ops(), 0);
  plan.stages.push_back(PlanStage{std::move(devices)});
  return plan;
}

ParallelPlan PlanFromPlacement(const Graph& graph, const Placement& placement) {
  constexpr int32_t kUnseen = std::numeric_limits<int32_t>::max();
  DeviceId most = 0;
  for (DeviceId d : placement.device) most = std::max(most, d + 1);
  std::vector<int32_t> first_rank(most, kUnseen);
  for (OpId op = 0; op < graph.num_ops(); ++op) {
    first_rank[placement.device[op]] = std::min(first_rank[placement.device[op]], graph.topo_rank(op));
  }
  std::vector<DeviceId> used;
  for (DeviceId d = 0; d < most; ++d) {
    if (first_rank[d] != kUnseen) used.push_back(d);
  }
  std::sort(used.begin(), used.end(), [&](DeviceId a, DeviceId b) { return first_rank[a] < first_rank[b]; });
  std::vector<int32_t> stage_of_device(most, -1);
  ParallelPlan plan;
  for (DeviceId d : used) {
    stage_of_device[d] = plan.num_stages();
    plan.stages.push_back(PlanStage{{d}});
  }
  plan.stage_of_op.reserve(placement.device.size());
  for (DeviceId d : placement.device) plan.stage_of_op.push_back(stage_of_device[d]);
  return plan;
}

}  // namespace placement
