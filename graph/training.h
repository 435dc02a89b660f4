// One training step from a forward graph: the forward operators, a backward operator per forward operator,
// and a weight-gradient and an optimizer-update operator per operator that holds parameters.
//
// The expansion follows the dataflow of reverse-mode differentiation, so that the simulator sees the
// dependencies, the transfers and the memory a real step has. For a forward operator u with in-edges
// p:i -> u (p's output i) and out-edges u:k -> v:
//
//   u/grad    (backward) computes the gradients of u's inputs. It reads what a backward kernel needs:
//             - every output of u: an edge u:k -> u/grad for each output k (saved activations),
//             - every input of u: an edge p:i -> u/grad for each in-edge, with that edge's bytes,
//             - the gradient of every use of u's outputs: an edge v/grad:j -> u/grad for each out-edge u -> v,
//               where j is that edge's position among v's in-edges.
//             It has one output per in-edge of u, in in-edge order (Graph::in_edges), each as large as the
//             tensor on that edge (a gradient has its tensor's shape) and with that tensor's measured transfer
//             time; output j feeds (p/grad) of the edge's producer p.
//   u/wgrad   (backward, only when u has param_bytes > 0) computes the gradient of u's parameters from the same
//             inputs as u/grad (every input edge listed above is duplicated for it); one output of param_bytes.
//   u/update  (backward, only with u/wgrad) applies the optimizer: reads u/wgrad:0, holds the optimizer state
//             as its param_bytes (SGD none, momentum one copy, Adam two copies of u's parameters) and has no
//             output (the weights are updated in place).
//
// Keeping u's outputs and inputs as edges into u/grad is what keeps the activations alive from the forward
// pass until their backward use in the simulator's memory model, and the u -> u/grad edge orders every
// backward operator after its forward one even when u has no consumer.
//
// Cost: the backward work is backward_multiplier x the forward work (measured times, FLOPs and bytes touched
// all scaled). With a weight gradient it is split evenly between u/grad and u/wgrad (for a matrix product
// dX = dY W^T and dW = X^T dY cost one forward each), so the step's compute is (1 + multiplier) x forward
// plus the updates either way. Both backward operators get u's temp_bytes (each runs a kernel of u's shape).
// The update is an elementwise roofline operator over param_bytes / 4 fp32 parameters: per parameter 2 FLOPs
// (SGD), 4 (momentum) or 10 (Adam), and it reads the weights, the gradient and the state and writes the
// weights and the state: (3 + 2 x state copies) x param_bytes bytes touched.
//
// Placement: u/grad, u/wgrad and u/update share u's colocation group (parameters and saved activations live
// with their operator); when u has none, the pair gets a new group named after u ("<u>", or "<u>#2", "#3"...
// when a group of that name already exists), and all of them inherit u's pinned device.
//
// Size, with n forward operators, E forward edges, O forward outputs in all and W the operators with
// param_bytes > 0 (none when include_weight_gradients is false):
//   operators = 2n + 2|W|
//   edges     = 3E + O + sum over u in W of (num_outputs(u) + in_degree(u) + out_degree(u) + 1)
// Operator ids: the forward operators keep theirs (0..n-1); then, for each forward u in id order, u/grad,
// u/wgrad, u/update. Linear time and memory in the size of the result.
#pragma once

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/graph.h"

namespace placement {

enum class Optimizer : uint8_t {
  kSgd = 0,       // no state
  kMomentum = 1,  // one copy of the parameters (the velocity)
  kAdam = 2,      // two copies (first and second moments)
};

absl::string_view OptimizerName(Optimizer optimizer);  // "sgd", "momentum", "adam"
absl::StatusOr<Optimizer> ParseOptimizer(absl::string_view name);

struct TrainingOptions {
  // Backward work as a multiple of the forward work; 2 is the usual figure (one forward per gradient of the
  // inputs and one per gradient of the weights). Finite and non-negative.
  double backward_multiplier = 2.0;
  Optimizer optimizer = Optimizer::kAdam;
  // False: no u/wgrad or u/update; u/grad then carries the whole backward_multiplier x forward work, and
  // neither gradient buffers nor optimizer state are modelled (frozen weights, or updates outside the graph).
  bool include_weight_gradients = true;
};

struct TrainingGraphSize {
  int64_t ops = 0;
  int64_t edges = 0;
};

// The size BuildTrainingGraph(forward, options) will have, by the formula above; lets a caller refuse a
// request before building it.
TrainingGraphSize TrainingGraphSizeOf(const Graph& forward, const TrainingOptions& options = {});

// Fails when an operator of `forward` is already a backward operator or already has a name the expansion
// would create ("<u>/grad", "<u>/wgrad", "<u>/update"), naming it; when the options are out of range; and
// when the result would not fit the int32 operator and edge ids.
absl::StatusOr<Graph> BuildTrainingGraph(const Graph& forward, const TrainingOptions& options = {});

}  // namespace placement
