#include "graph/precision.h"

#include <algorithm>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "graph/saved_tensors.h"

namespace placement {
namespace {

constexpr std::pair<Precision, absl::string_view> kNames[] = {
    {Precision::kFp32, "fp32"}, {Precision::kAmpBf16, "amp_bf16"}, {Precision::kAmpFp16, "amp_fp16"},
    {Precision::kBf16, "bf16"}, {Precision::kFp16, "fp16"},
};

// Autocast's lower-precision list (torch.amp, CUDA), by the ONNX types its functions export to.
constexpr absl::string_view kLowPrecision[] = {
    "Conv", "ConvTranspose", "MatMul", "Gemm",      "Einsum",
    "LSTM", "GRU",           "RNN",    "Attention", "ScaledDotProductAttention"};
// Its float32 list.
constexpr absl::string_view kFloat32[] = {"Softmax",   "LogSoftmax", "LayerNormalization", "GroupNormalization",
                                          "Exp",       "Log",        "Pow",                "Reciprocal",
                                          "ReduceSum", "CumSum",     "Softplus",           "ReduceLogSumExp",
                                          "SimplifiedLayerNormalization"};
// Operators whose outputs are no floating-point tensors (sizes, indices, comparisons), or whose type the graph
// does not say (constants, casts): left as they are and no input to type promotion.
constexpr absl::string_view kNotFloat[] = {
    "Shape", "Size",   "NonZero",  "ArgMax",      "ArgMin", "Equal",   "Less",     "LessOrEqual", "Greater",
    "GreaterOrEqual", "Not", "And", "Or", "Xor", "IsNaN", "IsInf", "Range", "Constant", "ConstantOfShape", "Cast",
};

template <size_t N>
bool In(const absl::string_view (&list)[N], absl::string_view type) {
  return std::find(std::begin(list), std::end(list), type) != std::end(list);
}

int64_t Scaled(int64_t bytes, int32_t width) { return width == 0 ? bytes : bytes / 4 * width; }

// Bytes a cast between float32 and a 16-bit type moves, per float32 byte of its tensor: it reads one width and
// writes the other.
constexpr double kCastBytesPerFloat32Byte = 1.5;

void AddCast(double float32_bytes, bool backward, AutocastCast& out) {
  out.forward.kernels += 1;
  out.forward.bytes += kCastBytesPerFloat32Byte * float32_bytes;
  if (!backward) return;
  out.backward.kernels += 1;
  out.backward.bytes += kCastBytesPerFloat32Byte * float32_bytes;
}

// A parameter added to a product's output: the bias of a Linear the exporter split into MatMul and Add.
bool IsBiasOfProduct(const Graph& g, OpId u) {
  if (g.op_type(u) != "Add" || g.param_bytes(u) <= 0) return false;
  for (EdgeId e : g.in_edges(u)) {
    if (RunsInLowPrecision(g.op_type(g.edge(e).src))) return true;
  }
  return false;
}

}  // namespace

std::vector<int32_t> AutocastWidths(const Graph& g) {
  std::vector<int32_t> width(g.num_tensors(), 0);
  // A weight as the exporter laid it out (the Identity, Transpose or Slice between an initializer and its reader)
  // is the parameter itself: float32 under autocast, cast by its reader, and no input to type promotion.
  const std::vector<uint8_t> weight = WeightViews(g, TensorsRequiringGrad(g));
  for (OpId u : g.topo_order()) {
    const absl::string_view type = g.op_type(u);
    if (In(kNotFloat, type) || (g.num_outputs(u) > 0 && weight[g.first_output(u)])) continue;
    int32_t w = 4;
    if (RunsInLowPrecision(type)) {
      w = 2;
    } else if (!In(kFloat32, type)) {  // promotes: the widest float input, float32 when it reads none
      int32_t widest = 0;
      for (EdgeId e : g.in_edges(u)) widest = std::max(widest, width[g.edge_tensor(e)]);
      w = widest > 0 ? widest : 4;
    }
    for (int32_t k = 0; k < g.num_outputs(u); ++k) width[g.first_output(u) + k] = w;
  }
  // A dropout's mask (its second output) is one byte per element whatever the data's precision.
  for (OpId u = 0; u < g.num_ops(); ++u) {
    if (g.op_type(u) == "Dropout" && g.num_outputs(u) > 1) width[g.first_output(u) + 1] = 0;
  }
  return width;
}

std::vector<int32_t> SixteenBitWidths(const Graph& g, Precision p) {
  std::vector<int32_t> width = AutocastWidths(g);
  if (!IsAutocast(p)) std::replace(width.begin(), width.end(), 4, 2);  // the whole model in 16 bits
  return width;
}

absl::string_view PrecisionName(Precision p) {
  for (const auto& [precision, name] : kNames) {
    if (precision == p) return name;
  }
  return "fp32";
}

absl::StatusOr<Precision> ParsePrecision(absl::string_view name) {
  const std::string lower = absl::AsciiStrToLower(name);
  if (lower.empty() || lower == "tf32") return Precision::kFp32;
  for (const auto& [precision, known] : kNames) {
    if (known == lower) return precision;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown precision '", name, "' (expected fp32, tf32, amp_bf16, amp_fp16, bf16 or fp16)"));
}

bool RunsInLowPrecision(absl::string_view op_type) { return In(kLowPrecision, op_type); }

AutocastCast AutocastCasts(const Graph& g, OpId u, const std::vector<int32_t>& width,
                           const std::vector<uint8_t>& weight_view, const std::vector<uint8_t>& requires_grad) {
  AutocastCast casts;
  const absl::string_view type = g.op_type(u);
  if (RunsInLowPrecision(type)) {
    if (g.param_bytes(u) > 0) AddCast(static_cast<double>(g.param_bytes(u)), true, casts);
    // The data, float32 as a training loop feeds it (the images a first convolution reads), needs no gradient.
    if (g.data_bytes(u) > 0) AddCast(static_cast<double>(g.data_bytes(u)), false, casts);
    for (EdgeId e : g.in_edges(u)) {
      const TensorId t = g.edge_tensor(e);
      if (weight_view[t] || width[t] == 4) AddCast(static_cast<double>(g.edge(e).bytes), requires_grad[t], casts);
    }
  } else if (In(kFloat32, type)) {
    for (EdgeId e : g.in_edges(u)) {
      const TensorId t = g.edge_tensor(e);
      if (width[t] == 2 && !weight_view[t]) AddCast(static_cast<double>(g.edge(e).bytes), requires_grad[t], casts);
    }
  } else if (IsBiasOfProduct(g, u)) {
    AddCast(static_cast<double>(g.param_bytes(u)), true, casts);
  }
  return casts;
}

int64_t AutocastWeightCopyBytes(const Graph& g, OpId u, Precision p) {
  if (!IsAutocast(p) || !RunsInLowPrecision(g.op_type(u))) return 0;
  return g.param_bytes(u) / 2;
}

absl::StatusOr<Graph> ApplyPrecision(const Graph& g, Precision p, bool inference) {
  if (p == Precision::kFp32) return g;
  const std::vector<int32_t> width = SixteenBitWidths(g, p);
  std::vector<uint8_t> requires_grad, weight_view;
  if (IsAutocast(p)) {
    requires_grad = TensorsRequiringGrad(g);
    weight_view = WeightViews(g, requires_grad);
  }
  GraphBuilder builder;
  for (OpId u = 0; u < g.num_ops(); ++u) {
    OpSpec spec = SpecOf(g, u);
    if (IsAutocast(p)) {
      const AutocastCast casts = AutocastCasts(g, u, width, weight_view, requires_grad);
      spec.extra_kernels = casts.forward;
      spec.extra_kernels_back = casts.backward;
    }
    int32_t widest = 0;
    for (int32_t k = 0; k < g.num_outputs(u); ++k) {
      spec.outputs[k].bytes = Scaled(spec.outputs[k].bytes, width[g.first_output(u) + k]);
      widest = std::max(widest, width[g.first_output(u) + k]);
    }
    // A kernel that answers in 16 bits reads 16-bit operands too (autocast cast them, or they are its inputs'
    // precision): the bytes its roofline counts are half the exported float32 ones, as the device's 16-bit
    // benchmark layers count theirs (scripts/measure_torch_device.py --dtype).
    if (widest == 2) spec.bytes_accessed /= 2;
    if (!IsAutocast(p)) spec.param_bytes /= 2;
    // Autocast caches the cast of a parameter (a leaf that requires grad, as parameters do under no_grad too)
    // until its region ends: the copies stay for the rest of the forward. Counted from the step's start, which
    // overstates the early forward by the copies not made yet.
    if (inference) spec.param_bytes += AutocastWeightCopyBytes(g, u, p);
    builder.AddOp(std::move(spec));
  }
  for (EdgeId e = 0; e < g.num_edges(); ++e) {
    const Edge& edge = g.edge(e);
    builder.AddEdge(edge.src, edge.src_output, edge.dst, Scaled(edge.bytes, width[g.edge_tensor(e)]));
  }
  return std::move(builder).Build();
}

}  // namespace placement
