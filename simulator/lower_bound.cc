#include <algorithm>
#include <cfloat>
#include <cstdint>
#include <vector>

#include "simulator/objectives.h"

namespace placement {
namespace {

// Longest path through the graph with every operator on its fastest device and transfers free. The
// simulator adds the same kind of terms along any chain, each one at least as large, so rounding cannot lift
// this above a simulated makespan.
double CriticalPath(const CostModel& costs) {
  const Graph& g = costs.graph();
  std::vector<double> finish(g.num_ops(), 0);
  double longest = 0;
  for (OpId v : g.topo_order()) {
    double start = 0;
    for (EdgeId e : g.in_edges(v)) start = std::max(start, finish[g.edge(e).src]);
    finish[v] = start + costs.fastest_time(v);
    longest = std::max(longest, finish[v]);
  }
  return longest;
}

// Total work spread evenly over the devices. The sum runs in a different order from any device's own, so it
// can round a few ulps above what a schedule adds up to; shrinking it by a bound on that error keeps it a
// bound.
double WorkPerDevice(const CostModel& costs) {
  const Graph& g = costs.graph();
  double total = 0;
  for (OpId v = 0; v < g.num_ops(); ++v) total += costs.fastest_time(v);
  const double rounding = 4.0 * (g.num_ops() + costs.topology().num_devices()) * DBL_EPSILON;
  return total / costs.topology().num_devices() * std::max(0.0, 1.0 - rounding);
}

// The most time one device must spend on an indivisible unit: an operator on its fastest device, or a
// colocation group on the device where it is quickest in total. Group sums run in OpId order, the order in
// which device loads add compute, so a load that contains the group is never below its sum.
double LargestUnit(const CostModel& costs) {
  const Graph& g = costs.graph();
  const int32_t num_devices = costs.topology().num_devices();
  const size_t num_groups = g.colocation_groups().size();
  std::vector<double> group_time(num_groups * num_devices, 0);
  double largest = 0;
  for (OpId v = 0; v < g.num_ops(); ++v) {
    const int32_t grp = g.colocation_group(v);
    if (grp == kNone) {
      largest = std::max(largest, costs.fastest_time(v));
      continue;
    }
    for (DeviceId d = 0; d < num_devices; ++d) group_time[grp * num_devices + d] += costs.op_time(v, d);
  }
  for (size_t grp = 0; grp < num_groups; ++grp) {
    const auto first = group_time.begin() + static_cast<std::ptrdiff_t>(grp * num_devices);
    const double quickest = *std::min_element(first, first + num_devices);
    // A group no device can run whole cannot be placed at all; it does not bound anything.
    if (quickest != kCannotRun) largest = std::max(largest, quickest);
  }
  return largest;
}

int32_t MinDevicesForMemory(const CostModel& costs) {
  const Topology& t = costs.topology();
  if (t.has_unbounded_device()) return 0;
  int64_t largest = 0;
  for (const Device& d : t.devices()) largest = std::max(largest, d.memory_bytes);
  const int64_t params = costs.graph().total_param_bytes();
  return static_cast<int32_t>((params + largest - 1) / largest);
}

}  // namespace

LowerBound ComputeLowerBound(const CostModel& costs, Objective objective, CostModelKind cost_model) {
  LowerBound b;
  if (cost_model == CostModelKind::kTarnawski) {  // every path's operators finish one after another
    b.critical_path = CriticalPath(costs);
    b.value = b.critical_path;
    return b;
  }
  b.work_per_device = WorkPerDevice(costs);
  b.min_devices_for_memory = MinDevicesForMemory(costs);
  if (objective == Objective::kThroughput) {
    b.largest_unit = LargestUnit(costs);
    b.value = std::max(b.work_per_device, b.largest_unit);
  } else {
    b.critical_path = CriticalPath(costs);
    b.value = std::max(b.work_per_device, b.critical_path);
  }
  return b;
}

}  // namespace placement
