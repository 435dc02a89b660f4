// What autograd keeps for an operator's backward: the tensors PyTorch saves between a training step's forward
// and backward, by operator type.
//
// The table follows PyTorch's derivative formulas (tools/autograd/derivatives.yaml): a formula that reads `self`
// saves the input, one that reads `result` saves the output. A convolution or a matrix product saves its
// activation input (its weight is resident anyway), ReLU, sigmoid, tanh and softmax their output, GELU, SiLU and
// the normalizations their input, max pooling its input and its int64 indices, an addition, a reshape, a
// concatenation or a slice nothing but sizes. An operand is saved only for the gradient of another operand that
// requires one: `x * 0.125` saves nothing the size of x, `x * y` of two activations saves both. Operator types the
// table does not name keep every input and output, the most a backward can read.
//
// Tensors are what the graph says they are, so one tensor saved by two operators (a ReLU's output, saved by the
// ReLU and by the convolution after it) is held once, as autograd holds one storage.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/strings/string_view.h"
#include "graph/graph.h"

namespace placement {

// Which tensors an operator type's backward formula reads.
enum class SavedKind : uint8_t {
  kNothing,   // sizes only
  kInputs,    // its activation inputs (a unary function's `self`, a normalization's input)
  kOperands,  // the operands of a product, each kept for another operand's (or a weight's) gradient
  kOutputs,   // its outputs (`result`)
  kInputsAndOutputs,
};

struct SavedTensorRule {
  absl::string_view op_type;
  SavedKind kind = SavedKind::kNothing;
  // Bytes saved beside them as a multiple of the first output's float32 bytes, for what is no tensor of the graph:
  // max pooling's int64 indices (two per float32 output), dropout's one-byte mask.
  double extra_per_output_byte = 0;
  // Whether those bytes are of a type of their own (indices, a mask) rather than the activations' (a recurrent
  // layer's gates): they stay the same size in a 16-bit step, where each output element is half the bytes.
  bool fixed_width_extra = false;
};

// Operators that lay out a tensor without computing on it (transposes, reshapes, slices, concatenations, casts):
// views in PyTorch, or the exporter's rearrangement of a weight.
bool IsLayoutOp(absl::string_view type);

// Per tensor: it requires a gradient (SavedTensors::requires_grad).
std::vector<uint8_t> TensorsRequiringGrad(const Graph& g);
// Per tensor: a weight as laid out for its reader (SavedTensors::weight_view): the output of a layout operator
// that reads weights, weight views or what needs no gradient, and no activation.
std::vector<uint8_t> WeightViews(const Graph& g, const std::vector<uint8_t>& requires_grad);

// The rule for an op type, or nullptr for a type the table does not name.
const SavedTensorRule* FindSavedTensorRule(absl::string_view op_type);

// What every operator of g saves for its backward, flat over g's ids.
struct SavedTensors {
  // Per tensor: it requires a gradient, as autograd decides: an output of an operator that holds parameters or
  // reads a tensor that requires one, unless the operator's outputs are not differentiable (sizes, comparisons,
  // indices, constants). Graph inputs are data, which requires none.
  std::vector<uint8_t> requires_grad;
  // Per tensor: a parameter as laid out for its reader (the transposes, slices and concatenations an exporter puts
  // between a weight and its MatMul or LSTM): a view of what is resident anyway, never an activation to keep.
  std::vector<uint8_t> weight_view;
  std::vector<uint8_t> edge_saved;    // per edge: its consumer saves the edge's tensor
  std::vector<uint8_t> output_saved;  // per tensor: its producer saves it
  std::vector<int64_t> extra_bytes;   // per operator: saved bytes that are no tensor of the graph (indices, masks)

  // An operator has a backward when its outputs require a gradient.
  bool differentiable(const Graph& g, OpId u) const {
    return g.num_outputs(u) > 0 && requires_grad[g.first_output(u)] != 0;
  }
  // Bytes of the distinct tensors saved, plus the extra bytes: what autograd holds at the end of the forward pass
  // (parameters and graph inputs, which are no operator's outputs, aside).
  int64_t TotalBytes(const Graph& g) const;
};

// Linear in the size of g.
SavedTensors PlanSavedTensors(const Graph& g);

}  // namespace placement
