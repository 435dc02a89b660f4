// Internal to policy/parallel: the pieces of PipeDream's cost model its one- and two-level searches share.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "policy/parallel/plan_search.h"
#include "simulator/pipedream_model.h"

namespace placement::parallel::pipedream_internal {

// A stage from ideal i to j on r replicas of a level at bandwidth B: PipeDream's formula, and the activations
// crossing into and out of it unless it is the level's first.
inline double LevelStage(const PlanLattice& l, double bandwidth, int64_t i, int64_t j, int32_t r, bool first) {
  const IdealSet& s = l.ideals;
  double t = PipeDreamStageSeconds(s.work(j) - s.work(i), l.weight_bytes[j] - l.weight_bytes[i], r, bandwidth);
  if (!first) {
    t = std::max(t, PipeDreamTransferSeconds(s.cross_weight(i), r, bandwidth));
    if (j != s.full()) t = std::max(t, PipeDreamTransferSeconds(s.cross_weight(j), r, bandwidth));
  }
  return t;
}

inline double SlowestPath(const Topology& t, const std::vector<DeviceId>& a, const std::vector<DeviceId>& b) {
  double slowest = std::numeric_limits<double>::infinity();
  for (DeviceId x : a) {
    for (DeviceId y : b) {
      if (x != y) slowest = std::min(slowest, t.path(x, y).bandwidth);
    }
  }
  return slowest;
}

// Devices [offset, offset + replicas) of every host in [first_host, first_host + hosts), host-major.
inline std::vector<DeviceId> Group(const std::vector<std::vector<DeviceId>>& by_host, int32_t first_host, int32_t hosts,
                            const ReplicaStep& step) {
  std::vector<DeviceId> group;
  for (int32_t h = first_host; h < first_host + hosts; ++h) {
    for (int32_t k = step.offset; k < step.offset + step.replicas; ++k) group.push_back(by_host[h][k]);
  }
  return group;
}

inline PlanSearchResult Assemble(const PlanLattice& l, const std::vector<ReplicaStep>& steps,
                          std::vector<std::vector<DeviceId>> groups) {
  PlanSearchResult r;
  r.plan.stage_of_op = StagesOfOps(l, steps);
  for (auto& g : groups) r.plan.stages.push_back(PlanStage{std::move(g)});
  return r;
}

// PipeDream's hierarchy on hosts of equal accelerator counts (pipedream_hosts.cc).
absl::StatusOr<PlanSearchResult> SearchHosts(const CostModel& costs, const PlanLattice& lattice,
                                             const PlanSearchOptions& options, const Budget& budget);

}  // namespace placement::parallel::pipedream_internal
