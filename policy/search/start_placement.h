// Where local search begins: the problem's own start, else the best answer of a few fast registry placers,
// else a greedy fill of the devices in topological order.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/placement.h"
#include "policy/placer.h"
#include "policy/search/local_search.h"
#include "policy/search/search_units.h"

namespace placement::search {

struct StartPoint {
  Placement placement;
  std::string source;              // "given", a placer's name, or "greedy"
  std::vector<std::string> notes;  // what the start placers did
};

// INVALID_ARGUMENT when problem.start is not a valid placement (it names what is wrong), or when there is none
// and options.registry is null while options.start_placers names some. The start placers run
// under a share of the budget; when none gives an answer that fits, the greedy fill is used.
absl::StatusOr<StartPoint> ChooseStart(const PlacementProblem& problem, const SearchUnits& units, const Budget& budget,
                                       const LocalSearchOptions& options);

// Units in topological order fill the devices in turn, each device taking about its share of the work (by
// the units' fastest times) and never more parameters than it holds: contiguous stages, few transfers.
Placement GreedyPlacement(const PlacementProblem& problem, const SearchUnits& units);

}  // namespace placement::search
