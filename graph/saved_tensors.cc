#include "graph/saved_tensors.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"

namespace placement {
namespace {

// By ONNX op type, the name the importer keeps; the PyTorch function each comes from is named where the two
// differ. Checked against autograd's saved_tensors_hooks by scripts/measure_saved_tensors.py.
constexpr SavedTensorRule kRules[] = {
    // Matrix products and convolutions: the activation operand (for the weight's gradient).
    {"Conv", true, false},
    {"ConvTranspose", true, false},
    {"Gemm", true, false},  // addmm / linear
    {"MatMul", true, false},
    {"Einsum", true, false},
    // Activations whose derivative is written with the result.
    {"Relu", false, true},
    {"Sigmoid", false, true},
    {"Tanh", false, true},
    {"Softmax", false, true},
    {"LogSoftmax", false, true},
    {"Exp", false, true},
    {"Sqrt", false, true},
    {"Reciprocal", false, true},
    {"Elu", false, true},
    // ... and with the input.
    {"Gelu", true, false},
    {"Erf", true, false},
    {"Log", true, false},
    {"Pow", true, false},
    {"Abs", true, false},
    {"Sin", true, false},
    {"Cos", true, false},
    {"LeakyRelu", true, false},
    {"PRelu", true, false},
    {"Softplus", true, false},
    {"Mish", true, false},
    {"HardSwish", true, false},
    {"HardSigmoid", true, false},
    {"Clip", true, false},  // hardtanh (ReLU6)
    {"Max", true, false},   // elementwise maximum: both operands
    {"Min", true, false},
    {"Mul", true, false},   // operands, each for the other's gradient
    {"Div", true, false},
    {"Where", true, false},  // the condition
    // Normalizations: the input (and per-channel or per-row statistics, too small to count).
    {"BatchNormalization", true, false},
    {"LayerNormalization", true, false},
    {"InstanceNormalization", true, false},
    {"GroupNormalization", true, false},
    {"SimplifiedLayerNormalization", true, false},  // RMSNorm
    // Pooling: max pooling keeps its input and its int64 indices (max_pool2d_with_indices).
    {"MaxPool", true, false, 2.0},
    {"AveragePool", true, false},
    {"GlobalAveragePool", true, false},  // adaptive_avg_pool2d
    {"GlobalMaxPool", true, false},
    {"ReduceMax", true, true},
    {"ReduceMin", true, true},
    // Dropout: the one-byte mask (the mask output of a training-mode export, else a quarter of float32 output).
    {"Dropout", false, false, 0.25},
    // Gathers keep their indices, which are small next to what they gather.
    {"Gather", false, false},
    {"GatherElements", false, false},
    {"GatherND", false, false},
    // Sizes only: linear maps, layout, views and copies.
    {"Add", false, false},
    {"Sub", false, false},
    {"Neg", false, false},
    {"Sum", false, false},
    {"Concat", false, false},
    {"Split", false, false},
    {"Slice", false, false},
    {"Reshape", false, false},
    {"Flatten", false, false},
    {"Transpose", false, false},
    {"Squeeze", false, false},
    {"Unsqueeze", false, false},
    {"Identity", false, false},
    {"Expand", false, false},
    {"Tile", false, false},
    {"Pad", false, false},
    {"Cast", false, false},
    {"ReduceMean", false, false},
    {"ReduceSum", false, false},
    {"Resize", false, false},  // nearest and bilinear upsampling
    {"DepthToSpace", false, false},
    {"SpaceToDepth", false, false},
    {"CumSum", false, false},
};

// Operators whose outputs carry no gradient: sizes, comparisons, indices, constants and random draws.
constexpr absl::string_view kNotDifferentiable[] = {
    "Shape", "Size", "Constant", "ConstantOfShape", "Range", "Equal", "Less", "LessOrEqual", "Greater",
    "GreaterOrEqual", "Not", "And", "Or", "Xor", "NonZero", "ArgMax", "ArgMin", "EyeLike", "RandomNormal",
    "RandomUniform", "RandomNormalLike", "RandomUniformLike", "Bernoulli", "Multinomial", "IsNaN", "IsInf", "Sign",
    "Floor", "Ceil", "Round",
};

const absl::flat_hash_map<absl::string_view, const SavedTensorRule*>& RuleIndex() {
  static const auto* index = [] {
    auto* map = new absl::flat_hash_map<absl::string_view, const SavedTensorRule*>();
    for (const SavedTensorRule& rule : kRules) map->emplace(rule.op_type, &rule);
    return map;
  }();
  return *index;
}

bool Differentiable(absl::string_view op_type) {
  return std::find(std::begin(kNotDifferentiable), std::end(kNotDifferentiable), op_type) ==
         std::end(kNotDifferentiable);
}

// Operands of a product are saved each for another operand's gradient: an operand is kept when some other
// operand, or a weight of the operator, requires a gradient.
void SaveOperands(const Graph& g, OpId u, SavedTensors* saved) {
  const auto in = g.in_edges(u);
  int32_t needing = g.param_bytes(u) > 0 ? 1 : 0;
  for (EdgeId e : in) needing += saved->requires_grad[g.edge_tensor(e)];
  for (EdgeId e : in) {
    const int32_t others = needing - saved->requires_grad[g.edge_tensor(e)];
    saved->edge_saved[e] = others > 0 ? 1 : 0;
  }
}

void MarkRequiringGrad(const Graph& g, std::vector<uint8_t>* requires_grad) {
  for (OpId u : g.topo_order()) {
    if (!Differentiable(g.op_type(u))) continue;
    bool needs = g.param_bytes(u) > 0;
    for (EdgeId e : g.in_edges(u)) needs = needs || (*requires_grad)[g.edge_tensor(e)];
    if (!needs) continue;
    for (int32_t k = 0; k < g.num_outputs(u); ++k) (*requires_grad)[g.first_output(u) + k] = 1;
  }
}

void MarkSaved(const Graph& g, OpId u, SavedTensors* saved) {
  const SavedTensorRule* rule = FindSavedTensorRule(g.op_type(u));
  const TensorId first = g.first_output(u);
  if (rule == nullptr) {  // a type the table does not name: everything a backward could read
    for (EdgeId e : g.in_edges(u)) saved->edge_saved[e] = 1;
    for (int32_t k = 0; k < g.num_outputs(u); ++k) saved->output_saved[first + k] = 1;
    return;
  }
  if (rule->inputs) SaveOperands(g, u, saved);
  if (rule->outputs) {
    for (int32_t k = 0; k < g.num_outputs(u); ++k) saved->output_saved[first + k] = 1;
  }
  if (g.op_type(u) == "Dropout" && g.num_outputs(u) > 1 && g.tensor(first + 1).bytes > 0) {
    saved->output_saved[first + 1] = 1;  // a training-mode export's mask output is the mask autograd keeps
  } else if (rule->extra_per_output_byte > 0) {
    saved->extra_bytes[u] = static_cast<int64_t>(rule->extra_per_output_byte * static_cast<double>(g.tensor(first).bytes));
  }
}

}  // namespace

const SavedTensorRule* FindSavedTensorRule(absl::string_view op_type) {
  const auto& index = RuleIndex();
  auto it = index.find(op_type);
  return it == index.end() ? nullptr : it->second;
}

SavedTensors PlanSavedTensors(const Graph& g) {
  SavedTensors saved;
  saved.requires_grad.assign(g.num_tensors(), 0);
  saved.edge_saved.assign(g.num_edges(), 0);
  saved.output_saved.assign(g.num_tensors(), 0);
  saved.extra_bytes.assign(g.num_ops(), 0);
  MarkRequiringGrad(g, &saved.requires_grad);
  for (OpId u = 0; u < g.num_ops(); ++u) {
    if (saved.differentiable(g, u)) MarkSaved(g, u, &saved);
  }
  return saved;
}

int64_t SavedTensors::TotalBytes(const Graph& g) const {
  std::vector<uint8_t> counted(output_saved);
  for (EdgeId e = 0; e < g.num_edges(); ++e) {
    if (edge_saved[e]) counted[g.edge_tensor(e)] = 1;
  }
  int64_t total = 0;
  for (TensorId t = 0; t < g.num_tensors(); ++t) {
    if (counted[t]) total += g.tensor(t).bytes;
  }
  for (int64_t extra : extra_bytes) total += extra;
  return total;
}

}  // namespace placement
