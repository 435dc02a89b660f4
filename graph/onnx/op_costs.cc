#include "graph/onnx/op_costs.h"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <vector>

#include "absl/strings/string_view.h"
#include "graph/onnx/attributes.h"
#include "graph/onnx/einsum.h"
#include "graph/onnx/newer_ops.h"

namespace placement::onnx_import {
namespace {

// How an op type's FLOPs follow from its shapes. `factor` scales the per-element kinds.
enum class Kind {
  kConv,           // 2 * out elements * Cin/groups * kernel (+ out elements for a bias)
  kConvTranspose,  // 2 * in elements * Cout/groups * kernel (+ out elements for a bias)
  kGemm,           // 2 * M * N * K (+ M * N for C)
  kMatMul,         // 2 * out elements * K, batch dims broadcast
  kEinsum,         // 2 * product of every label's size (1 * for a single operand)
  kRecurrent,      // per step, direction and batch row: 2 * gates * H * (I + H) + factor * H
  kPool,           // factor * out elements * kernel elements
  kPerOutput,      // factor * out elements
  kPerInput,       // factor * elements of input 0 (reductions, global pooling)
  kVariadic,       // out elements * (inputs - 1): Sum, Max, Min, Mean
  kMovement,       // 0 FLOPs; reads inputs, writes outputs
  kGather,         // 0 FLOPs; reads indices and the picked rows, writes outputs
  kView,           // 0 FLOPs; output aliases input (Reshape): bytes of the output only
  kMetadata,       // 0 FLOPs; made from shapes or attributes (Shape, Constant): bytes of the output only
};

struct Rule {
  Kind kind;
  double factor = 1;
};

// A table, one family of operators to a line.
// clang-format off
const std::map<std::string, Rule, std::less<>>& Table() {
  static const auto* table = new std::map<std::string, Rule, std::less<>>{
      {"Conv", {Kind::kConv}}, {"ConvTranspose", {Kind::kConvTranspose}}, {"ConvInteger", {Kind::kConv}},
      {"Gemm", {Kind::kGemm}}, {"MatMul", {Kind::kMatMul}}, {"MatMulInteger", {Kind::kMatMul}},
      {"Einsum", {Kind::kEinsum}},
      // Pointwise work per hidden unit and step: bias adds, gate sums, activations (sigmoid and tanh at 4 each
      // as below) and the cell update.
      {"LSTM", {Kind::kRecurrent, 36}}, {"GRU", {Kind::kRecurrent, 25}}, {"RNN", {Kind::kRecurrent, 7}},
      {"MaxPool", {Kind::kPool}}, {"AveragePool", {Kind::kPool}}, {"LpPool", {Kind::kPool, 2}},
      {"GlobalAveragePool", {Kind::kPerInput}}, {"GlobalMaxPool", {Kind::kPerInput}},
      {"GlobalLpPool", {Kind::kPerInput, 2}},
      {"ReduceMean", {Kind::kPerInput}}, {"ReduceSum", {Kind::kPerInput}}, {"ReduceMax", {Kind::kPerInput}},
      {"ReduceMin", {Kind::kPerInput}}, {"ReduceProd", {Kind::kPerInput}}, {"ReduceLogSum", {Kind::kPerInput}},
      {"ReduceL1", {Kind::kPerInput, 2}}, {"ReduceL2", {Kind::kPerInput, 2}},
      {"ReduceSumSquare", {Kind::kPerInput, 2}}, {"ReduceLogSumExp", {Kind::kPerInput, 2}},
      {"ArgMax", {Kind::kPerInput}}, {"ArgMin", {Kind::kPerInput}}, {"CumSum", {Kind::kPerInput}},
      {"NonZero", {Kind::kPerInput}},
      // Normalizations in inference: statistics, normalize, scale and shift.
      {"BatchNormalization", {Kind::kPerOutput, 5}}, {"LayerNormalization", {Kind::kPerOutput, 8}},
      {"InstanceNormalization", {Kind::kPerOutput, 8}}, {"GroupNormalization", {Kind::kPerOutput, 8}},
      {"MeanVarianceNormalization", {Kind::kPerOutput, 8}}, {"LpNormalization", {Kind::kPerOutput, 3}},
      {"LRN", {Kind::kPerOutput, 8}},
      {"Softmax", {Kind::kPerOutput, 5}}, {"LogSoftmax", {Kind::kPerOutput, 5}}, {"Hardmax", {Kind::kPerOutput, 2}},
      // Elementwise arithmetic and activations, FLOPs per output element.
      {"Add", {Kind::kPerOutput}}, {"Sub", {Kind::kPerOutput}}, {"Mul", {Kind::kPerOutput}},
      {"Div", {Kind::kPerOutput}}, {"Pow", {Kind::kPerOutput}}, {"Mod", {Kind::kPerOutput}},
      {"Sqrt", {Kind::kPerOutput}}, {"Exp", {Kind::kPerOutput}}, {"Log", {Kind::kPerOutput}},
      {"Erf", {Kind::kPerOutput}}, {"Abs", {Kind::kPerOutput}}, {"Neg", {Kind::kPerOutput}},
      {"Reciprocal", {Kind::kPerOutput}}, {"Floor", {Kind::kPerOutput}}, {"Ceil", {Kind::kPerOutput}},
      {"Round", {Kind::kPerOutput}}, {"Sign", {Kind::kPerOutput}}, {"Sin", {Kind::kPerOutput}},
      {"Cos", {Kind::kPerOutput}}, {"Tan", {Kind::kPerOutput}}, {"Atan", {Kind::kPerOutput}},
      {"Relu", {Kind::kPerOutput}}, {"LeakyRelu", {Kind::kPerOutput, 2}}, {"PRelu", {Kind::kPerOutput, 2}},
      {"ThresholdedRelu", {Kind::kPerOutput}}, {"Elu", {Kind::kPerOutput, 3}}, {"Selu", {Kind::kPerOutput, 3}},
      {"Celu", {Kind::kPerOutput, 3}}, {"Sigmoid", {Kind::kPerOutput, 4}}, {"Tanh", {Kind::kPerOutput, 4}},
      {"HardSigmoid", {Kind::kPerOutput, 3}}, {"HardSwish", {Kind::kPerOutput, 4}},
      {"Softplus", {Kind::kPerOutput, 3}}, {"Softsign", {Kind::kPerOutput, 3}}, {"Gelu", {Kind::kPerOutput, 8}},
      {"Mish", {Kind::kPerOutput, 8}}, {"Clip", {Kind::kPerOutput, 2}},
      {"Equal", {Kind::kPerOutput}}, {"Less", {Kind::kPerOutput}}, {"Greater", {Kind::kPerOutput}},
      {"LessOrEqual", {Kind::kPerOutput}}, {"GreaterOrEqual", {Kind::kPerOutput}}, {"And", {Kind::kPerOutput}},
      {"Or", {Kind::kPerOutput}}, {"Xor", {Kind::kPerOutput}}, {"Not", {Kind::kPerOutput}},
      {"Where", {Kind::kPerOutput}}, {"IsNaN", {Kind::kPerOutput}}, {"IsInf", {Kind::kPerOutput}},
      {"Trilu", {Kind::kPerOutput}}, {"QuantizeLinear", {Kind::kPerOutput, 2}},
      {"DequantizeLinear", {Kind::kPerOutput, 2}}, {"Resize", {Kind::kPerOutput, 4}},
      {"Upsample", {Kind::kPerOutput, 4}},
      {"Sum", {Kind::kVariadic}}, {"Max", {Kind::kVariadic}}, {"Min", {Kind::kVariadic}},
      {"Mean", {Kind::kVariadic}},
      {"BitwiseAnd", {Kind::kPerOutput}}, {"BitwiseOr", {Kind::kPerOutput}}, {"BitwiseXor", {Kind::kPerOutput}},
      {"BitwiseNot", {Kind::kPerOutput}}, {"BitShift", {Kind::kPerOutput}},
      // Detection post-processing: one pass over the candidates (the sort and suppression are data-dependent).
      {"TopK", {Kind::kPerInput}}, {"NonMaxSuppression", {Kind::kPerInput}}, {"Unique", {Kind::kPerInput}},
      // Bilinear sampling: four taps and their weights per output element.
      {"RoiAlign", {Kind::kPerOutput, 8}}, {"GridSample", {Kind::kPerOutput, 8}}, {"AffineGrid", {Kind::kPerOutput, 6}},
      {"DeformConv", {Kind::kConv}},
      // Data movement: copies with no arithmetic.
      {"Transpose", {Kind::kMovement}}, {"Concat", {Kind::kMovement}}, {"Split", {Kind::kMovement}},
      {"Slice", {Kind::kMovement}}, {"Pad", {Kind::kMovement}}, {"Tile", {Kind::kMovement}},
      {"Expand", {Kind::kMovement}}, {"Cast", {Kind::kMovement}}, {"CastLike", {Kind::kMovement}},
      {"GatherElements", {Kind::kMovement}}, {"GatherND", {Kind::kMovement}}, {"ScatterND", {Kind::kMovement}},
      {"ScatterElements", {Kind::kMovement}}, {"DepthToSpace", {Kind::kMovement}},
      {"SpaceToDepth", {Kind::kMovement}}, {"ReverseSequence", {Kind::kMovement}}, {"OneHot", {Kind::kMovement}},
      {"Compress", {Kind::kMovement}}, {"Col2Im", {Kind::kMovement}}, {"CenterCropPad", {Kind::kMovement}},
      {"Gather", {Kind::kGather}},
      {"Reshape", {Kind::kView}}, {"Flatten", {Kind::kView}}, {"Squeeze", {Kind::kView}},
      {"Unsqueeze", {Kind::kView}}, {"Identity", {Kind::kView}}, {"Dropout", {Kind::kView}},
      {"Shape", {Kind::kMetadata}}, {"Size", {Kind::kMetadata}}, {"Constant", {Kind::kMetadata}},
      {"ConstantOfShape", {Kind::kMetadata}}, {"Range", {Kind::kMetadata}}, {"EyeLike", {Kind::kMetadata}},
  };
  return *table;
}
// clang-format on

// The importer's own operators: Stack copies; a Loop or Scan kept as one operator carries its cost, the trip
// count times its body's, in the attribute kUnitCostAttribute.
OpCost InternalOpCost(const onnx::NodeProto& node, double in_bytes, double out_bytes) {
  OpCost cost;
  cost.bytes_accessed = in_bytes + out_bytes;
  const onnx::AttributeProto* unit = FindAttr(node, kUnitCostAttribute);
  if (unit != nullptr && unit->floats_size() == 3) {
    cost.flops = unit->floats(0);
    cost.bytes_accessed = unit->floats(1);
    cost.macs = unit->floats(2);
  }
  return cost;
}

double Elements(const TensorInfo* t) { return t != nullptr ? static_cast<double>(t->elements) : 0; }
double Bytes(const TensorInfo* t) { return t != nullptr ? static_cast<double>(t->bytes) : 0; }
const TensorInfo* Slot(absl::Span<const TensorInfo* const> v, size_t i) { return i < v.size() ? v[i] : nullptr; }

// Product of dims [from, rank) of t; 0 when t is absent or has fewer dims.
double TrailingProduct(const TensorInfo* t, size_t from) {
  if (t == nullptr || t->dims.size() < from) return 0;
  double p = 1;
  for (size_t i = from; i < t->dims.size(); ++i) p *= static_cast<double>(t->dims[i]);
  return p;
}

// The spatial dims of a convolution's weight ([out, in / group, kh, kw, ...]) multiplied; 0 where unknown.
int32_t KernelWindow(const TensorInfo* weight) {
  if (weight == nullptr || weight->dims.size() < 3) return 0;
  const double window = TrailingProduct(weight, 2);
  return window > 0 && window <= std::numeric_limits<int32_t>::max() ? static_cast<int32_t>(window) : 0;
}

double GemmMacs(const onnx::NodeProto& node, const TensorInfo* a, const TensorInfo* y) {
  if (a == nullptr || a->dims.size() != 2) return 0;
  const onnx::AttributeProto* trans_a = FindAttr(node, "transA");
  double k = static_cast<double>(trans_a != nullptr && trans_a->i() != 0 ? a->dims[0] : a->dims[1]);
  return Elements(y) * k;
}

double EinsumMacs(const onnx::NodeProto& node, absl::Span<const TensorInfo* const> inputs) {
  const onnx::AttributeProto* eq = FindAttr(node, "equation");
  std::vector<std::vector<int64_t>> operands;
  for (const TensorInfo* t : inputs) {
    if (t == nullptr) return 0;
    operands.push_back(t->dims);
  }
  std::optional<EinsumShape> shape = eq != nullptr ? AnalyzeEinsum(eq->s(), operands) : std::nullopt;
  return shape ? shape->iterations : 0;
}

// LSTM, GRU, RNN: X [T, B, I] (layout 1: [B, T, I]), W [D, G*H, I], R [D, G*H, H].
double RecurrentFlops(const onnx::NodeProto& node, absl::Span<const TensorInfo* const> inputs, double pointwise,
                      double* macs) {
  const TensorInfo *x = Slot(inputs, 0), *w = Slot(inputs, 1), *r = Slot(inputs, 2);
  if (x == nullptr || w == nullptr || r == nullptr || x->dims.size() != 3 || w->dims.size() != 3 ||
      r->dims.size() != 3) {
    return 0;
  }
  const onnx::AttributeProto* layout = FindAttr(node, "layout");
  bool batch_major = layout != nullptr && layout->i() == 1;
  double steps = static_cast<double>(x->dims[batch_major ? 1 : 0]);
  double batch = static_cast<double>(x->dims[batch_major ? 0 : 1]);
  double in = static_cast<double>(x->dims[2]);
  double hidden = static_cast<double>(r->dims[2]);
  double gates_by_hidden = static_cast<double>(w->dims[1]);  // gates * hidden
  double directions = static_cast<double>(w->dims[0]);
  double per_row = gates_by_hidden * (in + hidden);
  *macs = steps * directions * batch * per_row;
  return steps * directions * batch * (2 * per_row + pointwise * hidden);
}

double PoolKernel(const onnx::NodeProto& node) {
  const onnx::AttributeProto* kernel = FindAttr(node, "kernel_shape");
  double k = 1;
  if (kernel != nullptr) {
    for (int64_t d : kernel->ints()) k *= static_cast<double>(d);
  }
  return k;
}

}  // namespace

OpCost ComputeOpCost(const onnx::NodeProto& node, absl::Span<const TensorInfo* const> inputs,
                     absl::Span<const TensorInfo* const> outputs) {
  double in_bytes = 0, out_bytes = 0, out_elements = 0;
  for (const TensorInfo* t : inputs) in_bytes += Bytes(t);
  for (const TensorInfo* t : outputs) {
    out_bytes += Bytes(t);
    out_elements += Elements(t);
  }
  if (node.domain() == kInternalDomain) return InternalOpCost(node, in_bytes, out_bytes);
  OpCost cost;
  cost.bytes_accessed = in_bytes + out_bytes;
  bool standard = node.domain().empty() || node.domain() == "ai.onnx";
  auto rule = Table().find(node.op_type());
  if (!standard || rule == Table().end()) {
    cost.flops = out_elements;
    cost.is_default = true;
    return cost;
  }
  const TensorInfo* y = Slot(outputs, 0);
  double factor = rule->second.factor;
  switch (rule->second.kind) {
    case Kind::kConv:
      cost.macs = Elements(y) * TrailingProduct(Slot(inputs, 1), 1);
      cost.flops = 2 * cost.macs + (Slot(inputs, 2) != nullptr && node.op_type() == "Conv" ? Elements(y) : 0);
      cost.window = KernelWindow(Slot(inputs, 1));
      break;
    case Kind::kConvTranspose:
      cost.macs = Elements(Slot(inputs, 0)) * TrailingProduct(Slot(inputs, 1), 1);
      cost.flops = 2 * cost.macs + (Slot(inputs, 2) != nullptr ? Elements(y) : 0);
      cost.window = KernelWindow(Slot(inputs, 1));
      break;
    case Kind::kGemm:
      cost.macs = GemmMacs(node, Slot(inputs, 0), y);
      cost.flops = 2 * cost.macs + (Slot(inputs, 2) != nullptr ? Elements(y) : 0);
      break;
    case Kind::kMatMul: {
      const TensorInfo* a = Slot(inputs, 0);
      double k = a != nullptr && !a->dims.empty() ? static_cast<double>(a->dims.back()) : 0;
      cost.macs = Elements(y) * k;
      cost.flops = 2 * cost.macs;
      break;
    }
    case Kind::kEinsum:
      cost.macs = EinsumMacs(node, inputs);
      cost.flops = (inputs.size() > 1 ? 2 : 1) * cost.macs;
      break;
    case Kind::kRecurrent:
      cost.flops = RecurrentFlops(node, inputs, factor, &cost.macs);
      break;
    case Kind::kPool:
      cost.flops = factor * Elements(y) * PoolKernel(node);
      break;
    case Kind::kPerOutput:
      cost.flops = factor * Elements(y);
      break;
    case Kind::kPerInput:
      cost.flops = factor * Elements(Slot(inputs, 0));
      break;
    case Kind::kVariadic:
      cost.flops = Elements(y) * std::max<double>(1, static_cast<double>(inputs.size()) - 1);
      break;
    case Kind::kMovement:
      break;
    case Kind::kGather:
      cost.bytes_accessed = Bytes(Slot(inputs, 1)) + 2 * out_bytes;
      break;
    case Kind::kView:
    case Kind::kMetadata:
      cost.bytes_accessed = out_bytes;
      break;
  }
  return cost;
}

}  // namespace placement::onnx_import
