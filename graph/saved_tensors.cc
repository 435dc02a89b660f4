#include "graph/saved_tensors.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "graph/fused_patterns.h"

namespace placement {
namespace {

// By ONNX op type, the name the importer keeps; the PyTorch function each comes from is named where the two
// differ. Checked against autograd's saved_tensors_hooks by scripts/measure_saved_tensors.py.
constexpr SavedTensorRule kRules[] = {
    // Matrix products and convolutions: the activation operand (for the weight's gradient).
    {"Conv", SavedKind::kOperands},
    {"ConvTranspose", SavedKind::kOperands},
    {"Gemm", SavedKind::kOperands},  // addmm / linear
    {"MatMul", SavedKind::kOperands},
    {"Einsum", SavedKind::kOperands},
    // Fused attention (flash or memory-efficient): q, k, v and its output, and a float32 log-sum-exp per query (a
    // head dim's share of the output, left out); never the scores. graph/onnx/attention_fusion.h.
    {"ScaledDotProductAttention", SavedKind::kInputsAndOutputs},
    // Activations whose derivative is written with the result.
    {"Relu", SavedKind::kOutputs},
    {"Sigmoid", SavedKind::kOutputs},
    {"Tanh", SavedKind::kOutputs},
    {"Softmax", SavedKind::kOutputs},
    {"LogSoftmax", SavedKind::kOutputs},
    {"Exp", SavedKind::kOutputs},
    {"Sqrt", SavedKind::kOutputs},
    {"Reciprocal", SavedKind::kOutputs},
    {"Elu", SavedKind::kOutputs},
    // ... and with the input.
    {"Gelu", SavedKind::kInputs},
    {"Erf", SavedKind::kInputs},
    {"Log", SavedKind::kInputs},
    {"Pow", SavedKind::kInputs},
    {"Abs", SavedKind::kInputs},
    {"Sin", SavedKind::kInputs},
    {"Cos", SavedKind::kInputs},
    {"LeakyRelu", SavedKind::kInputs},
    {"PRelu", SavedKind::kInputs},
    {"Softplus", SavedKind::kInputs},
    {"Mish", SavedKind::kInputs},
    {"HardSwish", SavedKind::kInputs},
    {"HardSigmoid", SavedKind::kInputs},
    {"Clip", SavedKind::kInputs},  // hardtanh (ReLU6)
    {"Max", SavedKind::kOperands},   // elementwise maximum: both operands
    {"Min", SavedKind::kOperands},
    {"Mul", SavedKind::kOperands},   // operands, each for the other's gradient
    {"Div", SavedKind::kOperands},
    {"Where", SavedKind::kNothing},  // its one-byte condition, small next to what it selects
    // Normalizations: the input (and per-channel or per-row statistics, too small to count).
    {"BatchNormalization", SavedKind::kInputs},
    {"LayerNormalization", SavedKind::kInputs},
    {"InstanceNormalization", SavedKind::kInputs},
    {"GroupNormalization", SavedKind::kInputs},
    {"SimplifiedLayerNormalization", SavedKind::kInputs},  // RMSNorm
    // Pooling: max pooling keeps its input and its int64 indices (max_pool2d_with_indices).
    {"MaxPool", SavedKind::kInputs, 2.0, true},
    {"AveragePool", SavedKind::kInputs},
    {"GlobalAveragePool", SavedKind::kInputs},  // adaptive_avg_pool2d
    {"GlobalMaxPool", SavedKind::kInputs},
    {"ReduceMax", SavedKind::kInputsAndOutputs},
    {"ReduceMin", SavedKind::kInputsAndOutputs},
    // Recurrent layers: the input, and per step the gates and cell states (6.9 times the output sequence in
    // eager PyTorch's cell-by-cell CPU kernels, measured for LSTM and GRU alike).
    {"LSTM", SavedKind::kInputs, 6.9},
    {"GRU", SavedKind::kInputs, 6.9},
    // Dropout: the one-byte mask (the mask output of a training-mode export, else a quarter of float32 output).
    {"Dropout", SavedKind::kNothing, 0.25, true},
    // Gathers keep their indices, which are small next to what they gather.
    {"Gather", SavedKind::kNothing},
    {"GatherElements", SavedKind::kNothing},
    {"GatherND", SavedKind::kNothing},
    // Sizes only: linear maps, layout, views and copies.
    {"Add", SavedKind::kNothing},
    {"Sub", SavedKind::kNothing},
    {"Neg", SavedKind::kNothing},
    {"Sum", SavedKind::kNothing},
    {"Concat", SavedKind::kNothing},
    {"Split", SavedKind::kNothing},
    {"Slice", SavedKind::kNothing},
    {"Reshape", SavedKind::kNothing},
    {"Flatten", SavedKind::kNothing},
    {"Transpose", SavedKind::kNothing},
    {"Squeeze", SavedKind::kNothing},
    {"Unsqueeze", SavedKind::kNothing},
    {"Identity", SavedKind::kNothing},
    {"Expand", SavedKind::kNothing},
    {"Tile", SavedKind::kNothing},
    {"Pad", SavedKind::kNothing},
    {"Cast", SavedKind::kNothing},
    {"ReduceMean", SavedKind::kNothing},
    {"ReduceSum", SavedKind::kNothing},
    {"Resize", SavedKind::kNothing},  // nearest and bilinear upsampling
    {"DepthToSpace", SavedKind::kNothing},
    {"SpaceToDepth", SavedKind::kNothing},
    {"CumSum", SavedKind::kNothing},
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

}  // namespace

bool IsLayoutOp(absl::string_view type) {
  static constexpr absl::string_view kLayoutOps[] = {"Transpose", "Reshape", "Unsqueeze", "Squeeze", "Identity",
                                                     "Cast",      "Slice",   "Split",     "Flatten", "Expand",
                                                     "Concat",    "Tile"};
  return std::find(std::begin(kLayoutOps), std::end(kLayoutOps), type) != std::end(kLayoutOps);
}

namespace {

// The largest input of u (its data; a slice's starts and ends, a reshape's shape are small constants), or kNone.
EdgeId DataInput(const Graph& g, OpId u) {
  EdgeId data = kNone;
  for (EdgeId in : g.in_edges(u)) {
    if (data == kNone || g.edge(in).bytes > g.edge(data).bytes) data = in;
  }
  return data;
}

// Operators that are views in PyTorch whatever their input's strides. A reshape of a slice is not one of them: the
// slice is not contiguous (a chunk of the last dimension, attention's q, k and v of one projection) and reshape
// copies it, so the copy is what is kept.
bool IsStridedView(absl::string_view type) {
  return type == "Transpose" || type == "Squeeze" || type == "Unsqueeze" || type == "Identity";
}

// Saves the tensor on edge e for its consumer's backward. A slice is a view in PyTorch: keeping it, or a transpose
// of it, keeps the whole tensor it views (ShuffleNet's chunks), which is then what is held: the slice's own
// backward reads it, so it lives as long.
void SaveEdge(const Graph& g, EdgeId e, SavedTensors* saved) {
  constexpr int kMaxViewChain = 4;
  EdgeId at = e;
  for (int depth = 0; depth <= kMaxViewChain; ++depth) {
    const OpId producer = g.edge(at).src;
    const absl::string_view type = g.op_type(producer);
    const EdgeId data = DataInput(g, producer);
    if (data == kNone || !saved->requires_grad[g.edge_tensor(data)]) break;
    if (type == "Slice" || type == "Split") {
      saved->edge_saved[data] = 1;
      return;
    }
    if (!IsStridedView(type) || g.edge(data).bytes != g.edge(at).bytes) break;
    at = data;
  }
  saved->edge_saved[e] = 1;
}

// Operands of a product are saved each for another operand's gradient: an operand is kept when some other
// operand, or a weight of the operator, requires a gradient.
void SaveOperands(const Graph& g, OpId u, SavedTensors* saved) {
  const auto in = g.in_edges(u);
  int32_t needing = g.reads_weights(u) ? 1 : 0;
  for (EdgeId e : in) needing += saved->requires_grad[g.edge_tensor(e)];
  for (EdgeId e : in) {
    const int32_t others = needing - saved->requires_grad[g.edge_tensor(e)];
    if (others > 0 && !saved->weight_view[g.edge_tensor(e)]) SaveEdge(g, e, saved);
  }
}

void MarkRequiringGrad(const Graph& g, std::vector<uint8_t>* requires_grad) {
  for (OpId u : g.topo_order()) {
    if (!Differentiable(g.op_type(u))) continue;
    bool needs = g.reads_weights(u);
    for (EdgeId e : g.in_edges(u)) needs = needs || (*requires_grad)[g.edge_tensor(e)];
    if (!needs) continue;
    for (int32_t k = 0; k < g.num_outputs(u); ++k) (*requires_grad)[g.first_output(u) + k] = 1;
  }
}

void MarkSaved(const Graph& g, OpId u, SavedTensors* saved) {
  const SavedTensorRule* rule = FindSavedTensorRule(g.op_type(u));
  const TensorId first = g.first_output(u);
  if (rule == nullptr) {  // a type the table does not name: everything a backward could read
    for (EdgeId e : g.in_edges(u)) saved->edge_saved[e] = saved->weight_view[g.edge_tensor(e)] ? 0 : 1;
    for (int32_t k = 0; k < g.num_outputs(u); ++k) saved->output_saved[first + k] = 1;
    return;
  }
  if (rule->kind == SavedKind::kOperands) SaveOperands(g, u, saved);
  if (rule->kind == SavedKind::kInputs || rule->kind == SavedKind::kInputsAndOutputs) {
    // Kept for the input's gradient, or for the weights' (a normalization's scale reads its input).
    const bool weights = g.reads_weights(u);
    for (EdgeId e : g.in_edges(u)) {
      if ((weights || saved->requires_grad[g.edge_tensor(e)]) && !saved->weight_view[g.edge_tensor(e)]) SaveEdge(g, e, saved);
    }
  }
  if (rule->kind == SavedKind::kOutputs || rule->kind == SavedKind::kInputsAndOutputs) {
    for (int32_t k = 0; k < g.num_outputs(u); ++k) saved->output_saved[first + k] = 1;
  }
  if (g.op_type(u) == "Dropout" && g.num_outputs(u) > 1 && g.tensor(first + 1).bytes > 0) {
    saved->output_saved[first + 1] = 1;  // a training-mode export's mask output is the mask autograd keeps
  } else if (rule->extra_per_output_byte > 0) {
    saved->extra_bytes[u] = static_cast<int64_t>(rule->extra_per_output_byte * static_cast<double>(g.tensor(first).bytes));
  }
}

// A function PyTorch runs as one autograd node (gelu, silu, layer_norm) keeps only its input, however many
// operators the export spelled it in.
void SaveFusedPatternInputs(const Graph& g, SavedTensors* saved) {
  const FusedPatterns patterns = FindFusedPatterns(g);
  for (int32_t i = 0; i < patterns.size(); ++i) {
    const TensorId x = patterns.input[i];
    bool kept = !saved->requires_grad[x];  // nothing to keep where x needs no gradient
    for (int32_t j = patterns.begin[i]; j < patterns.begin[i + 1]; ++j) {
      const OpId u = patterns.ops[j];
      for (EdgeId e : g.in_edges(u)) {
        const bool keep = !kept && g.edge_tensor(e) == x;
        saved->edge_saved[e] = keep ? 1 : 0;
        kept = kept || keep;
      }
      for (int32_t k = 0; k < g.num_outputs(u); ++k) saved->output_saved[g.first_output(u) + k] = 0;
      saved->extra_bytes[u] = 0;
    }
  }
}

}  // namespace

std::vector<uint8_t> TensorsRequiringGrad(const Graph& g) {
  std::vector<uint8_t> requires_grad(g.num_tensors(), 0);
  MarkRequiringGrad(g, &requires_grad);
  return requires_grad;
}

std::vector<uint8_t> WeightViews(const Graph& g, const std::vector<uint8_t>& requires_grad) {
  std::vector<uint8_t> weight_view(g.num_tensors(), 0);
  for (OpId u : g.topo_order()) {
    if (!IsLayoutOp(g.op_type(u))) continue;
    bool from_weights = g.reads_weights(u);
    bool only_weights = true;
    for (EdgeId e : g.in_edges(u)) {
      const TensorId t = g.edge_tensor(e);
      from_weights = from_weights || weight_view[t];
      only_weights = only_weights && (weight_view[t] || !requires_grad[t]);
    }
    if (!from_weights || !only_weights) continue;
    for (int32_t k = 0; k < g.num_outputs(u); ++k) weight_view[g.first_output(u) + k] = 1;
  }
  return weight_view;
}

const SavedTensorRule* FindSavedTensorRule(absl::string_view op_type) {
  const auto& index = RuleIndex();
  auto it = index.find(op_type);
  return it == index.end() ? nullptr : it->second;
}

SavedTensors PlanSavedTensors(const Graph& g) {
  SavedTensors saved;
  saved.requires_grad = TensorsRequiringGrad(g);
  saved.weight_view = WeightViews(g, saved.requires_grad);
  saved.edge_saved.assign(g.num_edges(), 0);
  saved.output_saved.assign(g.num_tensors(), 0);
  saved.extra_bytes.assign(g.num_ops(), 0);
  for (OpId u = 0; u < g.num_ops(); ++u) {
    if (saved.differentiable(g, u)) MarkSaved(g, u, &saved);
  }
  SaveFusedPatternInputs(g, &saved);
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
