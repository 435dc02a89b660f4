// A start for tarnawski_search: the best split of a topological order of the inseparable blocks into runs, each
// run on the next accelerator or block by block on the CPU, by dynamic programming.
//
// When every run feeds the next, their model's latency is the sum over runs of compute + transfers in + out, and
// over CPU blocks of their time; that sum is what the program minimizes (subject to each accelerator's memory
// and kind). Where runs do not depend on one another the true latency is lower: the search scores the split
// with their model. Runs of consecutive blocks of a topological order are contiguous and never feed each other
// in a circle, so the split is always allowed.
#pragma once

#include <cstdint>
#include <vector>

#include "policy/tarnawski/instance.h"

namespace placement::tarnawski {

// Blocks with more elements than this are left to the greedy split (the program takes quadratic time).
inline constexpr int32_t kMaxIntervalBlocks = 4000;

// `blocks`: units of each block, in a topological order of the blocks (OrderedBlocks). Empty when no split of
// that form fits memory, or when there are too many blocks.
std::vector<DeviceId> IntervalSplit(const Instance& instance, const std::vector<std::vector<int32_t>>& blocks,
                                    const TarnawskiLatency& model);

}  // namespace placement::tarnawski
