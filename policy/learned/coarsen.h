// Coarsening: the groups the learned policy places, so that a 50k-operator graph becomes a few thousand
// decisions (the grouper of Mirhoseini et al.'s hierarchical placer, here by rules rather than learned).
//
// Three stages, each linear or n log n in the graph:
//   1. units: colocation groups and pinned operators (policy/search/search_units.h) are groups already,
//      since their operators must share a device;
//   2. chains: an operator whose only consumer has it as its only producer is fused with that consumer, while
//      the fused group stays under a work cap (a quarter of the ideal per-device share), so a long chain still
//      spreads over devices;
//   3. runs: while more than max_groups remain, neighbours in topological order are merged in runs, which keeps
//      groups contiguous in the order (the way pipeline stages are).
// Groups never mix two pins, and keep a device every operator of them can run on.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/cost_model.h"
#include "graph/placement.h"

namespace placement::learned {

struct CoarseningOptions {
  int32_t max_groups = 2048;
  bool fuse_chains = true;
};

struct Coarsening {
  int32_t num_groups = 0;
  std::vector<int32_t> group_of_op;  // per operator
  std::vector<int32_t> group_begin;  // groups + 1, into ops
  std::vector<OpId> ops;             // operators grouped, each group in topological order
  std::vector<DeviceId> pinned;      // per group: its pin, or kNone
  std::vector<uint8_t> allowed;      // groups x devices: every operator of the group may run there
  std::vector<double> time;          // groups x devices: sum of operator times (kCannotRun when not allowed)
  // Directed group edges (deduplicated), sorted by (src, dst), with the bytes that cross them.
  std::vector<int32_t> edge_src, edge_dst;
  std::vector<double> edge_bytes;
  std::vector<int32_t> order;  // groups by their first operator's topological position

  // Every operator gets its group's device.
  Placement Expand(const std::vector<DeviceId>& group_device) const;
};

// INVALID_ARGUMENT when a pin names a device the topology lacks, two pins meet in a colocation group, or no
// device may run a whole colocation group (the same checks as local search's units).
absl::StatusOr<Coarsening> Coarsen(const CostModel& costs, const CoarseningOptions& options = {});

}  // namespace placement::learned
