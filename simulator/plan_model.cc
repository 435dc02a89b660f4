#include "simulator/plan_model.h"

#include <algorithm>
#include <cfloat>
#include <map>
#include <numeric>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"
#include "graph/units.h"
#include "simulator/pipedream_model.h"
#include "simulator/plan_facts.h"

namespace placement {
namespace {

using plan_internal::PlanFacts;
using plan_internal::StageFacts;

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// What the stages' tensors keep each link resource busy per sample, the mean time of a micro-batch's transfers
// from each stage to each other (by (from, to)), and per resource how much of its busy time it shares with each
// other resource (the transfers holding both) and its shortest transfer.
struct Traffic {
  std::vector<double> busy;
  std::map<std::pair<int32_t, int32_t>, double> seconds;
  std::vector<std::map<int32_t, double>> shared;
  std::vector<double> shortest;
};

void NoteShared(absl::Span<const int32_t> path, double seconds, double per_sample, Traffic& out) {
  for (int32_t r : path) {
    out.shortest[r] = std::min(out.shortest[r], seconds);
    for (int32_t q : path) {
      if (q != r) out.shared[r][q] += per_sample;
    }
  }
}

Traffic StageTraffic(const CostModel& costs, const ParallelPlan& plan, const PlanFacts& f) {
  const Topology& t = costs.topology();
  Traffic out;
  out.busy.assign(t.num_resources(), 0);
  out.shared.resize(t.num_resources());
  out.shortest.assign(t.num_resources(), DBL_MAX);
  for (const plan_internal::StageTraffic& x : f.traffic) {
    const std::vector<DeviceId>& from = plan.stages[x.from].devices;
    const std::vector<DeviceId>& to = plan.stages[x.to].devices;
    // Micro-batch m goes from replica m % |from| to replica m % |to|: the pairs repeat every lcm micro-batches.
    const int64_t cycle = std::lcm<int64_t>(from.size(), to.size());
    double total = 0;
    for (int64_t m = 0; m < cycle; ++m) {
      const DeviceId a = from[m % from.size()], b = to[m % to.size()];
      if (a == b) continue;
      const Path& p = t.path(a, b);
      const double seconds = x.SecondsOn(p);
      total += seconds;
      for (int32_t r : t.path_resources(p)) out.busy[r] += seconds / static_cast<double>(cycle);
      NoteShared(t.path_resources(p), seconds, seconds / static_cast<double>(cycle), out);
    }
    out.seconds[{x.from, x.to}] = total / static_cast<double>(cycle);
  }
  return out;
}

// Micro-batches a replica of stage s keeps between their forward and backward passes, and weight versions.
void InFlight(const ParallelPlan& plan, int32_t s, StageScore& score) {
  score.in_flight = InFlightMicroBatches(plan, s);
  // Without a flush a forward pass uses weights up to in_flight + 1 rounds old (plan_simulation.h): a version per
  // micro-batch in flight and the latest.
  score.weight_versions = plan.global_batch == 0 ? score.in_flight + 1 : 1;
}

// The seconds the stage's bucketed all-reduce runs past the end of its backward pass: bucket after bucket, each
// starting once the backward has produced it and the bucket before it is done.
// A graph whose gradients no update reads (a profile without the optimizer) has no buckets: its all-reduce
// follows the backward pass.
double ExposedAllReduce(const StageFacts& f, int32_t replicas, double whole) {
  if (replicas < 2) return 0;
  if (f.buckets.empty()) return whole;
  double finish = 0;
  for (const plan_internal::GradientBucket& b : f.buckets) finish = std::max(finish, b.ready) + b.allreduce.seconds;
  return std::max(0.0, finish - f.backward);
}

// A stage's replicas split what the sharding says, 1/r each. ZeRO-1 and ZeRO-2 move what an all-reduce does (a
// reduce-scatter of the gradients, an all-gather of the updated weights) and keep no bucket copy past ZeRO-1;
// ZeRO-3 gathers each operator's weights before its forward and again before its backward (half an all-reduce
// each, every micro-batch, prefetched while the operators before it run, so a pass takes at least its gather)
// and holds the largest operator's weights whole while it runs; its reduce-scatter and the last gathers at the
// end of the step are counted as the all-reduce they replace, so it never comes out faster than ZeRO-2.
void Shard(Sharding sharding, const StageFacts& f, int64_t gradient_bytes, StageScore& score) {
  if (sharding == Sharding::kNone) return;
  const int64_t r = score.replicas;
  const auto share = [r](int64_t bytes) { return (bytes + r - 1) / r; };
  score.optimizer_bytes = share(f.optimizer_bytes);
  if (sharding == Sharding::kOptimizer) return;
  score.gradient_bytes = share(gradient_bytes);
  if (sharding == Sharding::kGradients) return;
  score.weight_bytes = share(f.weight_bytes);
  score.working_bytes += f.largest_weight_bytes;
  const double gather = score.allreduce / 2;
  score.forward = std::max(score.forward, gather);
  score.backward = std::max(score.backward, gather);
}

StageScore ScoreStage(const CostModel& costs, const ParallelPlan& plan, const PlanFacts& facts, int32_t s,
                      AllReducePlan* allreduce) {
  const StageFacts& f = facts.stages[s];
  // An inference graph has no gradients: its replicas share nothing and keep one copy of the weights.
  const int64_t gradient_bytes = facts.training ? f.weight_bytes : 0;
  StageScore score;
  score.replicas = plan.replicas(s);
  score.forward = f.forward;
  score.backward = f.backward;
  score.update = f.update;
  if (facts.training)
    *allreduce = PlanAllReduce(costs.topology(), plan.stages[s].devices, static_cast<double>(gradient_bytes));
  score.allreduce = allreduce->seconds;
  score.allreduce_kind = allreduce->kind;
  if (facts.training && plan.global_batch > 0)
    score.allreduce_exposed = ExposedAllReduce(f, score.replicas, allreduce->seconds);
  score.weight_bytes = f.weight_bytes;
  score.optimizer_bytes = f.optimizer_bytes;
  score.stash_bytes = f.stash_bytes;
  score.working_bytes = f.working_bytes;
  InFlight(plan, s, score);
  if (!facts.training) score.weight_versions = 1;
  const int64_t bucket_bytes = score.replicas > 1 && plan.global_batch > 0 ? gradient_bytes : 0;
  score.gradient_bytes = gradient_bytes + bucket_bytes;
  if (facts.training && score.replicas > 1) Shard(plan.sharding, f, gradient_bytes, score);
  if (facts.training && plan.recompute == Recompute::kFull) {
    // Only the segments' inputs stay; one segment's tensors live again while it is recomputed, once more its
    // forward's time.
    score.stash_bytes = f.checkpoint_bytes;
    score.working_bytes += f.segment_bytes;
    score.backward += f.forward;
  }
  score.memory_bytes = score.weight_bytes * score.weight_versions + score.gradient_bytes + score.optimizer_bytes +
                       score.stash_bytes * score.in_flight + score.working_bytes;
  for (DeviceId d : plan.stages[s].devices) {
    const int64_t cap = costs.topology().device(d).memory_bytes;
    if (cap > 0 && (score.capacity == 0 || cap < score.capacity)) score.capacity = cap;
  }
  return score;
}

// One step of the flushed schedule: a micro-batch's way there and back, the bottleneck's other micro-batches,
// then what the syncs of the stages that finish last add.
double FlushStep(const ParallelPlan& plan, const std::vector<StageScore>& st, const Traffic& traffic) {
  const auto hop = [&](int32_t a, int32_t b) {
    const auto it = traffic.seconds.find({a, b});
    return it == traffic.seconds.end() ? 0.0 : it->second;
  };
  double way = 0, others = 0;
  for (int32_t s = 0; s < plan.num_stages(); ++s) {
    const double compute = st[s].forward + st[s].backward;
    way += compute + (s + 1 < plan.num_stages() ? hop(s, s + 1) + hop(s + 1, s) : 0);
    others = std::max(others, static_cast<double>(CeilDiv(plan.global_batch, st[s].replicas) - 1) * compute);
  }
  double tail = 0, back = 0;  // back: how long before the first stage's last backward stage s finishes its own
  for (int32_t s = 0; s < plan.num_stages(); ++s) {
    tail = std::max(tail, st[s].update + st[s].allreduce_exposed - back);
    back += st[s].backward + (s + 1 < plan.num_stages() ? hop(s + 1, s) : 0);
  }
  return way + others + tail;
}

void ScoreDevices(const CostModel& costs, const ParallelPlan& plan, PlanEvaluation& ev) {
  ev.devices.assign(costs.topology().num_devices(), DeviceScore{});
  for (DeviceId d = 0; d < costs.topology().num_devices(); ++d) {
    ev.devices[d].capacity = costs.topology().device(d).memory_bytes;  // a device the plan leaves idle has it too
  }
  const double per_sample = plan.global_batch > 0 ? 1.0 / plan.global_batch : 0;
  for (int32_t s = 0; s < plan.num_stages(); ++s) {
    const StageScore& x = ev.stages[s];
    const double mb =
        per_sample > 0 ? static_cast<double>(CeilDiv(plan.global_batch, x.replicas)) * per_sample : 1.0 / x.replicas;
    for (DeviceId d : plan.stages[s].devices) {
      DeviceScore& score = ev.devices[d];
      score.busy = mb * (x.forward + x.backward) + (per_sample > 0 ? per_sample : 1.0 / x.replicas) * x.update;
      score.load = x.period;
      score.peak_memory = x.memory_bytes;
      score.oom = score.capacity > 0 && score.peak_memory > score.capacity;
      ev.fits_memory &= !score.oom;
    }
  }
}

// Per link resource, the time per sample it allows: its load, or, without a global batch, the stages' tensors it
// carries plus, for each other resource some of them also need, its share of them times the seconds an all-reduce
// that leaves this resource free keeps that one unavailable (SecondsUnavailable): a host's network interface idles
// while the interfaces at the other end of its transfers carry another stage's all-reduce. With a flush the
// all-reduces run after the step's transfers.
std::vector<double> LinkPeriods(const Topology& t, const Traffic& traffic, const std::vector<double>& boundary,
                                const std::vector<AllReducePlan>& allreduces, const std::vector<double>& rounds,
                                bool flush) {
  std::vector<double> period = traffic.busy;
  const bool shared =
      std::any_of(traffic.shared.begin(), traffic.shared.end(), [](const auto& m) { return !m.empty(); });
  if (flush || !shared) return period;
  std::vector<std::vector<double>> uses(allreduces.size(), std::vector<double>(t.num_resources(), 0));
  for (size_t s = 0; s < allreduces.size(); ++s) AddLinkBusy(t, allreduces[s], 1.0, uses[s]);
  for (int32_t r = 0; r < t.num_resources(); ++r) {
    if (boundary[r] == 0) continue;
    double waits = 0;
    for (const auto& [other, seconds] : traffic.shared[r]) {
      for (size_t s = 0; s < allreduces.size(); ++s) {
        if (uses[s][r] > 0 || uses[s][other] == 0) continue;
        waits += seconds / boundary[r] * rounds[s] * SecondsUnavailable(t, allreduces[s], other, traffic.shortest[r]);
      }
    }
    period[r] = std::max(period[r], boundary[r] + waits);
  }
  return period;
}

// Our own model: periods of the stages and of the link resources, the flush when there is a global batch.
void ScoreOwn(const CostModel& costs, const ParallelPlan& plan, const PlanFacts& f, PlanEvaluation& ev) {
  const Topology& t = costs.topology();
  Traffic traffic = StageTraffic(costs, plan, f);
  const std::vector<double> boundary = traffic.busy;
  std::vector<AllReducePlan> allreduces(plan.num_stages());
  std::vector<double> syncs(plan.num_stages());
  const double g = static_cast<double>(plan.global_batch);
  for (int32_t s = 0; s < plan.num_stages(); ++s) {
    AllReducePlan& allreduce = allreduces[s];
    StageScore x = ScoreStage(costs, plan, f, s, &allreduce);
    const double rounds = g > 0 ? 1.0 / g : 1.0 / x.replicas;  // syncs per sample
    const double per_sample_compute =
        g > 0 ? static_cast<double>(CeilDiv(plan.global_batch, x.replicas)) / g : 1.0 / x.replicas;
    // With a flush the all-reduce ends the step (FlushStep). Without, a round's all-reduce runs while the replica
    // goes on with the next in_flight rounds, which then wait for it: it holds the stage back only when it takes
    // longer than they do.
    const double compute = per_sample_compute * (x.forward + x.backward) + rounds * x.update;
    x.period = g > 0 ? compute + rounds * x.allreduce_exposed : std::max(compute, rounds * x.allreduce / x.in_flight);
    AddLinkBusy(t, allreduce, rounds, traffic.busy);
    syncs[s] = rounds;
    ev.stages.push_back(x);
  }
  ev.link_busy = traffic.busy;
  const std::vector<double> links = LinkPeriods(t, traffic, boundary, allreduces, syncs, g > 0);
  for (int32_t s = 0; s < plan.num_stages(); ++s) {
    if (ev.stages[s].period > ev.time_per_sample) {
      ev.time_per_sample = ev.stages[s].period;
      ev.bottleneck = absl::StrCat("stage ", s + 1);
    }
  }
  for (int32_t r = 0; r < t.num_resources(); ++r) {
    if (links[r] > ev.time_per_sample) {
      ev.time_per_sample = links[r];
      ev.bottleneck = absl::StrCat("link ", t.resource(r).name);
    }
  }
  if (g > 0) {
    ev.step_time = std::max(ev.time_per_sample * g, FlushStep(plan, ev.stages, traffic));
    ev.time_per_sample = ev.step_time / g;
  }
}

absl::Status ScorePipeDreamPlan(const CostModel& costs, const ParallelPlan& plan, const PlanFacts& f,
                                PlanEvaluation& ev) {
  absl::StatusOr<PipeDreamScore> pd = ScorePipeDream(costs, plan, f);
  if (!pd.ok()) return pd.status();
  for (int32_t s = 0; s < plan.num_stages(); ++s) {
    AllReducePlan allreduce;
    StageScore x = ScoreStage(costs, plan, f, s, &allreduce);
    x.period = pd->stage_times[s];
    ev.stages.push_back(x);
  }
  ev.time_per_sample = pd->value;
  ev.bottleneck = pd->bottleneck;
  if (plan.global_batch > 0) ev.step_time = pd->value * static_cast<double>(plan.global_batch);
  return absl::OkStatus();
}

// Every operator's fastest time over the devices, per sample. With a global batch of G micro-batches the optimizer
// updates run once a step on each replica, at least once: a G-th of them per sample.
double WorkBound(const CostModel& costs, int64_t global_batch) {
  double total = 0;
  const double update_share = global_batch > 0 ? 1.0 / static_cast<double>(global_batch) : 1.0;
  for (OpId v = 0; v < costs.graph().num_ops(); ++v)
    total += costs.fastest_time(v) * (IsOptimizerUpdate(costs.graph(), v) ? update_share : 1.0);
  const double rounding = 4.0 * (costs.graph().num_ops() + costs.topology().num_devices()) * DBL_EPSILON;
  return total / costs.topology().num_devices() * std::max(0.0, 1.0 - rounding);
}

}  // namespace

absl::StatusOr<Evaluation> EvaluateUnder(const CostModel& costs, const Placement& placement, Objective objective,
                                         const SimulatorConfig& config, CostModelKind kind) {
  if (kind != CostModelKind::kPipeDream) return Evaluate(costs, placement, objective, config, kind);
  RETURN_IF_ERROR(CheckCostModel(kind, objective));
  if (absl::Status s = ValidatePlacement(costs, placement); !s.ok()) return s;
  absl::StatusOr<PlanEvaluation> ev = EvaluatePlan(costs, PlanFromPlacement(costs.graph(), placement), kind);
  if (!ev.ok()) return ev.status();
  return PlanAsEvaluation(*ev);
}

bool IsOptimizerUpdate(const Graph& graph, OpId op) { return graph.is_backward(op) && graph.num_outputs(op) == 0; }

CheckpointShare WholeStepCheckpoints(const CostModel& costs) {
  ParallelPlan plan = OneStagePlan(costs.graph(), {0});
  plan.global_batch = 1;
  plan.recompute = Recompute::kFull;
  const plan_internal::PlanFacts facts = plan_internal::GatherPlanFacts(costs, plan);
  const plan_internal::StageFacts& f = facts.stages[0];
  if (!facts.training || f.stash_bytes <= 0) return CheckpointShare{};
  return CheckpointShare{static_cast<double>(f.checkpoint_bytes) / static_cast<double>(f.stash_bytes),
                         f.segment_bytes};
}

absl::StatusOr<PlanEvaluation> EvaluatePlan(const CostModel& costs, const ParallelPlan& plan, CostModelKind kind) {
  if (absl::Status s = ValidatePlan(costs, plan); !s.ok()) return s;
  const PlanFacts facts = plan_internal::GatherPlanFacts(costs, plan);
  PlanEvaluation ev;
  ev.cost_model = kind;
  if (kind == CostModelKind::kPipeDream) {
    if (absl::Status s = ScorePipeDreamPlan(costs, plan, facts, ev); !s.ok()) return s;
  } else {
    ScoreOwn(costs, plan, facts, ev);
  }
  ScoreDevices(costs, plan, ev);
  if (kind == CostModelKind::kPipeDream) {
    ev.memory_checked = false;
    ev.fits_memory = true;
    for (DeviceScore& d : ev.devices) d.oom = false;
  }
  ev.lower_bound = WorkBound(costs, plan.global_batch);
  return ev;
}

absl::Status PlanMemoryStatus(const CostModel& costs, const ParallelPlan& plan, const PlanEvaluation& ev,
                              bool enforced) {
  if (enforced && !ev.memory_checked) return absl::OkStatus();
  int32_t worst = -1;
  int64_t short_by = 0;
  for (int32_t s = 0; s < static_cast<int32_t>(ev.stages.size()); ++s) {
    const StageScore& x = ev.stages[s];
    if (x.capacity > 0 && x.memory_bytes - x.capacity > short_by) {
      short_by = x.memory_bytes - x.capacity;
      worst = s;
    }
  }
  if (worst < 0) return absl::OkStatus();
  const StageScore& x = ev.stages[worst];
  return absl::FailedPreconditionError(
      absl::StrCat(DescribeStage(costs, plan, worst), " does not fit memory: it needs ",
                   FormatBytes(static_cast<double>(x.memory_bytes)), " per device (weights ",
                   FormatBytes(static_cast<double>(x.weight_bytes)), " x ", x.weight_versions,
                   " versions, gradients ", FormatBytes(static_cast<double>(x.gradient_bytes)),
                   x.gradient_bytes > x.weight_bytes ? " with their bucket copy" : "", ", optimizer state ",
                   FormatBytes(static_cast<double>(x.optimizer_bytes)),
                   plan.sharding != Sharding::kNone ? absl::StrCat(" (", ShardingName(plan.sharding), ")") : "",
                   ", activations ", FormatBytes(static_cast<double>(x.stash_bytes)), " x ", x.in_flight,
                   " micro-batches in flight), ", FormatBytes(static_cast<double>(short_by)), " more than its ",
                   FormatBytes(static_cast<double>(x.capacity))));
}

Evaluation PlanAsEvaluation(const PlanEvaluation& plan) {
  Evaluation ev;
  ev.objective = Objective::kThroughput;
  ev.value = plan.time_per_sample;
  ev.bound.value = ev.bound.work_per_device = plan.lower_bound;
  ev.ratio = plan.lower_bound > 0 ? plan.time_per_sample / plan.lower_bound : 1.0;
  ev.fits_memory = plan.fits_memory;
  ev.devices = plan.devices;
  return ev;
}

}  // namespace placement
