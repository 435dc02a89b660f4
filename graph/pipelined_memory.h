// What each operator holds on its device beyond one micro-batch's transient tensors: the per-operator memory
// of the throughput objective, where the graph runs as an asynchronous pipeline with several micro-batches in
// flight, and the figures an answer breaks a training step's memory into.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/strings/string_view.h"
#include "graph/graph.h"

namespace placement {

// A training step's weight-gradient operator (graph/training.h "u/wgrad", type "...WeightGrad"), whose output is
// its operator's parameter gradient.
bool IsWeightGradientType(absl::string_view op_type);

// Per operator, the bytes of its forward outputs that a backward operator reads: what autograd keeps from the
// forward until the backward uses it. A graph output (read by no forward operator) is the model's answer, which
// the loss reads and the backward starts from, and is not counted; what its operator saves beside it (its last
// output: a final Linear's 16-bit weight copy under autocast) is. Zero for backward operators and for graphs
// without a backward, and for backward operators not named as gradients ("...Grad": this project's training
// steps, PyTorch traces, PipeDream's profiles): Tarnawski et al.'s inputs flag backward nodes of type "layer"
// and fold what they keep into each node's resident size.
std::vector<int64_t> KeptForBackwardBytes(const Graph& g);

// Per operator, what it holds under the throughput objective with `in_flight` micro-batches in the pipeline:
// its parameters (the optimizer's state, for an update), the gradient a weight-gradient operator makes (one
// copy), and KeptForBackwardBytes once per micro-batch in flight. Linear in the operators, so the exact
// placers can hold a device to the sum. An inference graph keeps nothing for a backward: its parameters alone.
std::vector<int64_t> PipelinedBytes(const Graph& g, int32_t in_flight);

}  // namespace placement
