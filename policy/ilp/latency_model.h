// The single-sample latency model of ilp_latency in terms of units, with the schedules its warm start uses.
//
// A placement's schedule in the model: operators run one at a time on their device (an idle gap after each,
// SimulatorConfig::op_gap), start once every input has arrived, and an input from another device arrives
// c(t, from, to) after its producer ends; links carry transfers in parallel.
#pragma once

#include <cstdint>
#include <vector>

#include "graph/cost_model.h"
#include "policy/ilp/units.h"

namespace placement::ilp {

// Graphs of at most 64 operators: reachability is one machine word per operator.
struct LatencyInput {
  const CostModel* costs = nullptr;
  const Units* units = nullptr;
  std::vector<int64_t> bytes;   // per unit, under the chosen memory model
  std::vector<uint64_t> reach;  // per operator: bit w set when w is reachable from it
  double gap = 0;               // idle time after each operator

  const Graph& g() const { return costs->graph(); }
  int32_t num_devices() const { return units->num_devices; }
  bool fits(int32_t u, DeviceId d) const { return units->allowed(u, d) && bytes[u] <= units->capacity[d]; }
  bool ordered(OpId v, OpId w) const { return ((reach[v] >> w) & 1) || ((reach[w] >> v) & 1); }
};

// Memory per unit: parameters, or with `all_buffers` every buffer the unit could ever hold (parameters,
// scratch, outputs and one received copy of each tensor it reads from another unit).
LatencyInput BuildLatencyInput(const CostModel& costs, const Units& units, double gap, bool all_buffers);

// A makespan no schedule worth having exceeds: every operator at its slowest, one after another, with every
// edge's slowest transfer in between.
double Horizon(const LatencyInput& in);

// The better of two serial list schedules of a placement (operators in topological order, or the one that can
// start soonest first), each feasible for the MILP: the makespan and, when asked, every operator's start and
// its place in the scheduling order.
double ListSchedule(const LatencyInput& in, const std::vector<DeviceId>& unit_device,
                    std::vector<double>* start = nullptr, std::vector<int32_t>* position = nullptr);

// Whether the units' bytes fit every device (units on kNone are ignored).
bool FitsMemory(const LatencyInput& in, const std::vector<DeviceId>& unit_device);

// Earliest finish: units in order, each to the device that ends the partial schedule soonest (by the serial
// schedule `earliest` selects); empty when memory runs out.
std::vector<DeviceId> GreedyPlacement(const LatencyInput& in, bool earliest);

}  // namespace placement::ilp
