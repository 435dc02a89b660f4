// The all-reduce that sums a data-parallel stage's weight gradients over its group, as transfers on the
// topology's link resources: what the plan model charges for it and what the plan simulation sends.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "graph/topology.h"

namespace placement {

enum class AllReduceKind : uint8_t { kNone = 0, kRing = 1, kHierarchical = 2 };

absl::string_view AllReduceName(AllReduceKind kind);  // "none", "ring", "hierarchical"

// Transfers that start together, each of `bytes`, done `repeat` times one after another.
struct CollectiveStep {
  double bytes = 0;
  int32_t repeat = 1;
  std::vector<std::pair<DeviceId, DeviceId>> sends;  // (from, to), in the order they are requested
};

struct AllReducePlan {
  AllReduceKind kind = AllReduceKind::kNone;
  std::vector<CollectiveStep> steps;
  double seconds = 0;  // every step's time, each repeat counted
};

// The all-reduce of `bytes` over `group` (devices of one kind of link figures or not): a ring in host-major
// order, 2(r - 1) steps of bytes / r; or, when the group has the same number l >= 2 of devices on each of
// h >= 2 hosts, the hierarchical one: a reduce-scatter inside each host (l - 1 steps of bytes / l), a ring
// between the hosts for each local index (2(h - 1) steps of bytes / (l h)) and an all-gather inside each host.
// Whichever takes less time on the topology; kNone for a group of one.
AllReducePlan PlanAllReduce(const Topology& topology, absl::Span<const DeviceId> group, double bytes);

// A step's time: its transfers requested together in order, each starting once every link resource on its path is
// free and holding them all until it ends (the simulator's discipline), so transfers sharing a resource queue
// and one waits for the busiest resource on its path.
double StepSeconds(const Topology& topology, const CollectiveStep& step);

// The seconds during the all-reduce (its steps and repeats one after another, each as StepSeconds schedules it)
// in which `resource` cannot begin a transfer of `seconds` that needs it besides a resource the all-reduce leaves
// free: from the first to the last of its sends in each step, less the gaps between them (and between repeats)
// long enough for the transfer. The simulator holds every resource of a path for the whole transfer and never
// back-fills, so in that time the free resource waits however much it has to carry.
double SecondsUnavailable(const Topology& topology, const AllReducePlan& plan, int32_t resource, double seconds);

// Adds `scale` x the seconds each link resource is busy during the all-reduce to busy[resource].
void AddLinkBusy(const Topology& topology, const AllReducePlan& plan, double scale, std::vector<double>& busy);

}  // namespace placement
