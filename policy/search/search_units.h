// What local search moves: units. A colocation group must share one device, so it moves as one unit; every
// other operator is a unit of its own. A unit may go to a device when every operator of it has a time for the
// device's kind and no pin says otherwise.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "graph/cost_model.h"
#include "graph/placement.h"
#include "policy/colocation_units.h"

namespace placement::search {

class SearchUnits : public ColocationUnits {
 public:
  // Fails with INVALID_ARGUMENT naming the operator when a pin names a device the topology lacks, when a group
  // carries two different pins, or when no device may run a whole unit.
  static absl::StatusOr<SearchUnits> Build(const CostModel& costs);

  // Devices the unit may use, in id order.
  absl::Span<const DeviceId> allowed_devices(int32_t u) const {
    return absl::MakeConstSpan(allowed_).subspan(allowed_begin_[u], allowed_begin_[u + 1] - allowed_begin_[u]);
  }
  int64_t param_bytes(int32_t u) const { return param_bytes_[u]; }
  // What the unit holds under the throughput objective (CostModel::pipelined_bytes).
  int64_t pipelined_bytes(int32_t u) const { return pipelined_bytes_[u]; }
  // Parameters, scratch and outputs: what the unit can add to a device's peak memory on its own.
  int64_t footprint_bytes(int32_t u) const { return footprint_bytes_[u]; }
  // Distinct units that exchange a tensor with u, in id order.
  absl::Span<const int32_t> neighbours(int32_t u) const {
    return absl::MakeConstSpan(neighbours_).subspan(neighbour_begin_[u], neighbour_begin_[u + 1] - neighbour_begin_[u]);
  }
  // Position of the unit's first operator in the graph's topological order.
  int32_t topo_rank(int32_t u) const { return topo_rank_[u]; }

  // Whether every operator of each unit sits on one device (the unit's device is then device_of()).
  DeviceId device_of(const Placement& p, int32_t u) const { return p.device[first_op(u)]; }
  void Assign(Placement& p, int32_t u, DeviceId d) const {
    for (OpId v : ops(u)) p.device[v] = d;
  }

 private:
  explicit SearchUnits(ColocationUnits core) : ColocationUnits(std::move(core)) {}

  std::vector<int32_t> allowed_begin_;
  std::vector<DeviceId> allowed_;
  std::vector<int64_t> param_bytes_;
  std::vector<int64_t> pipelined_bytes_;
  std::vector<int64_t> footprint_bytes_;
  std::vector<int32_t> neighbour_begin_;
  std::vector<int32_t> neighbours_;
  std::vector<int32_t> topo_rank_;
};

}  // namespace placement::search
