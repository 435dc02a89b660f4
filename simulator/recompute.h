// Internal to the simulator library: activation recomputation for a plan's stages (ParallelPlan::recompute), as
// torch.utils.checkpoint runs it over segments of a model.
//
// Each stage's forward operators, in topological order, are cut into k segments of about equal kept bytes. A
// micro-batch then keeps, until its backward pass, only what recomputing its segments needs: the tensors crossing
// each cut (a segment's inputs), and the stage's inputs from other stages (what its forward and backward read).
// During the backward pass one segment at a time is recomputed and its kept tensors live until its backward is
// done: the largest segment's, once. k is chosen to make (inputs + cuts) x micro-batches in flight + the largest
// segment least: about the square root of the operators on a chain (Chen et al., 2016). The recomputation costs a
// second forward pass of the stage.
#pragma once

#include <cstdint>
#include <vector>

#include "graph/graph.h"
#include "simulator/parallel_plan.h"

namespace placement::plan_internal {

struct StageCheckpoints {
  int64_t kept_bytes = 0;       // per micro-batch in flight: the stage's inputs and the tensors crossing its cuts
  int64_t transient_bytes = 0;  // the largest segment's kept tensors, while it is recomputed and run backward
  int32_t segments = 1;
};

// Per stage of the (valid) plan, with `in_flight` micro-batches per stage.
std::vector<StageCheckpoints> PlanCheckpoints(const Graph& g, const ParallelPlan& plan,
                                              const std::vector<int32_t>& in_flight);

}  // namespace placement::plan_internal
