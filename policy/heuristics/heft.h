// HEFT with the devices narrowed by the caller: the learned policy's guided decoding (policy/learned) hands it,
// for every operator, the devices its network rates close to its best, and HEFT's earliest-finish rule chooses
// among those. The plain `heft` placer is the same run with every device allowed.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "policy/heuristics/list_scheduler.h"
#include "policy/heuristics/placement_state.h"
#include "policy/placer.h"

namespace placement::heuristics {

// HEFT prepared once for a problem (its units and upward ranks), then run with as many candidate sets as the
// caller has: the guided decoding tries several thresholds on the same graph. The problem must outlive it.
class HeftWithCandidates {
 public:
  // As the heft placer's start: INVALID_ARGUMENT for a problem without a graph or with bad pins, the budget's
  // status when it has run out.
  static absl::StatusOr<HeftWithCandidates> Prepare(const PlacementProblem& problem, const Budget& budget);

  // `op_candidates` is operators x devices (row-major), 1 where the operator may go. A colocation group may use
  // the devices all of its operators allow; a group left with none that can take it uses every device, and the
  // notes count such fallbacks. INVALID_ARGUMENT when the span's size does not match the problem.
  absl::StatusOr<PlacerResult> Place(absl::Span<const uint8_t> op_candidates, absl::string_view algorithm,
                                     const Budget& budget) const;
  // HEFT's order and insertion over every device, with `choose` deciding each unit's device from the finish
  // times instead of taking the earliest (list_scheduler.h).
  absl::StatusOr<PlacerResult> PlaceChosen(const DeviceChooser& choose, absl::string_view algorithm,
                                           const Budget& budget) const;

 private:
  HeftWithCandidates(const PlacementProblem& problem, UnitIndex units, std::vector<double> priority)
      : problem_(&problem), units_(std::move(units)), priority_(std::move(priority)) {}

  const PlacementProblem* problem_;
  UnitIndex units_;
  std::vector<double> priority_;
};

}  // namespace placement::heuristics
