// The units every placer decides: a colocation group must share one device, so it is placed (and moved) as one
// unit; every other operator is a unit of its own. Pins are resolved per unit, and each unit's time is summed
// per device kind. The heuristics (heuristics::UnitIndex) and local search (search::SearchUnits) build on this.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "graph/cost_model.h"

namespace placement {

class ColocationUnits {
 public:
  // Fails with INVALID_ARGUMENT naming the operator when a pin names a device the topology lacks or when a
  // group carries two different pins.
  static absl::StatusOr<ColocationUnits> Build(const CostModel& costs);

  int32_t num_units() const { return static_cast<int32_t>(pinned_.size()); }
  int32_t unit_of(OpId op) const { return unit_of_[op]; }
  // Operators of a unit in topological order; unit ids follow the topological order of their first operator.
  absl::Span<const OpId> ops(int32_t u) const {
    return absl::MakeConstSpan(ops_).subspan(begin_[u], begin_[u + 1] - begin_[u]);
  }
  OpId first_op(int32_t u) const { return ops_[begin_[u]]; }
  DeviceId pinned(int32_t u) const { return pinned_[u]; }
  // The operator whose pin the unit carries (kNone when unpinned), for messages.
  OpId pinned_by(int32_t u) const { return pinned_by_[u]; }
  // Sum of the unit's operator times on d; kCannotRun where one of them cannot run there.
  double time(int32_t u, DeviceId d) const { return time_[static_cast<size_t>(kind_of_[d]) * num_units() + u]; }
  bool allowed(int32_t u, DeviceId d) const {
    return time(u, d) != kCannotRun && (pinned_[u] == kNone || pinned_[u] == d);
  }
  // "operator 'x'" or "colocation group 'g' (12 operators)".
  std::string Describe(const Graph& g, int32_t u) const;

 private:
  std::vector<int32_t> unit_of_;
  std::vector<int32_t> begin_;
  std::vector<OpId> ops_;
  std::vector<DeviceId> pinned_;
  std::vector<OpId> pinned_by_;
  std::vector<int32_t> kind_of_;  // device -> topology kind
  std::vector<double> time_;      // kinds x units
};

}  // namespace placement
