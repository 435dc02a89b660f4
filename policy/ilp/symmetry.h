// Symmetry breaking for the placement MILPs: devices the model cannot tell apart (same kind, type and memory,
// none pinned to) would otherwise let CBC explore every relabelling of the same split.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "graph/topology.h"
#include "policy/ilp/milp.h"
#include "policy/ilp/units.h"

namespace placement::ilp {

// Classes of two or more interchangeable devices, each in index order.
std::vector<std::vector<DeviceId>> InterchangeableDevices(const Topology& topology, const Units& units);

// Relabels interchangeable devices so that their runs are ordered by first unit, empty ones last, as the
// symmetry rows require.
void Canonicalize(const std::vector<std::vector<DeviceId>>& classes, int32_t num_units, std::vector<DeviceId>& device);

// A running-sum column: the number of units 0..unit on device.
struct RunningSum {
  int col;
  int32_t unit;
  DeviceId device;
};

// Rows saying that unit i may use the p-th device of a class only when a lower unit uses the (p-1)-th, through
// running sums. `on(i, d)` gives the terms that equal 1 when unit i is on device d (empty when it cannot be).
std::vector<RunningSum> AddSymmetryRows(Milp& milp, const std::vector<std::vector<DeviceId>>& classes,
                                        int32_t num_units, const std::function<Milp::Terms(int32_t, DeviceId)>& on);

// The running sums' values for a split (one device per unit) into a start vector.
void SetRunningSums(const std::vector<RunningSum>& running, const std::vector<DeviceId>& device, int32_t num_devices,
                    std::vector<double>& start);

}  // namespace placement::ilp
