// HEFT with the devices narrowed by the caller: the learned policy's guided decoding (policy/learned) hands it,
// for every operator, the devices its network rates close to its best, and HEFT's earliest-finish rule chooses
// among those. The plain `heft` placer is the same run with every device allowed.
#pragma once

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "policy/placer.h"

namespace placement::heuristics {

// `op_candidates` is operators x devices (row-major), 1 where the operator may go. A colocation group may use
// the devices all of its operators allow; a group left with none that can take it uses every device, and the
// notes count such fallbacks. INVALID_ARGUMENT when the span's size does not match the problem.
absl::StatusOr<PlacerResult> PlaceHeftWithCandidates(const PlacementProblem& problem,
                                                     absl::Span<const uint8_t> op_candidates,
                                                     absl::string_view algorithm, const Budget& budget);

}  // namespace placement::heuristics
