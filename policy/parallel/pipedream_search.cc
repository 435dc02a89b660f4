// SearchPipeDream (plan_search.h): PipeDream's cost model, one level on one host, its hierarchy on several.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "policy/parallel/plan_search.h"
#include "policy/parallel/pipedream_levels.h"
#include "simulator/pipedream_model.h"

namespace placement::parallel {
namespace {

using pipedream_internal::Assemble;
using pipedream_internal::Group;
using pipedream_internal::LevelStage;
using pipedream_internal::SlowestPath;

absl::StatusOr<PlanSearchResult> OneLevel(const CostModel& costs, const PlanLattice& l, const PlanSearchOptions& o,
                                          const Budget& budget) {
  const std::vector<DeviceId>& devices = l.model.accelerators;
  const int32_t n = static_cast<int32_t>(devices.size());
  const double bw = SlowestPath(costs.topology(), devices, devices);
  const IdealSet& s = l.ideals;
  const int64_t empty = s.empty(), full = s.full();
  const auto cost = [&](int64_t i, int64_t j, int32_t, int32_t r, bool first) { return LevelStage(l, bw, i, j, r, first); };
  double upper = cost(empty, full, 0, o.parallelism == Parallelism::kPipeline ? 1 : n, true);
  std::vector<ReplicaStep> best = {ReplicaStep{empty, full, 0, o.parallelism == Parallelism::kPipeline ? 1 : n}};
  PlanSearchResult out;
  if (o.parallelism != Parallelism::kData) {
    ReplicaDpOptions dp_options{empty, full, n, o.parallelism == Parallelism::kPipeline ? 1 : n, 0, false};
    absl::StatusOr<double> found = GrowBound(s.work(full) / n, upper, budget, [&](double bound) -> absl::StatusOr<double> {
      dp_options.bound = bound;
      ReplicaDp dp(s, dp_options, cost, budget);
      if (!dp.Run()) return budget.ExpiredStatus();
      out.pairs += dp.pairs();
      if (std::isfinite(dp.Best(full))) best = dp.Chain(full);
      return dp.Best(full);
    }, &out.dp_runs);
    if (!found.ok()) return found.status();
    upper = std::min(upper, *found);
  }
  std::vector<std::vector<DeviceId>> groups;
  for (const ReplicaStep& step : best) groups.push_back(Group({devices}, 0, 1, step));
  PlanSearchResult r = Assemble(l, best, std::move(groups));
  r.dp_value = upper;
  r.pairs = out.pairs;
  r.dp_runs = out.dp_runs;
  return r;
}

}  // namespace

absl::StatusOr<PlanSearchResult> SearchPipeDream(const CostModel& costs, const PlanLattice& lattice,
                                                 const PlanSearchOptions& options, const Budget& budget) {
  absl::StatusOr<PlanSearchResult> r = AcceleratorsByHost(costs, lattice).size() > 1
                                           ? pipedream_internal::SearchHosts(costs, lattice, options, budget)
                                           : OneLevel(costs, lattice, options, budget);
  if (r.ok()) r->proven_optimal = lattice.complete;
  return r;
}

}  // namespace placement::parallel
