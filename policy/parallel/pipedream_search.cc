// SearchPipeDream (plan_search.h): PipeDream's cost model, one level on one host, its hierarchy on several.
#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "absl/status/status.h"
#include "policy/parallel/host_dp.h"
#include "policy/parallel/plan_search.h"
#include "simulator/pipedream_model.h"

namespace placement::parallel {
namespace {

// A stage from ideal i to j on r replicas of a level at bandwidth B: PipeDream's formula, and the activations
// crossing into and out of it unless it is the level's first.
double LevelStage(const PlanLattice& l, double bandwidth, int64_t i, int64_t j, int32_t r, bool first) {
  const IdealSet& s = l.ideals;
  double t = PipeDreamStageSeconds(s.work(j) - s.work(i), l.weight_bytes[j] - l.weight_bytes[i], r, bandwidth);
  if (!first) {
    t = std::max(t, PipeDreamTransferSeconds(l.pipedream_cut[i], r, bandwidth));
    if (j != s.full()) t = std::max(t, PipeDreamTransferSeconds(l.pipedream_cut[j], r, bandwidth));
  }
  return t;
}

double SlowestPath(const Topology& t, const std::vector<DeviceId>& a, const std::vector<DeviceId>& b) {
  double slowest = std::numeric_limits<double>::infinity();
  for (DeviceId x : a) {
    for (DeviceId y : b) {
      if (x != y) slowest = std::min(slowest, t.path(x, y).bandwidth);
    }
  }
  return slowest;
}

PlanSearchResult OnDevices(const PlanLattice& l, const std::vector<ReplicaStep>& steps,
                           const std::vector<DeviceId>& devices) {
  PlanSearchResult r;
  r.plan.stage_of_op = StagesOfOps(l, steps);
  for (const ReplicaStep& step : steps) {
    r.plan.stages.push_back(
        PlanStage{std::vector<DeviceId>(devices.begin() + step.offset, devices.begin() + step.offset + step.replicas)});
  }
  return r;
}

absl::StatusOr<PlanSearchResult> OneLevel(const CostModel& costs, const PlanLattice& l, const PlanSearchOptions& o,
                                          const Budget& budget) {
  const std::vector<DeviceId>& devices = l.model().accelerators;
  const int32_t n = static_cast<int32_t>(devices.size());
  const int32_t widest = o.parallelism == Parallelism::kPipeline ? 1 : n;
  const double bw = SlowestPath(costs.topology(), devices, devices);
  const IdealSet& s = l.ideals;
  const auto cost = [&](int64_t i, int64_t j, int32_t, int32_t r, bool first) {
    return LevelStage(l, bw, i, j, r, first);
  };
  double value = cost(s.empty(), s.full(), 0, widest, true);
  std::vector<ReplicaStep> best = {ReplicaStep{s.empty(), s.full(), 0, widest}};
  PlanSearchResult out;
  if (o.parallelism != Parallelism::kData) {
    absl::StatusOr<double> found = SearchChain(s, n, widest, value, cost, budget, &best, &out);
    if (!found.ok()) return found.status();
    value = std::min(value, *found);
  }
  PlanSearchResult r = OnDevices(l, best, devices);
  r.dp_value = value;
  r.pairs = out.pairs;
  r.dp_runs = out.dp_runs;
  return r;
}

// PipeDream's hierarchy: inner stages at the intra-host bandwidth, blocks at the network's, the comm of a block
// replicated on hosts shared by the devices it uses on each.
absl::StatusOr<PlanSearchResult> Hosts(const CostModel& costs, const PlanLattice& l, const PlanSearchOptions& o,
                                       const Budget& budget) {
  absl::StatusOr<HostLayout> layout = LayoutHosts(costs, l, o.parallelism == Parallelism::kPipeline, true);
  if (!layout.ok()) return layout.status();
  double inside = std::numeric_limits<double>::infinity(), between = inside;
  for (size_t h = 0; h < layout->hosts.size(); ++h) {
    inside = std::min(inside, SlowestPath(costs.topology(), layout->hosts[h], layout->hosts[h]));
    if (h > 0) between = std::min(between, SlowestPath(costs.topology(), layout->hosts[0], layout->hosts[h]));
  }
  const IdealSet& s = l.ideals;
  HostCosts c;
  c.stage = [&](int64_t i, int64_t j, int32_t, int32_t r, bool first, int32_t) {
    return LevelStage(l, inside, i, j, r, first);
  };
  const int32_t max_outer = layout->max_outer;
  c.inner_bound = [max_outer](double bound, int32_t) { return bound * max_outer; };
  c.work_per_bound = [](int32_t) { return 1.0; };
  c.block = [&](double inner, int64_t i, int64_t j, int32_t hosts, const std::vector<ReplicaStep>& chain) {
    double t = PipeDreamStageSeconds(inner, l.weight_bytes[j] - l.weight_bytes[i], hosts, between, DevicesUsed(chain));
    if (i != s.empty()) {
      t = std::max(t, PipeDreamTransferSeconds(l.pipedream_cut[i], hosts, between));
      if (j != s.full()) t = std::max(t, PipeDreamTransferSeconds(l.pipedream_cut[j], hosts, between));
    }
    return t;
  };
  const int32_t hosts = static_cast<int32_t>(layout->hosts.size());
  // Pure data parallelism: one block on every host, one inner stage on every device of each.
  const double data = c.block(LevelStage(l, inside, s.empty(), s.full(), layout->per_host, true), s.empty(), s.full(),
                              hosts, {ReplicaStep{s.empty(), s.full(), 0, layout->per_host}});
  if (o.parallelism == Parallelism::kData) {
    std::vector<DeviceId> all;
    for (const auto& h : layout->hosts) all.insert(all.end(), h.begin(), h.end());
    PlanSearchResult r = OnDevices(l, {ReplicaStep{s.empty(), s.full(), 0, hosts * layout->per_host}}, all);
    r.dp_value = data;
    return r;
  }
  const double upper = o.parallelism == Parallelism::kPipeline ? std::numeric_limits<double>::max() : data;
  return SearchBlocks(l, *layout, c, s.work(s.full()) / (hosts * layout->per_host), upper, budget);
}

}  // namespace

absl::StatusOr<PlanSearchResult> SearchPipeDream(const CostModel& costs, const PlanLattice& lattice,
                                                 const PlanSearchOptions& options, const Budget& budget) {
  absl::StatusOr<PlanSearchResult> r = AcceleratorsByHost(costs.topology()).size() > 1
                                           ? Hosts(costs, lattice, options, budget)
                                           : OneLevel(costs, lattice, options, budget);
  if (r.ok()) r->proven_optimal = lattice.complete;
  return r;
}

}  // namespace placement::parallel
