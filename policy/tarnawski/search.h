// "tarnawski_search": iterated local search over contiguous splits of Tarnawski et al.'s latency model.
//
// A move sends one unit to the CPU, to an accelerator one of its neighbouring units is on, or to an empty
// accelerator; it is kept when the split stays one their model allows, with every accelerator's operators
// one contiguous block, within memory, and its latency drops (or stays and the sum of the blocks' finish times
// drops, so that moves preparing a better split are not lost on a plateau). Units are tried in a random order
// until no move helps; then a few random allowed moves kick the split out of its local optimum and the descent
// runs again, keeping the best split found. It stops at the budget's deadline, or after `patience` kicks in a
// row found nothing better.
#pragma once

#include <cstdint>
#include <vector>

#include "policy/placer.h"
#include "policy/tarnawski/instance.h"

namespace placement::tarnawski {

struct SearchOptions {
  uint64_t seed = 1;
  int32_t patience = 60;
};

struct SearchOutcome {
  std::vector<DeviceId> split;
  double latency = 0;
  int64_t evaluations = 0;
  int64_t improvements = 0;  // moves that lowered the best latency
  int32_t kicks = 0;
  bool converged = false;  // stopped by patience rather than the deadline
};

// `start` must be an allowed contiguous split that fits memory (GreedySplit's is).
SearchOutcome SearchSplit(const Instance& instance, std::vector<DeviceId> start, const SearchOptions& options,
                          const Budget& budget);

// Whether the split is one the search may hold: allowed, contiguous, within memory.
bool IsContiguousSplit(const Instance& instance, SplitScorer& scorer, const std::vector<DeviceId>& split);

}  // namespace placement::tarnawski
