// List scheduling with memory: the engine behind HEFT, critical_path, m-ETF and m-SCT.
//
// Operators are scheduled one at a time on a model of the cluster in which each device runs one operator at a
// time and a tensor read on another device arrives after its transfer time (links are not contended: the
// classical model these algorithms are defined on; the simulator scores the result). A unit (colocation group)
// is placed, and its memory reserved in the ledger, when its first operator is scheduled; its other operators
// follow it. Devices whose free memory cannot take a unit are never considered for it.
//
// Two disciplines:
//   kStaticPriority  the ready operator with the highest priority goes next, on the device where it finishes
//                    first, optionally inserted into an idle gap (HEFT, CPOP).
//   kEarliestStart   the (ready operator, device) pair that can start first goes next (ETF, Hwang et al. 1989;
//                    Baechi's m-ETF). With favourite children (m-SCT) a device that has just run an operator
//                    waits for its favourite child when that child is ready and starts there no later than
//                    anywhere else.
// Cost: O((n + e) * devices) time evaluations plus heap operations, O(n * devices) memory at most for the
// per-device ready heaps.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "policy/heuristics/placement_state.h"

namespace placement::heuristics {

// Chooses the device of a unit as its first operator is scheduled, from the devices it may use and that
// operator's finish time on each (same order, at least two); returns an index into them.
using DeviceChooser =
    std::function<size_t(int32_t unit, OpId op, absl::Span<const DeviceId> devices, absl::Span<const double> finish)>;

struct ListScheduleOptions {
  enum class Mode : uint8_t { kStaticPriority = 0, kEarliestStart = 1 };
  Mode mode = Mode::kStaticPriority;
  // kStaticPriority: per operator, higher first; ties go to the earlier topological position. Only ready
  // operators compete, so any priority gives a valid schedule.
  std::vector<double> priority;
  bool insertion = false;  // kStaticPriority: use the earliest idle gap that is long enough
  // Per unit, a device to use when the unit may run there and fits (kNone: choose freely). Empty: none.
  std::vector<DeviceId> preferred;
  // kStaticPriority: per unit and device (units x devices, row-major), 1 where the caller lets the unit go; a
  // unit left with no such device that can take it falls back to every device (counted in fallbacks). Empty:
  // every device.
  std::vector<uint8_t> candidates;
  // kStaticPriority: when set, decides every unit with a choice of devices instead of the earliest finish (the
  // learned policy's scheduled decoding, policy/learned/decode.h). Empty: the earliest finish.
  DeviceChooser choose;
  // kEarliestStart: per operator its favourite child, kNone where it has none. Empty: none.
  std::vector<OpId> favourite_child;
};

struct ListScheduleResult {
  double makespan = 0;          // the engine's own estimate, without link contention
  int32_t fallbacks = 0;        // units whose preferred device, or every candidate, could not take them
  int32_t favourites_kept = 0;  // favourite children that ran on their parent's device
};

// Places every unit through `ledger` (which must be empty). Fails with the ledger's Shortfall when a unit fits
// on no device it may use, and with the budget's status when time runs out.
absl::StatusOr<ListScheduleResult> ListSchedule(const CostModel& costs, const UnitIndex& units, MemoryLedger& ledger,
                                                const ListScheduleOptions& options, const Budget& budget);

// HEFT's upward rank (Topcuoglu et al. 2002): mean operator time plus the longest mean-cost path to an exit.
std::vector<double> UpwardRanks(const CostModel& costs, absl::Span<const double> mean_op,
                                absl::Span<const double> mean_edge);
// The downward rank: the longest mean-cost path from an entry to the operator, excluding the operator.
std::vector<double> DownwardRanks(const CostModel& costs, absl::Span<const double> mean_op,
                                  absl::Span<const double> mean_edge);

}  // namespace placement::heuristics
