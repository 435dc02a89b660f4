#include "simulator/plan_facts.h"

#include <algorithm>
#include <map>
#include <utility>

#include "simulator/plan_model.h"
#include "simulator/recompute.h"

namespace placement::plan_internal {
namespace {

// Per stage, one device of each kind its group has: the replicas of one kind take the same times.
std::vector<std::vector<DeviceId>> KindRepresentatives(const Topology& t, const ParallelPlan& plan) {
  std::vector<std::vector<DeviceId>> out(plan.stages.size());
  for (size_t s = 0; s < plan.stages.size(); ++s) {
    for (DeviceId d : plan.stages[s].devices) {
      const bool seen =
          std::any_of(out[s].begin(), out[s].end(), [&](DeviceId e) { return t.kind_index(e) == t.kind_index(d); });
      if (!seen) out[s].push_back(d);
    }
  }
  return out;
}

// Forward, backward and update time per stage on its slowest kind of replica, and the work on its first one.
void GatherTimes(const CostModel& costs, const ParallelPlan& plan, PlanFacts& f) {
  const Graph& g = costs.graph();
  const std::vector<std::vector<DeviceId>> kinds = KindRepresentatives(costs.topology(), plan);
  std::vector<std::vector<StageFacts>> per_kind(plan.stages.size());
  // The host's time to issue each pass (Device::host_op_overhead): a pass takes at least that, however short its
  // kernels, as in the simulation, where the host issues them ahead of the device.
  std::vector<std::vector<std::pair<double, double>>> host(plan.stages.size());
  for (size_t s = 0; s < plan.stages.size(); ++s) {
    per_kind[s].resize(kinds[s].size());
    host[s].assign(kinds[s].size(), {0.0, 0.0});
  }
  for (OpId op = 0; op < g.num_ops(); ++op) {
    const int32_t s = plan.stage_of_op[op];
    for (size_t k = 0; k < kinds[s].size(); ++k) {
      const double t = costs.op_time(op, kinds[s][k]);
      StageFacts& x = per_kind[s][k];
      (IsOptimizerUpdate(g, op) ? x.update : g.is_backward(op) ? x.backward : x.forward) += t;
      (g.is_backward(op) ? host[s][k].second : host[s][k].first) += costs.host_time(op, kinds[s][k]);
    }
    f.stages[s].work += costs.op_time(op, plan.stages[s].devices.front());
  }
  for (size_t s = 0; s < plan.stages.size(); ++s) {
    for (size_t k = 0; k < kinds[s].size(); ++k) {
      per_kind[s][k].backward_kernels = per_kind[s][k].backward;
      per_kind[s][k].forward = std::max(per_kind[s][k].forward, host[s][k].first);
      per_kind[s][k].backward = std::max(per_kind[s][k].backward, host[s][k].second);
    }
  }
  for (size_t s = 0; s < plan.stages.size(); ++s) {
    const auto slowest =
        std::max_element(per_kind[s].begin(), per_kind[s].end(), [](const StageFacts& a, const StageFacts& b) {
          return a.forward + a.backward + a.update < b.forward + b.backward + b.update;
        });
    f.stages[s].forward = slowest->forward;
    f.stages[s].backward = slowest->backward;
    f.stages[s].backward_kernels = slowest->backward_kernels;
    f.stages[s].update = slowest->update;
  }
}

// The distinct stages of the readers of `u`'s output `output` along edges [first, last), with `want` deciding
// which readers count.
template <typename Want>
std::vector<int32_t> ReaderStages(const Graph& g, const ParallelPlan& plan, EdgeId first, EdgeId last, Want want) {
  std::vector<int32_t> stages;
  for (EdgeId e = first; e < last; ++e) {
    const OpId dst = g.edge(e).dst;
    if (!want(dst)) continue;
    const int32_t s = plan.stage_of_op[dst];
    if (std::find(stages.begin(), stages.end(), s) == stages.end()) stages.push_back(s);
  }
  return stages;
}

using TrafficMap = std::map<std::pair<int32_t, int32_t>, StageTraffic>;

// One output tensor of an operator in stage a, read along edges [first, last): what it sends other stages and
// what their backward passes keep of it.
void AddTensor(const Graph& g, const ParallelPlan& plan, OpId u, EdgeId first, EdgeId last, PlanFacts& f,
               TrafficMap& traffic) {
  const int32_t a = plan.stage_of_op[u];
  const OutputTensor& tensor = g.tensor(g.first_output(u) + g.edge(first).src_output);
  for (int32_t b : ReaderStages(g, plan, first, last, [](OpId) { return true; })) {
    if (b == a) continue;
    StageTraffic& x = traffic[{a, b}];
    x.from = a;
    x.to = b;
    if (tensor.transfer_seconds >= 0) {
      x.measured_seconds += tensor.transfer_seconds;
    } else {
      ++x.derived_count;
      x.derived_bytes += static_cast<double>(tensor.bytes);
    }
  }
  if (g.is_backward(u)) return;
  for (int32_t b : ReaderStages(g, plan, first, last, [&](OpId v) { return g.is_backward(v); })) {
    f.stages[b].stash_bytes += tensor.bytes;
  }
}

// Bytes per stage and traffic between stages, tensor by tensor.
void GatherTensors(const CostModel& costs, const ParallelPlan& plan, PlanFacts& f) {
  const Graph& g = costs.graph();
  TrafficMap traffic;
  for (OpId u = 0; u < g.num_ops(); ++u) {
    StageFacts& own = f.stages[plan.stage_of_op[u]];
    (g.is_backward(u) ? own.optimizer_bytes : own.weight_bytes) += g.param_bytes(u);
    if (!g.is_backward(u)) own.largest_weight_bytes = std::max(own.largest_weight_bytes, g.param_bytes(u));
    for (EdgeId first = g.out_begin(u), last; first < g.out_end(u); first = last) {
      last = first + 1;
      while (last < g.out_end(u) && g.edge(last).src_output == g.edge(first).src_output) ++last;
      AddTensor(g, plan, u, first, last, f, traffic);
    }
    int64_t outputs = 0;
    for (TensorId t = g.first_output(u); t < g.first_output(u + 1); ++t) outputs += g.tensor(t).bytes;
    own.working_bytes = std::max(own.working_bytes, outputs + g.temp_bytes(u));
  }
  for (auto& [key, x] : traffic) f.traffic.push_back(x);
}

// The stage's weight gradients in buckets, by the order of the backward operators (their ids: autograd's order,
// graph/training.h), each bucket ready when the stage's backward pass, run in that order at the slowest replica's
// pace, has produced its last gradient (times taken on the first replica, then scaled to the slowest one's); and
// each bucket's all-reduce over the stage's group.
void GatherBuckets(const CostModel& costs, const ParallelPlan& plan, PlanFacts& f) {
  const Graph& g = costs.graph();
  std::vector<double> elapsed(plan.stages.size(), 0);
  for (OpId op = 0; op < g.num_ops(); ++op) {
    if (!g.is_backward(op) || IsOptimizerUpdate(g, op)) continue;
    const int32_t s = plan.stage_of_op[op];
    StageFacts& x = f.stages[s];
    elapsed[s] += costs.op_time(op, plan.stages[s].devices.front());
    int64_t gradient = 0;
    for (EdgeId e = g.out_begin(op); e < g.out_end(op); ++e) {
      if (IsOptimizerUpdate(g, g.edge(e).dst)) gradient += g.edge(e).bytes;
    }
    if (gradient == 0) continue;
    const int64_t cap = x.buckets.size() <= 1 ? kFirstBucketBytes : kBucketBytes;
    if (x.buckets.empty() || x.buckets.back().bytes >= cap) x.buckets.emplace_back();
    GradientBucket& b = x.buckets.back();
    b.bytes += gradient;
    b.producers.push_back(op);
    b.ready = elapsed[s];
  }
  for (size_t s = 0; s < plan.stages.size(); ++s) {
    const double scale = elapsed[s] > 0 ? f.stages[s].backward / elapsed[s] : 0;
    for (GradientBucket& b : f.stages[s].buckets) {
      b.ready *= scale;
      b.allreduce = PlanAllReduce(costs.topology(), plan.stages[s].devices, static_cast<double>(b.bytes));
    }
  }
}

}  // namespace

PlanFacts GatherPlanFacts(const CostModel& costs, const ParallelPlan& plan) {
  PlanFacts f;
  const Graph& g = costs.graph();
  f.training = g.has_backward();
  f.stages.resize(plan.stages.size());
  GatherTimes(costs, plan, f);
  GatherTensors(costs, plan, f);
  if (f.training) GatherBuckets(costs, plan, f);
  if (f.training && plan.recompute == Recompute::kFull) {
    std::vector<int32_t> in_flight(plan.stages.size());
    for (int32_t s = 0; s < plan.num_stages(); ++s) in_flight[s] = InFlightMicroBatches(plan, s);
    const std::vector<StageCheckpoints> checkpoints = PlanCheckpoints(g, plan, in_flight);
    for (size_t s = 0; s < plan.stages.size(); ++s) {
      f.stages[s].checkpoint_bytes = checkpoints[s].kept_bytes;
      f.stages[s].segment_bytes = checkpoints[s].transient_bytes;
      f.stages[s].segments = checkpoints[s].segments;
    }
  }
  return f;
}

}  // namespace placement::plan_internal
