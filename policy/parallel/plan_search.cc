#include "policy/parallel/plan_search.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "absl/status/status.h"

namespace placement::parallel {

std::vector<std::vector<DeviceId>> AcceleratorsByHost(const Topology& topology) {
  std::map<int32_t, std::vector<DeviceId>> by_host;
  for (DeviceId d = 0; d < topology.num_devices(); ++d) {
    if (topology.device(d).type != DeviceType::kCpu) by_host[topology.device(d).host].push_back(d);
  }
  std::vector<std::vector<DeviceId>> out;
  for (auto& [host, devices] : by_host) out.push_back(std::move(devices));
  return out;
}

absl::StatusOr<double> GrowBound(double lower, double upper, const Budget& budget,
                                 absl::FunctionRef<absl::StatusOr<double>(double bound)> attempt, int32_t* runs) {
  lower = std::max(lower, 1e-300);
  for (int i = 0;; ++i) {
    if (budget.Expired()) return budget.ExpiredStatus();
    const double bound = std::min(upper, lower + lower / 256 * std::ldexp(1.0, i));
    ++*runs;
    absl::StatusOr<double> found = attempt(bound);
    if (!found.ok() || std::isfinite(*found) || bound >= upper) return found;
  }
}

absl::StatusOr<double> SearchChain(const IdealSet& s, int32_t devices, int32_t max_replicas, double upper,
                                   StageCostFn cost, const Budget& budget, std::vector<ReplicaStep>* chain,
                                   PlanSearchResult* counters) {
  ReplicaDpOptions options{s.empty(), s.full(), devices, max_replicas, 0, false};
  return GrowBound(
      s.work(s.full()) / devices, upper, budget,
      [&](double bound) -> absl::StatusOr<double> {
        options.bound = bound;
        ReplicaDp dp(s, options, cost, budget);
        if (!dp.Run()) return budget.ExpiredStatus();
        counters->pairs += dp.pairs();
        if (std::isfinite(dp.Best(s.full()))) *chain = dp.Chain(s.full());
        return dp.Best(s.full());
      },
      &counters->dp_runs);
}

}  // namespace placement::parallel
