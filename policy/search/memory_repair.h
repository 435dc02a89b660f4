// Makes a starting placement fit memory before the search begins, so that the search only ever walks between
// placements that fit.
//
// The largest units leave an overflowing device first (fewest moves for the bytes freed), each to the device
// it may use that still has room and the least work. THROUGHPUT counts parameter bytes, exactly as Evaluate
// does; STEP_TIME and LATENCY ask the simulator for each device's peak and repeat until nothing overflows.
#pragma once

#include "absl/status/status.h"
#include "graph/placement.h"
#include "policy/placer.h"
#include "policy/search/search_units.h"

namespace placement::search {

// OK with `placement` fitting (possibly unchanged); FAILED_PRECONDITION naming the device, its need and its
// capacity when no move can make it fit; the budget's status when it expires first.
absl::Status RepairMemory(const PlacementProblem& problem, const SearchUnits& units, const Budget& budget,
                          Placement& placement);

}  // namespace placement::search
