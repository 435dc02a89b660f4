// SearchOwn (plan_search.h): our model's chains of data-parallel stages over the accelerators in host-major order.
#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "absl/status/status.h"
#include "policy/parallel/plan_search.h"
#include "simulator/collectives.h"

namespace placement::parallel {
namespace {

// What a stage costs in our model, as far as the DP can tell from two ideals, a device offset and a replica
// count; the plan it finds is scored exactly afterwards (simulator/plan_model.h).
class OwnCosts {
 public:
  OwnCosts(const CostModel& costs, const PlanLattice& l, const PlanSearchOptions& o) : l_(l), o_(o) {
    for (const std::vector<DeviceId>& host : AcceleratorsByHost(costs, l)) {
      for (DeviceId d : host) {
        devices_.push_back(d);
        host_.push_back(costs.topology().device(d).host);
      }
    }
    n_ = static_cast<int32_t>(devices_.size());
    const Topology& t = costs.topology();
    across_hosts_ = t.data_parallel_across_hosts();
    capacity_ = l.model().accelerator_bytes;
    for (OpId op = 0; op < costs.graph().num_ops() && !training_; ++op) training_ = costs.graph().is_backward(op);
    Links(t);
    AllReduces(t);
  }

  const std::vector<DeviceId>& devices() const { return devices_; }
  int32_t size() const { return n_; }

  double operator()(int64_t i, int64_t j, int32_t offset, int32_t r, bool) const {
    if (!across_hosts_ && host_[offset] != host_[offset + r - 1]) return kNoPlan;
    if (o_.global_batch > 0 && r > o_.global_batch) return kNoPlan;
    const IdealSet& s = l_.ideals;
    const double work = s.work(j) - s.work(i);
    const double grad = training_ ? l_.weight_bytes[j] - l_.weight_bytes[i] : 0;
    const size_t k = static_cast<size_t>(offset) * (n_ + 1) + r;
    const double allreduce = r > 1 ? ar_latency_[k] + ar_per_byte_[k] * grad : 0;
    const double g = static_cast<double>(o_.global_batch);
    const double compute = g > 0 ? (std::ceil(g / r) * work + allreduce) / g : (work + allreduce) / r;
    // A replica sends about half of what crosses its stage (activations on, gradients back); a host boundary
    // next to the group puts all of a cut's traffic on the network interfaces.
    double link = 0.5 * s.Comm(i, j) / (r * inside_[k]);
    if (offset > 0 && host_[offset - 1] != host_[offset]) link = std::max(link, s.cross_weight(i) / between_);
    if (offset + r < n_ && host_[offset + r - 1] != host_[offset + r]) link = std::max(link, s.cross_weight(j) / between_);
    if (!Fits(i, j, offset, r)) return kNoPlan;
    return std::max(compute, link);
  }

 private:
  bool Fits(int64_t i, int64_t j, int32_t offset, int32_t r) const {
    if (capacity_ <= 0) return true;
    const int64_t per_step = o_.global_batch > 0 ? (o_.global_batch + r - 1) / r : std::numeric_limits<int64_t>::max();
    const int64_t one_f_one_b = std::min<int64_t>(2 * ((n_ - offset + r - 1) / r), per_step);  // InFlightMicroBatches
    const double in_flight = static_cast<double>(o_.schedule == Schedule::kGPipe ? per_step : one_f_one_b);
    const double versions = training_ && o_.global_batch == 0 ? in_flight + 1 : 1;
    const double weights = l_.weight_bytes[j] - l_.weight_bytes[i];
    const double bytes = weights * versions + (training_ ? weights : 0) + l_.optimizer_bytes[j] - l_.optimizer_bytes[i] +
                         (l_.stash_bytes[j] - l_.stash_bytes[i]) * in_flight + l_.working_bytes;
    return bytes <= static_cast<double>(capacity_);
  }

  // Per (offset, replicas): the slowest path between neighbours from the device before the group to the one
  // after it (where its tensors go); and the slowest path between hosts.
  void Links(const Topology& t) {
    constexpr double kNoLink = 1e300;
    std::vector<double> next(std::max(n_ - 1, 0));
    for (int32_t k = 0; k + 1 < n_; ++k) next[k] = t.path(devices_[k], devices_[k + 1]).bandwidth;
    inside_.assign(static_cast<size_t>(n_ + 1) * (n_ + 1), kNoLink);
    for (int32_t a = 0; a < n_; ++a) {
      for (int32_t r = 1; a + r <= n_; ++r) {
        double slowest = kNoLink;
        for (int32_t k = std::max(0, a - 1); k < std::min(n_ - 1, a + r); ++k) slowest = std::min(slowest, next[k]);
        inside_[static_cast<size_t>(a) * (n_ + 1) + r] = slowest;
      }
    }
    between_ = kNoLink;
    for (int32_t a = 0; a < n_; ++a) {
      for (int32_t b = 0; b < n_; ++b) {
        if (host_[a] != host_[b]) between_ = std::min(between_, t.path(devices_[a], devices_[b]).bandwidth);
      }
    }
  }

  // All-reduce time over each contiguous group as latency + bytes x seconds per byte.
  void AllReduces(const Topology& t) {
    constexpr double kProbe = 1e9;
    ar_latency_.assign(static_cast<size_t>(n_ + 1) * (n_ + 1), 0);
    ar_per_byte_.assign(ar_latency_.size(), 0);
    for (int32_t a = 0; a < n_; ++a) {
      for (int32_t r = 2; a + r <= n_; ++r) {
        const absl::Span<const DeviceId> group(&devices_[a], r);
        const double none = PlanAllReduce(t, group, 0).seconds;
        const size_t k = static_cast<size_t>(a) * (n_ + 1) + r;
        ar_latency_[k] = none;
        ar_per_byte_[k] = (PlanAllReduce(t, group, kProbe).seconds - none) / kProbe;
      }
    }
  }

  const PlanLattice& l_;
  const PlanSearchOptions o_;
  std::vector<DeviceId> devices_;
  std::vector<int32_t> host_;
  int32_t n_ = 0;
  bool across_hosts_ = true, training_ = false;
  int64_t capacity_ = 0;
  std::vector<double> inside_, ar_latency_, ar_per_byte_;
  double between_ = 0;
};

}  // namespace

absl::StatusOr<PlanSearchResult> SearchOwn(const CostModel& costs, const PlanLattice& l, const PlanSearchOptions& o,
                                           const Budget& budget) {
  const OwnCosts cost(costs, l, o);
  const IdealSet& s = l.ideals;
  const int32_t n = cost.size();
  const int32_t data_replicas = o.global_batch > 0 ? static_cast<int32_t>(std::min<int64_t>(n, o.global_batch)) : n;
  const int32_t max_replicas = o.parallelism == Parallelism::kPipeline ? 1 : data_replicas;
  std::vector<ReplicaStep> best;
  double upper = kNoPlan;
  for (int32_t r = max_replicas; r >= 1 && o.parallelism != Parallelism::kPipeline; --r) {
    const double v = cost(s.empty(), s.full(), 0, r, true);
    if (v < upper) {
      upper = v;
      best = {ReplicaStep{s.empty(), s.full(), 0, r}};
    }
    if (o.parallelism == Parallelism::kData) break;
  }
  PlanSearchResult out;
  if (o.parallelism != Parallelism::kData) {
    ReplicaDpOptions dp_options{s.empty(), s.full(), n, max_replicas, 0, false};
    const double cap = std::isfinite(upper) ? upper : std::numeric_limits<double>::max();
    absl::StatusOr<double> found = GrowBound(s.work(s.full()) / n, cap, budget, [&](double bound) -> absl::StatusOr<double> {
      dp_options.bound = bound;
      ReplicaDp dp(s, dp_options, cost, budget);
      if (!dp.Run()) return budget.ExpiredStatus();
      out.pairs += dp.pairs();
      if (std::isfinite(dp.Best(s.full()))) best = dp.Chain(s.full());
      return dp.Best(s.full());
    }, &out.dp_runs);
    if (!found.ok()) return found.status();
    upper = std::min(upper, *found);
  }
  if (best.empty()) {
    return absl::FailedPreconditionError("no chain of stages fits the devices' memory (even with the most replicas)");
  }
  PlanSearchResult r;
  r.plan.stage_of_op = StagesOfOps(l, best);
  for (const ReplicaStep& step : best) {
    r.plan.stages.push_back(PlanStage{std::vector<DeviceId>(cost.devices().begin() + step.offset,
                                                            cost.devices().begin() + step.offset + step.replicas)});
  }
  r.dp_value = upper;
  r.pairs = out.pairs;
  r.dp_runs = out.dp_runs;
  r.proven_optimal = false;  // the DP's link figures are estimates; the plan is scored exactly afterwards
  return r;
}

}  // namespace placement::parallel
