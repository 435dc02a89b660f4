// Shared state for the heuristic placers: the units they place (colocation groups and lone operators, with
// pins resolved), a per-device memory ledger consistent with the objective, and the common finish (score,
// check the simulated memory, report).
//
// Units. A colocation group must share one device, so every placer decides a group once, as a unit, and
// reserves the memory of all its operators at that moment. Lone operators are units of one. A unit may run on
// a device when every operator of it has a time for the device's kind and no pin says otherwise.
//
// Memory. THROUGHPUT holds each device to what its operators hold in a pipeline (CostModel::pipelined_bytes:
// parameters, and for training their gradients, optimizer state and kept activations of the micro-batches in
// flight), exactly as Evaluate scores it.
// STEP_TIME and LATENCY charge the buffers a device holds: parameters, scratch, outputs, and one received copy of
// every tensor read from another device. Their sum as if none were freed (kAllocations) bounds the simulator's
// peak from above but is several times what a step holds (a training step frees most of its forward's outputs
// before its peak), so the placers first charge each buffer at the share of all buffers that is live at once
// when one device runs the graph in topological order (kLiveShare): the sum over every device then comes to the
// one-device peak. That is an estimate, not a bound: the simulation at the finish decides, and a placement it
// finds out of memory is searched again under kAllocations (HeuristicPlacer::Place).
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "policy/colocation_units.h"
#include "policy/placer.h"

namespace placement::heuristics {

inline constexpr int64_t kUnlimited = std::numeric_limits<int64_t>::max();

class UnitIndex : public ColocationUnits {
 public:
  // Fails with INVALID_ARGUMENT naming the operator when a pin names a device the topology lacks, when a pinned
  // operator cannot run on its device, when a group carries two different pins, or when no device can run a
  // whole group.
  static absl::StatusOr<UnitIndex> Build(const CostModel& costs);

  // Time on the quickest device the unit may run on.
  double fastest_time(int32_t u) const { return fastest_[u]; }
  // Units in the topological order of where their work happens: the first operator that computes or has an
  // input (a group led by a free source, such as a weight, is placed with its first real operator).
  absl::Span<const int32_t> order() const { return order_; }

 private:
  explicit UnitIndex(ColocationUnits core) : ColocationUnits(std::move(core)) {}

  std::vector<double> fastest_;
  std::vector<int32_t> order_;
};

enum class MemoryModel : uint8_t {
  kParameters = 0,   // THROUGHPUT: CostModel::pipelined_bytes
  kAllocations = 1,  // everything ever allocated, nothing freed: the bound STEP_TIME and LATENCY fall back on
  kLiveShare = 2,    // STEP_TIME, LATENCY: parameters plus buffers at the share live at once (LiveShareInOrder)
};
MemoryModel MemoryModelFor(Objective objective);

// The peak of scratch and output bytes live at once when one device runs g in topological order, each tensor
// freed after its last reader, over the sum of all of them: in (0, 1], 1 for a graph without such buffers.
double LiveShareInOrder(const Graph& g);

class MemoryLedger {
 public:
  MemoryLedger(const CostModel& costs, const UnitIndex& units, MemoryModel model);

  MemoryModel model() const { return model_; }
  // Bytes of the unit's own operators: parameters (+ scratch and outputs under kAllocations).
  int64_t fixed(int32_t u) const { return fixed_[u]; }
  // fixed() plus one received copy of every tensor the unit reads from outside: what the unit can cost wherever
  // it and its neighbours go.
  int64_t upper(int32_t u) const { return upper_[u]; }
  // Bytes that placing u on d would add now, given the units placed so far.
  int64_t Cost(int32_t u, DeviceId d) const;
  bool Fits(int32_t u, DeviceId d) const { return Cost(u, d) <= free_bytes(d); }
  void Place(int32_t u, DeviceId d);

  DeviceId device_of(int32_t u) const { return device_of_[u]; }
  bool placed(int32_t u) const { return device_of_[u] != kNone; }
  int64_t used(DeviceId d) const { return used_[d]; }
  int64_t capacity(DeviceId d) const { return capacity_[d]; }  // kUnlimited where the topology says 0
  int64_t free_bytes(DeviceId d) const { return capacity_[d] == kUnlimited ? kUnlimited : capacity_[d] - used_[d]; }
  // Changes whenever a unit is placed, so callers can cache Fits() answers.
  uint64_t version() const { return version_; }
  // Sum of fixed() over all units: the least the graph needs in this model.
  int64_t total_fixed() const { return total_fixed_; }

  // FAILED_PRECONDITION saying how much memory u needs, the most any device it may use has free, and the
  // totals, e.g. "operator 'x' needs 3.2 GiB but the largest free memory is 1.1 GiB on gpu3; total needed
  // 90 GiB, cluster has 64 GiB".
  absl::Status Shortfall(int32_t u) const;
  // "total needed 90 GiB of parameters, cluster has 64 GiB": the end of every shortfall message.
  std::string Totals() const;
  // What kLiveShare charges per buffer byte (1 under the other models).
  double share() const { return share_; }

  // The device of every operator; every unit must be placed.
  Placement ToPlacement() const;

 private:
  int64_t Charge(TensorId t, DeviceId d) const;  // bytes of a received copy of t on d, 0 when already there
  int64_t Scaled(int64_t bytes) const;           // a buffer's charge: bytes at share_
  // The key of t's copy on d in received_.
  int64_t CopyKey(TensorId t, DeviceId d) const {
    return static_cast<int64_t>(t) * static_cast<int64_t>(used_.size()) + d;
  }
  // Charges the devices of units placed before u that read its outputs there: their received copies. Not checked
  // against those devices' capacity, which the simulator's memory check reports.
  void ChargeReaders(int32_t u, DeviceId d);

  const CostModel* costs_;
  const UnitIndex* units_;
  MemoryModel model_;
  double share_ = 1.0;
  std::vector<int64_t> fixed_;
  std::vector<int64_t> upper_;
  std::vector<int32_t> input_begin_;  // units + 1, into inputs_
  std::vector<TensorId> inputs_;      // distinct tensors each unit reads from other units
  std::vector<DeviceId> device_of_;
  std::vector<int64_t> used_;
  std::vector<int64_t> capacity_;
  int64_t total_fixed_ = 0;
  uint64_t version_ = 0;
  absl::flat_hash_set<int64_t> received_;  // tensor * devices + device: copies already charged
};

// Checks the budget every `period` ticks, so loops over units pay for absl::Now() rarely.
class BudgetClock {
 public:
  explicit BudgetClock(const Budget& budget, uint32_t period = 256) : budget_(budget), mask_(period - 1) {}
  bool Tick() { return (++count_ & mask_) == 0 && budget_.Expired(); }
  bool Expired() const { return budget_.Expired(); }
  absl::Status Status() const { return budget_.ExpiredStatus(); }

 private:
  const Budget& budget_;
  uint32_t mask_;
  uint32_t count_ = 0;
};

// Mean transfer time of each edge over ordered pairs of distinct devices (HEFT's c-bar); zero inside a unit
// and on one-device topologies.
std::vector<double> MeanTransferTimes(const CostModel& costs, const UnitIndex& units);
// Mean time of each operator over the devices that can run it (HEFT's w-bar).
std::vector<double> MeanOpTimes(const CostModel& costs);
// Relative speed of each device: total fastest time of the operators it can run over their time on it (1 for
// the kind quickest at everything). Used to give slower devices proportionally less work.
std::vector<double> DeviceSpeeds(const CostModel& costs);

// The common end of every placer: scores the placement under the objective and, where the simulation or the
// parameter count says a device is out of memory, returns FAILED_PRECONDITION naming it rather than an answer
// that does not fit.
absl::StatusOr<PlacerResult> FinishPlacement(const PlacementProblem& problem, const MemoryLedger& ledger,
                                             absl::string_view algorithm, std::vector<std::string> notes = {});

// Runs `place` under the objective's memory model; where that was the live-share estimate and the simulation
// found the answer out of memory, runs it once more under kAllocations (while the budget lasts) and notes why.
absl::StatusOr<PlacerResult> PlaceWithMemoryFallback(
    const PlacementProblem& problem, const Budget& budget,
    absl::FunctionRef<absl::StatusOr<PlacerResult>(MemoryModel)> place);

// The common start: the budget, the units and the ledger's model.
absl::Status CheckStart(const PlacementProblem& problem, const Budget& budget);

}  // namespace placement::heuristics
