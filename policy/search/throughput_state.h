// THROUGHPUT loads kept up to date move by move.
//
// A device's load (DeviceLoads in simulator/objectives.h) is the compute of its operators plus, once per tensor,
// what it sends and receives. Moving an operator changes only its own compute and the tensors it produces or
// reads, so the state keeps, for every tensor, how many of its readers sit on each device (a short list: at
// most min(readers, devices) entries). A move then re-charges only the tensors around the operator: O(its
// degree x devices reading those tensors), never a pass over the graph.
//
// Trying a move: BeginTry() remembers the loads, moves are applied, then either Commit() or Rollback(), which
// undoes the moves and puts the remembered loads back bit for bit, so rejected moves leave no rounding behind.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "graph/cost_model.h"
#include "graph/placement.h"
#include "policy/search/search_units.h"

namespace placement::search {

class ThroughputState {
 public:
  // `placement` must be valid for `costs` (ValidatePlacement) and keep every unit on one device.
  ThroughputState(const CostModel& costs, const SearchUnits& units, Placement placement);

  const Placement& placement() const { return placement_; }
  DeviceId device_of_unit(int32_t u) const { return placement_.device[units_->ops(u).front()]; }
  absl::Span<const double> loads() const { return load_; }
  // What d holds under the throughput objective (CostModel::pipelined_bytes).
  int64_t held_bytes(DeviceId d) const { return held_[d]; }
  // Whether unit u fits on d by those bytes (always when d is unbounded or u is already there).
  bool Fits(int32_t u, DeviceId d) const;

  double MaxLoad() const;
  // A spread measure that breaks ties between placements with the same maximum: moves that lighten one of
  // several equally loaded devices make progress.
  double SumOfSquares() const;

  void MoveUnit(int32_t u, DeviceId to);

  void BeginTry();
  void Commit();
  void Rollback();

  // Recomputes every load from scratch with DeviceLoads (drops accumulated rounding).
  void Resync();

 private:
  void MoveOp(OpId v, DeviceId to);
  void Charge(TensorId t, double sign);
  void CountReader(TensorId t, DeviceId d, int32_t delta);

  const CostModel* costs_;
  const SearchUnits* units_;
  Placement placement_;
  std::vector<double> load_;
  std::vector<int64_t> held_;
  std::vector<uint8_t> pays_;  // CPUs pay no transfer
  // Readers of each tensor per device: slots reader_begin_[t] .. + reader_size_[t].
  std::vector<int32_t> reader_begin_;
  std::vector<int32_t> reader_size_;
  std::vector<DeviceId> reader_device_;
  std::vector<int32_t> reader_count_;
  // The try in progress.
  bool trying_ = false;
  std::vector<double> saved_load_;
  std::vector<std::pair<int32_t, DeviceId>> journal_;  // (unit, device it came from)
};

}  // namespace placement::search
