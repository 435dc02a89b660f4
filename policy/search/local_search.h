// Simulator-guided local search ("local_search"): an anytime placer that improves a starting placement by moving
// units (operators, or colocation groups as a whole) between devices until the budget runs out.
//
// Start: problem.start when given, else the best of a few fast registry placers (heft and m_topo where
// registered), else a greedy least-loaded fill. A start that does not fit memory is repaired first (the largest
// units leave the overflowing devices); when repair cannot make it fit the answer is FAILED_PRECONDITION naming
// the shortfall.
//
// Moves: one unit to another device, a swap of two units, a run of units (along the critical path for
// STEP_TIME and LATENCY, along a pipeline boundary for THROUGHPUT) to one device. THROUGHPUT keeps per-device
// loads incrementally (ThroughputState); STEP_TIME and LATENCY re-simulate each candidate after a cheap
// screen (a device's busy time bounds the makespan from below; a critical operator must be able to finish
// earlier where it goes). Improving moves are accepted; between greedy phases, simulated annealing with a
// generator seeded by problem.seed accepts some worse ones. The same seed and move limit give the same answer.
//
// Guarantees: pins, colocation groups, supported device kinds and memory are respected on every accepted move;
// the answer is never worse than the (repaired) start; when the budget expires the best placement found so
// far is returned, with a note "N moves tried, M accepted".
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "policy/placer.h"

namespace placement {

class PlacerRegistry;

namespace search {

struct LocalSearchOptions {
  // Placers whose best answer is the start when the problem gives none, looked up by name in `registry`; absent
  // names are skipped. Without a registry a problem must give its start (or start_placers be empty): the
  // search is otherwise INVALID_ARGUMENT.
  std::vector<std::string> start_placers = {"heft", "m_topo"};
  const PlacerRegistry* registry = nullptr;
  // Share of the remaining budget the start placers may use together.
  double start_budget_fraction = 0.25;

  // Stop after this many tried moves (0: no limit); with a finite limit and no deadline the result depends
  // only on the problem and its seed.
  int64_t max_moves = 0;
  // Stop after this many tried moves without a new best (0: ten annealing cycles, whose length grows with the
  // number of units; -1: never). A converged search thus ends before its deadline, which leaves AUTO time for
  // other starts; with a budget but no deadline it is what ends the search.
  int64_t max_stale_moves = 0;
  // Simulated annealing between greedy phases; off: pure descent.
  bool annealing = true;
  // THROUGHPUT: after every accepted move, compare the incremental loads with a full DeviceLoads and fail with
  // INTERNAL on a difference (for tests; costs a pass over the graph per accepted move).
  bool verify_incremental = false;
};

absl::StatusOr<PlacerResult> RunLocalSearch(const PlacementProblem& problem, const Budget& budget,
                                            const LocalSearchOptions& options = {});

std::unique_ptr<Placer> MakeLocalSearchPlacer(LocalSearchOptions options = {});

}  // namespace search
}  // namespace placement
