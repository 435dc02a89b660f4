// One training step from a forward graph: the forward operators, a backward operator per forward operator,
// and a weight-gradient and an optimizer-update operator per operator that holds parameters.
//
// The expansion follows the dataflow of reverse-mode differentiation, so that the simulator sees the
// dependencies, the transfers and the memory a real step has. For a forward operator u with in-edges
// p:i -> u (p's output i) and out-edges u:k -> v:
//
//   u/grad    (backward) computes the gradients of u's inputs. It reads what autograd keeps for it
//             (graph/saved_tensors.h, PyTorch's saved tensors by operator type) and the gradients flowing back:
//             - the outputs of u it saves (a ReLU's, a softmax's), and every output of u when nothing reads them
//               (a graph output, whose gradient seeds the backward): an edge u:k -> u/grad,
//             - the inputs of u it saves (a convolution's, a matrix product's operands): an edge p:i -> u/grad
//               with that edge's bytes,
//             - what it saves that is no tensor of the graph (max pooling's indices): one more output of u, after
//               its own, and an edge from it,
//             - the gradient of every use of u's outputs: an edge v/grad:j -> u/grad for each out-edge u -> v,
//               where j is that edge's position among v's in-edges.
//             It has one output per in-edge of u, in in-edge order (Graph::in_edges), each as large as the
//             tensor on that edge (a gradient has its tensor's shape; 0 bytes for a tensor that requires no
//             gradient: data, sizes, masks) and with that tensor's measured transfer time; output j feeds
//             (p/grad) of the edge's producer p.
//   u/wgrad   (backward, only when u has param_bytes > 0) computes the gradient of u's parameters from the same
//             inputs as u/grad (every input edge listed above is duplicated for it); one output of param_bytes.
//   u/update  (backward, only with u/wgrad) applies the optimizer: reads u/wgrad:0, holds the optimizer state
//             as its param_bytes (SGD none, momentum one copy, Adam two copies of u's parameters) and has no
//             output (the weights are updated in place).
//
// The saved tensors as edges into u/grad are what keeps the activations alive from the forward pass until their
// backward use in the simulator's memory model, as autograd keeps them; every other forward tensor is freed after
// its last forward reader. Every backward operator comes after its forward one: through the gradients of u's
// uses, which lead back to the graph outputs' backward operators, which read those outputs.
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
// Size, with n forward operators, E forward edges and W the operators with param_bytes > 0 (none when
// include_weight_gradients is false), and for each operator u, r(u) = the edges into u/grad above:
//   operators = 2n + 2|W|
//   edges     = E + |W| + sum over u of r(u) + sum over u in W of r(u)
// Operator ids: the forward operators keep theirs (0..n-1); then, for each forward u in reverse topological order
// (Graph::topo_order), u/grad, u/wgrad, u/update: autograd's order, which the simulator's topological priority
// follows. Linear time and memory in the size of the result.
#pragma once

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/graph.h"
#include "graph/precision.h"

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
  // Under autocast (graph/precision.h) each lower-precision operator keeps its 16-bit weight copy for the backward:
  // half its parameters' bytes, saved beside its activations. The forward graph's tensors are expected to be
  // ApplyPrecision's already.
  Precision precision = Precision::kFp32;
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
