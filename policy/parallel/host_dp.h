// Internal to policy/parallel: plans on several hosts of equal size as a pipeline between hosts whose stages
// (blocks) are pipelines inside them, every host of a block running the same inner pipeline on the same
// devices; the shape of PipeDream's hierarchical planner, with the costs the caller gives (PipeDream's or ours).
//
// An outer DP over hosts takes blocks from the empty ideal (inner times from one forward DP from it), blocks to
// the full ideal (from one backward DP to it) and, with three or more hosts, blocks between (a forward DP from
// each block start), all at the outer bound scaled as the costs say.
#pragma once

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "policy/parallel/plan_lattice.h"
#include "policy/parallel/plan_search.h"

namespace placement::parallel {

struct HostLayout {
  std::vector<std::vector<DeviceId>> hosts;  // accelerators by host, all of one count
  int32_t per_host = 0;
  int32_t max_inner = 1;  // devices per host of an inner stage
  int32_t max_outer = 1;  // hosts of a block
  // Blocks between the first and the last need an inner DP from every start they may take: with many hosts,
  // plans are limited to two blocks (the first and the last) unless this is set.
  bool middle_blocks = true;
};

struct HostCosts {
  // An inner stage from ideal i to j on `replicas` devices from `offset` of each of a block's `hosts` hosts;
  // `first` for the block's first stage.
  std::function<double(int64_t i, int64_t j, int32_t offset, int32_t replicas, bool first, int32_t hosts)> stage;
  // True when stage costs depend on the block's host count (then the inner DPs are per host count).
  bool per_host_count = false;
  // The inner DPs' bound for an outer bound T and a block of `hosts` hosts, and the work a device holds per unit
  // of it (ReplicaDpOptions::work_per_bound).
  std::function<double(double bound, int32_t hosts)> inner_bound;
  std::function<double(int32_t hosts)> work_per_bound;
  // A block's value from its inner pipeline (its time and its stages): ideals i to j on `hosts` hosts.
  std::function<double(double inner, int64_t i, int64_t j, int32_t hosts, const std::vector<ReplicaStep>& chain)> block;
};

// The best plan of blocks from `lower` up to `upper` (GrowBound), as plan stages with their device groups;
// FAILED_PRECONDITION when none is found by `upper` (memory).
absl::StatusOr<PlanSearchResult> SearchBlocks(const PlanLattice& lattice, const HostLayout& layout,
                                              const HostCosts& costs, double lower, double upper, const Budget& budget);

// Devices per host an inner chain uses (at least 1).
int32_t DevicesUsed(const std::vector<ReplicaStep>& chain);

// The layout of the lattice's accelerators; UNIMPLEMENTED naming the host when the hosts differ in size.
absl::StatusOr<HostLayout> LayoutHosts(const CostModel& costs, const PlanLattice& lattice, bool straight,
                                       bool across_hosts);

}  // namespace placement::parallel
