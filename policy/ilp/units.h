// The decisions an ILP placer makes: one per unit, where a unit is a colocation group or a lone operator.
//
// A colocation group must share a device, so the models carry one set of assignment variables per group
// rather than per operator plus equality rows. Pins and device kinds are resolved here into the set of
// devices a unit may use; memory is left to the caller, whose objective decides what a unit costs.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/cost_model.h"
#include "graph/placement.h"

namespace placement::ilp {

inline constexpr int64_t kUnlimitedBytes = std::numeric_limits<int64_t>::max();

struct Units {
  int32_t num_devices = 0;
  std::vector<int32_t> unit_of;        // per operator
  std::vector<std::vector<OpId>> ops;  // per unit, in topological order
  std::vector<DeviceId> pinned;        // per unit, kNone when free
  std::vector<double> time;            // units x devices: summed operator time, kCannotRun where not allowed
  std::vector<int64_t> capacity;       // per device; kUnlimitedBytes where the topology sets no limit

  int32_t num_units() const { return static_cast<int32_t>(ops.size()); }
  double time_on(int32_t u, DeviceId d) const { return time[static_cast<size_t>(u) * num_devices + d]; }
  // The kind can run every operator of u and no pin says otherwise.
  bool allowed(int32_t u, DeviceId d) const { return time_on(u, d) != kCannotRun; }
  // "operator 'x'" or "colocation group 'g' (3 operators)".
  std::string Describe(const Graph& g, int32_t u) const;
};

// Units are numbered in the topological order of where their work happens: the first operator that computes
// or reads an input (a group led by a free source, such as a weight, counts from its first real operator).
// Fails with INVALID_ARGUMENT naming the operator when a pin names a device the topology lacks, a group
// carries two pins, or no device may run a whole unit.
absl::StatusOr<Units> BuildUnits(const CostModel& costs);

// Sum of `op_bytes` over the operators of each unit.
std::vector<int64_t> UnitBytes(const Units& units, const std::vector<int64_t>& op_bytes);

// FAILED_PRECONDITION when some unit fits on none of its devices, naming it, its bytes and the largest
// capacity it may use; OK otherwise.
absl::Status CheckUnitsFit(const Graph& g, const Units& units, const std::vector<int64_t>& unit_bytes,
                           absl::string_view what);

// The placement of every operator from the device of every unit.
Placement ToPlacement(const Units& units, const std::vector<DeviceId>& unit_device);

// The device of every unit from a placement that keeps each unit together (ValidatePlacement), else empty.
std::vector<DeviceId> FromPlacement(const Units& units, const Placement& placement);

}  // namespace placement::ilp
