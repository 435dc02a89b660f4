// SearchOwn (plan_search.h): our model's chains of data-parallel stages: over the accelerators in order on one host,
// and as blocks of whole hosts on several (host_dp.h).
#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "absl/status/status.h"
#include "policy/parallel/host_dp.h"
#include "policy/parallel/plan_search.h"
#include "simulator/collectives.h"
#include "simulator/plan_model.h"

namespace placement::parallel {
namespace {

constexpr double kNoLink = 1e300;

// What a stage costs in our model as far as the DP can tell from two ideals, where its devices start in each host
// and how many hosts replicate it; the plan found is scored exactly afterwards (simulator/plan_model.h).
class OwnCosts {
 public:
  OwnCosts(const CostModel& costs, const PlanLattice& l, const PlanSearchOptions& o, const HostLayout& layout)
      : l_(l), o_(o), h_(layout), n_(layout.per_host) {
    const Topology& t = costs.topology();
    capacity_ = l.model().accelerator_bytes;
    if (o.recompute == Recompute::kFull) checkpoints_ = WholeStepCheckpoints(costs);
    total_ = n_ * static_cast<int32_t>(h_.hosts.size());
    training_ = costs.graph().has_backward();
    Links(t);
    AllReduces(t);
  }

  // The stage i -> j on `r` devices from `offset` of each of `hosts` hosts.
  double Stage(int64_t i, int64_t j, int32_t offset, int32_t r, int32_t hosts) const {
    const int64_t replicas = int64_t{r} * hosts;
    if (o_.global_batch > 0 && replicas > o_.global_batch) return kNoPlan;
    const IdealSet& s = l_.ideals;
    const double work = s.work(j) - s.work(i);
    const double grad = training_ ? l_.weight_bytes[j] - l_.weight_bytes[i] : 0;
    const size_t k = Index(hosts, offset, r);
    const double allreduce = replicas > 1 ? ar_latency_[k] + ar_per_byte_[k] * grad : 0;
    const double g = static_cast<double>(o_.global_batch);
    const double compute = g > 0 ? (std::ceil(g / replicas) * work + allreduce) / g
                                 : std::max(work, allreduce / InFlight(offset, r, hosts)) / replicas;
    // A replica sends about half of what crosses its stage's two cuts (activations on, gradients back), on its
    // host's links: at most the crossing bytes of both ideals (exactly that for a chain), which costs no walk of
    // the crossing tensors as the stage's own boundary would.
    const double crossing = s.cross_weight(i) + s.cross_weight(j);
    double link = 0.5 * crossing / (replicas * inside_[static_cast<size_t>(offset) * (n_ + 1) + r]);
    // Its all-reduce between hosts on their network interfaces (Block adds those of the block's other stages).
    if (hosts > 1)
      link = std::max(link, 4.0 * (hosts - 1) / hosts * grad * (g > 0 ? 1.0 / g : 1.0 / replicas) / between_);
    if (!Fits(i, j, offset, r, hosts)) return kNoPlan;
    return std::max(compute, link);
  }

  // A block i -> j on `hosts` hosts: its inner pipeline, and what each host's network interface carries per
  // sample (both directions share one): the tensors crossing into and out of the block, and the all-reduces of
  // its stages between the hosts (4 (k - 1) / k of the gradients each, in and out, once a round).
  double Block(double inner, int64_t i, int64_t j, int32_t hosts, const std::vector<ReplicaStep>& chain) const {
    const IdealSet& s = l_.ideals;
    double bytes = ((i != s.empty() ? s.cross_weight(i) : 0) + (j != s.full() ? s.cross_weight(j) : 0)) / hosts;
    for (const ReplicaStep& step : training_&& hosts > 1 ? chain : std::vector<ReplicaStep>{}) {
      const double replicas = static_cast<double>(step.replicas) * hosts;
      const double rounds = o_.global_batch > 0 ? 1.0 / o_.global_batch : 1.0 / replicas;
      bytes += 4.0 * (hosts - 1) / hosts * (l_.weight_bytes[step.to] - l_.weight_bytes[step.from]) * rounds;
    }
    return std::max(inner, bytes / between_);
  }

 private:
  size_t Index(int32_t hosts, int32_t offset, int32_t r) const {
    return (static_cast<size_t>(hosts) * (n_ + 1) + offset) * (n_ + 1) + r;
  }

  // InFlightMicroBatches, with the devices after the stage's start as many as the hosts after it can hold.
  double InFlight(int32_t offset, int32_t r, int32_t hosts) const {
    const int64_t replicas = int64_t{r} * hosts;
    const int64_t after = int64_t{n_ - offset} * hosts + (static_cast<int64_t>(h_.hosts.size()) - hosts) * n_;
    const int64_t per_step = o_.global_batch > 0 ? (o_.global_batch + replicas - 1) / replicas : INT64_MAX;
    const int64_t one_f_one_b =
        std::min<int64_t>(2 * ((std::min<int64_t>(after, total_) + replicas - 1) / replicas), per_step);
    return static_cast<double>(o_.schedule == Schedule::kGPipe ? per_step : one_f_one_b);
  }

  // The plan model's memory per device (simulator/plan_model.h), the largest operator's working set and weights
  // standing for the stage's.
  bool Fits(int64_t i, int64_t j, int32_t offset, int32_t r, int32_t hosts) const {
    if (capacity_ <= 0) return true;
    const bool whole = i == l_.ideals.empty() && j == l_.ideals.full();
    // Synchronous steps of the whole model on one stage keep one micro-batch (InFlightMicroBatches).
    const double in_flight = whole && o_.global_batch > 0 ? 1 : InFlight(offset, r, hosts);
    const double versions = training_ && o_.global_batch == 0 ? in_flight + 1 : 1;
    const double replicas = static_cast<double>(r) * hosts;
    const Sharding sharding = training_ && replicas > 1 ? o_.sharding : Sharding::kNone;
    const auto part = [&](double bytes, Sharding from) { return sharding >= from ? bytes / replicas : bytes; };
    const double weights = l_.weight_bytes[j] - l_.weight_bytes[i];
    const double buckets = training_ && replicas > 1 && o_.global_batch > 0 && sharding < Sharding::kGradients;
    const double bytes = part(weights, Sharding::kParameters) * versions +
                         (training_ ? part(weights, Sharding::kGradients) * (1 + buckets) : 0) +
                         part(l_.optimizer_bytes[j] - l_.optimizer_bytes[i], Sharding::kOptimizer) +
                         (l_.stash_bytes[j] - l_.stash_bytes[i]) * checkpoints_.kept * in_flight +
                         l_.working_bytes + static_cast<double>(checkpoints_.segment_bytes);
    return bytes <= static_cast<double>(capacity_);
  }

  // The slowest path between neighbours inside a host from the device before a group to the one after it (where
  // its tensors go), and the slowest path between hosts.
  void Links(const Topology& t) {
    const std::vector<DeviceId>& host = h_.hosts.front();
    std::vector<double> next(std::max(n_ - 1, 0));
    for (int32_t k = 0; k + 1 < n_; ++k) next[k] = t.path(host[k], host[k + 1]).bandwidth;
    inside_.assign(static_cast<size_t>(n_ + 1) * (n_ + 1), kNoLink);
    for (int32_t a = 0; a < n_; ++a) {
      for (int32_t r = 1; a + r <= n_; ++r) {
        double slowest = kNoLink;
        for (int32_t k = std::max(0, a - 1); k < std::min(n_ - 1, a + r); ++k) slowest = std::min(slowest, next[k]);
        inside_[static_cast<size_t>(a) * (n_ + 1) + r] = slowest;
      }
    }
    between_ = kNoLink;
    for (size_t h = 1; h < h_.hosts.size(); ++h)
      between_ = std::min(between_, t.path(host[0], h_.hosts[h][0]).bandwidth);
  }

  // All-reduce time over every group (a run of devices on each of the first `hosts` hosts) as latency + bytes x
  // seconds per byte.
  void AllReduces(const Topology& t) {
    constexpr double kProbe = 1e9;
    const int32_t hosts = static_cast<int32_t>(h_.hosts.size());
    ar_latency_.assign(Index(hosts + 1, 0, 0), 0);
    ar_per_byte_.assign(ar_latency_.size(), 0);
    for (int32_t k = 1; k <= (h_.max_outer > 1 ? hosts : 1); ++k) {
      for (int32_t a = 0; a < n_; ++a) {
        for (int32_t r = 1; a + r <= n_; ++r) {
          std::vector<DeviceId> group;
          for (int32_t h = 0; h < k; ++h)
            group.insert(group.end(), h_.hosts[h].begin() + a, h_.hosts[h].begin() + a + r);
          if (group.size() < 2) continue;
          const double none = PlanAllReduce(t, group, 0).seconds;
          ar_latency_[Index(k, a, r)] = none;
          ar_per_byte_[Index(k, a, r)] = (PlanAllReduce(t, group, kProbe).seconds - none) / kProbe;
        }
      }
    }
  }

  const PlanLattice& l_;
  const PlanSearchOptions o_;
  const HostLayout& h_;
  const int32_t n_;
  int32_t total_ = 0;
  bool training_ = false;
  int64_t capacity_ = 0;
  CheckpointShare checkpoints_;  // {1, 0} without recomputation
  std::vector<double> inside_, ar_latency_, ar_per_byte_;
  double between_ = kNoLink;
};

// One host: the chain over its accelerators in order.
absl::StatusOr<PlanSearchResult> OneHost(const PlanLattice& l, const HostLayout& layout, const OwnCosts& costs,
                                         const PlanSearchOptions& o, const Budget& budget) {
  const IdealSet& s = l.ideals;
  const int32_t n = layout.per_host;
  const auto cost = [&](int64_t i, int64_t j, int32_t offset, int32_t r, bool) {
    return costs.Stage(i, j, offset, r, 1);
  };
  std::vector<ReplicaStep> best;
  double value = kNoPlan;
  for (int32_t r = layout.max_inner; r >= 1 && o.parallelism != Parallelism::kPipeline; --r) {
    if (const double v = cost(s.empty(), s.full(), 0, r, true); v < value) {
      value = v;
      best = {ReplicaStep{s.empty(), s.full(), 0, r}};
    }
    if (o.parallelism == Parallelism::kData) break;
  }
  PlanSearchResult out;
  if (o.parallelism != Parallelism::kData) {
    absl::StatusOr<double> found =
        SearchChain(s, n, layout.max_inner, std::isfinite(value) ? value : std::numeric_limits<double>::max(), cost,
                    budget, &best, &out);
    if (!found.ok()) return found.status();
    value = std::min(value, *found);
  }
  if (best.empty()) return absl::FailedPreconditionError("no chain of stages fits the devices' memory");
  out.plan.stage_of_op = StagesOfOps(l, best);
  for (const ReplicaStep& step : best) {
    const auto first = layout.hosts.front().begin() + step.offset;
    out.plan.stages.push_back(PlanStage{std::vector<DeviceId>(first, first + step.replicas)});
  }
  out.dp_value = value;
  return out;
}

}  // namespace

PlanSearchResult DataParallel(const CostModel& costs, const PlanLattice& l) {
  std::vector<std::vector<DeviceId>> hosts = AcceleratorsByHost(costs.topology());
  std::vector<DeviceId> all;  // the k-th device of every host, then the next: consecutive micro-batches change hosts
  for (size_t k = 0; k < hosts.front().size(); ++k) {
    for (const auto& host : hosts) {
      if (k < host.size()) all.push_back(host[k]);
    }
  }
  PlanSearchResult r;
  r.plan = OneStagePlan(costs.graph(), std::move(all));
  r.dp_value = kNoPlan;  // not estimated: the plan model scores it
  return r;
}

namespace {

// Several hosts: blocks of whole hosts, bounded by pure data parallelism over all of them.
absl::StatusOr<PlanSearchResult> Blocks(const CostModel& costs, const PlanLattice& l, const PlanSearchOptions& o,
                                        const HostLayout& layout, const OwnCosts& own, const Budget& budget) {
  HostCosts c;
  c.stage = [&](int64_t i, int64_t j, int32_t offset, int32_t r, bool, int32_t hosts) {
    return own.Stage(i, j, offset, r, hosts);
  };
  c.per_host_count = true;
  c.inner_bound = [](double bound, int32_t) { return bound; };
  c.work_per_bound = [](int32_t hosts) { return static_cast<double>(hosts); };
  c.block = [&](double inner, int64_t i, int64_t j, int32_t hosts, const std::vector<ReplicaStep>& chain) {
    return own.Block(inner, i, j, hosts, chain);
  };
  const IdealSet& s = l.ideals;
  const int32_t hosts = static_cast<int32_t>(layout.hosts.size()), devices = hosts * layout.per_host;
  const bool data_allowed =
      costs.topology().data_parallel_across_hosts() && (o.global_batch == 0 || devices <= o.global_batch);
  const double data = data_allowed ? c.block(own.Stage(s.empty(), s.full(), 0, layout.per_host, hosts), s.empty(),
                                             s.full(), hosts, {ReplicaStep{s.empty(), s.full(), 0, layout.per_host}})
                                   : kNoPlan;
  return SearchBlocks(l, layout, c, s.work(s.full()) / devices,
                      std::isfinite(data) ? data : std::numeric_limits<double>::max(), budget);
}

}  // namespace

absl::StatusOr<PlanSearchResult> SearchOwn(const CostModel& costs, const PlanLattice& l, const PlanSearchOptions& o,
                                           const Budget& budget) {
  if (o.parallelism == Parallelism::kData) return DataParallel(costs, l);
  absl::StatusOr<HostLayout> layout =
      LayoutHosts(costs, l, o.parallelism == Parallelism::kPipeline, costs.topology().data_parallel_across_hosts());
  if (!layout.ok()) return layout.status();
  if (o.global_batch > 0)
    layout->max_inner = static_cast<int32_t>(std::min<int64_t>(layout->max_inner, o.global_batch));
  layout->middle_blocks = false;  // a DP from every block start per host count would take minutes on 8 hosts
  const OwnCosts own(costs, l, o, *layout);
  absl::StatusOr<PlanSearchResult> found =
      layout->hosts.size() == 1 ? OneHost(l, *layout, own, o, budget) : Blocks(costs, l, o, *layout, own, budget);
  // No chain found under the bound pure data parallelism sets (the DP's estimates are not the plan model's), or
  // none fits memory: the hybrid family still has pure data parallelism, which the plan model then scores (and
  // names the stage that does not fit, when it does not).
  if (absl::IsFailedPrecondition(found.status()) && o.parallelism == Parallelism::kHybrid) {
    PlanSearchResult r = DataParallel(costs, l);
    r.dp_value = kNoPlan;
    return r;
  }
  return found;
}

}  // namespace placement::parallel
