// "tarnawski_greedy": the latency baseline of Tarnawski et al. (NeurIPS 2020, Appendix F), rebuilt from its
// description:
//
//   1. Units that lie on one cycle of the unit graph (colour classes that reach each other) fuse into one
//      inseparable block: a contiguous split must keep them on one accelerator.
//   2. The blocks are put in a depth-first topological order: a stack starts with the source blocks in operator
//      order (the last on top); the block on top is taken, and a block goes onto the stack when the last edge
//      into it has been seen, the edges of a block taken by operator, each operator's by reader.
//   3. The accelerators are filled in that order: the next block joins the open accelerator while it fits in
//      memory; otherwise it opens the next accelerator. A block that fits no accelerator on its own (or that an
//      accelerator cannot run), and every block once the accelerators are used up, goes to the CPU.
//
// Each accelerator then holds a run of consecutive blocks of a topological order: one contiguous block, and
// the contracted graph is acyclic. On the four shared latency inputs this reproduces the published figures
// (latency-reference.tsv) and the very splits of their code; the order of step 2 is the one their code
// follows on those inputs, where the first stack depends on a hash table's iteration order.
#pragma once

#include <vector>

#include "absl/status/statusor.h"
#include "policy/tarnawski/instance.h"

namespace placement::tarnawski {

enum class BlockOrder { kDepthFirst, kBreadthFirst };

// Step 1 and a topological order of the blocks (their units): step 2's depth-first one, or Kahn's order taking
// the block that comes first in the graph's own topological order (another start for the search).
std::vector<std::vector<int32_t>> OrderedBlocks(const Instance& instance, BlockOrder order = BlockOrder::kDepthFirst);

// The device of every unit. FAILED_PRECONDITION naming the unit, its bytes and the accelerator when a block
// that no CPU may run finds no accelerator with room.
absl::StatusOr<std::vector<DeviceId>> GreedySplit(const Instance& instance);

}  // namespace placement::tarnawski
