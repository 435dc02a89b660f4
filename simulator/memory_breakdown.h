// What each device's memory holds in one step, by what it is for: the figures beside an answer's peak memory.
#pragma once

#include <cstdint>
#include <vector>

#include "graph/graph.h"
#include "graph/placement.h"
#include "simulator/objectives.h"
#include "simulator/plan_model.h"

namespace placement {

struct MemoryBreakdown {
  int64_t parameters = 0;   // weights of the forward operators placed there
  int64_t gradients = 0;    // parameter gradients its weight-gradient operators make
  int64_t optimizer = 0;    // the optimizer's state its updates hold
  int64_t activations = 0;  // training: forward tensors made there that the backward reads (what autograd keeps;
                            // the graph's outputs, which the loss reads, aside);
                            // inference: the largest live set beyond the weights and scratch
  int64_t workspace = 0;    // the largest scratch of an operator placed there
};

// Per device of the placement, from the graph alone; `peak_memory` (per device, the simulated peak) gives the
// live set of an inference graph, which has no backward. Linear in the size of the graph.
std::vector<MemoryBreakdown> BreakDownMemory(const Graph& g, const Placement& placement, int32_t num_devices,
                                             const std::vector<int64_t>& peak_memory);

// The same for an evaluated placement, one per device of its evaluation, for the answers that report it (a pass
// over the graph kept out of Evaluate, which searches and training call many times). Under the throughput
// objective each device keeps the activations of one micro-batch per device in flight, as its peak counts them
// (CostModel::pipelined_bytes).
std::vector<MemoryBreakdown> BreakDownMemory(const Graph& g, const Placement& placement, const Evaluation& evaluation);

// For a parallel plan, per device of the topology: each device of a stage holds what the plan model counts for
// the stage (plan_model.h): its weight versions, gradients (and DistributedDataParallel's bucket copy), optimizer
// state, the activations of its micro-batches in flight and the largest operator's working set.
std::vector<MemoryBreakdown> BreakDownPlanMemory(const ParallelPlan& plan, const PlanEvaluation& evaluation,
                                                 int32_t num_devices);

}  // namespace placement
