#include "graph/op_class.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/strip.h"
#include "graph/graph.h"

namespace placement {
namespace {

constexpr absl::string_view kNames[kNumOpClasses] = {
    "gemm",           "thin_gemm",     "conv", "thin_conv", "pooling", "normalization", "elementwise",
    "transcendental", "data_movement", "view", "optimizer", "other",   "wide_thin_conv", "channels_last_thin_conv",
    "inference_batch_norm", "training_batch_norm"};

const absl::flat_hash_map<absl::string_view, OpClass>& TypeClasses() {
  static const auto* const kTypes = new absl::flat_hash_map<absl::string_view, OpClass>{
      {"MatMul", OpClass::kGemm},
      {"Gemm", OpClass::kGemm},
      {"Einsum", OpClass::kGemm},
      {"MatMulInteger", OpClass::kGemm},
      {"QLinearMatMul", OpClass::kGemm},
      {"LSTM", OpClass::kGemm},
      {"GRU", OpClass::kGemm},
      {"RNN", OpClass::kGemm},
      {"Attention", OpClass::kGemm},
      {"ScaledDotProductAttention", OpClass::kGemm},
      {"Conv", OpClass::kConv},
      {"ConvTranspose", OpClass::kConv},
      {"ConvInteger", OpClass::kConv},
      {"QLinearConv", OpClass::kConv},
      {"MaxPool", OpClass::kPooling},
      {"AveragePool", OpClass::kPooling},
      {"GlobalAveragePool", OpClass::kNormalization},
      {"GlobalMaxPool", OpClass::kNormalization},
      {"LpPool", OpClass::kPooling},
      {"MaxRoiPool", OpClass::kPooling},
      {"RoiAlign", OpClass::kPooling},
      {"MaxUnpool", OpClass::kPooling},
      {"BatchNormalization", OpClass::kNormalization},
      {"LayerNormalization", OpClass::kNormalization},
      {"SimplifiedLayerNormalization", OpClass::kNormalization},  // onnxruntime's RMSNorm
      {"InstanceNormalization", OpClass::kNormalization},
      {"GroupNormalization", OpClass::kNormalization},
      {"LpNormalization", OpClass::kNormalization},
      {"Softmax", OpClass::kNormalization},
      {"LogSoftmax", OpClass::kNormalization},
      {"LRN", OpClass::kNormalization},
      {"ReduceMean", OpClass::kNormalization},
      {"ReduceSum", OpClass::kNormalization},
      {"ReduceMax", OpClass::kNormalization},
      {"ReduceMin", OpClass::kNormalization},
      {"ReduceProd", OpClass::kNormalization},
      {"ReduceL2", OpClass::kNormalization},
      {"Reshape", OpClass::kView},
      {"Flatten", OpClass::kView},
      {"Transpose", OpClass::kDataMovement},
      {"Concat", OpClass::kDataMovement},
      {"Split", OpClass::kDataMovement},
      {"Slice", OpClass::kDataMovement},
      {"Gather", OpClass::kDataMovement},
      {"GatherElements", OpClass::kDataMovement},
      {"GatherND", OpClass::kDataMovement},
      {"ScatterND", OpClass::kDataMovement},
      {"ScatterElements", OpClass::kDataMovement},
      {"Squeeze", OpClass::kView},
      {"Unsqueeze", OpClass::kView},
      {"Expand", OpClass::kDataMovement},
      {"Tile", OpClass::kDataMovement},
      {"Pad", OpClass::kDataMovement},
      {"Identity", OpClass::kView},
      {"Resize", OpClass::kDataMovement},
      {"DepthToSpace", OpClass::kDataMovement},
      {"SpaceToDepth", OpClass::kDataMovement},
      {"Stack", OpClass::kDataMovement},
      {"ConcatFromSequence", OpClass::kDataMovement},
      {"SplitToSequence", OpClass::kDataMovement},
      {"Shape", OpClass::kView},
      {"Size", OpClass::kView},
      {"Dropout", OpClass::kView},
      {"Constant", OpClass::kView},
      {"ConstantOfShape", OpClass::kView},
  };
  return *kTypes;
}

}  // namespace

absl::string_view OpClassName(OpClass c) { return kNames[static_cast<int>(c)]; }

std::optional<OpClass> OpClassFromName(absl::string_view name) {
  for (int c = 0; c < kNumOpClasses; ++c) {
    if (kNames[c] == name) return static_cast<OpClass>(c);
  }
  return std::nullopt;
}

double ClampEfficiency(double efficiency) { return std::clamp(efficiency, 1e-3, 1e3); }

bool IsBackwardType(absl::string_view op_type) { return absl::EndsWith(op_type, "Grad"); }

namespace {

// Operators that evaluate an exponential, a logarithm or the like per element.
bool IsTranscendental(absl::string_view op_type) {
  static constexpr absl::string_view kTypes[] = {"Sigmoid", "Tanh", "Exp",  "Log",  "Erf", "Gelu", "Softplus",
                                                 "Elu",     "Selu", "Celu", "Mish", "Pow", "Sin",  "Cos"};
  return std::find(std::begin(kTypes), std::end(kTypes), op_type) != std::end(kTypes);
}

// The forward operator's type of a training step's operator ("ConvWeightGrad", "ConvGrad": "Conv").
absl::string_view ForwardType(absl::string_view op_type) {
  if (!absl::ConsumeSuffix(&op_type, "WeightGrad")) absl::ConsumeSuffix(&op_type, "Grad");
  return op_type;
}

}  // namespace

OpClass ClassOfType(absl::string_view op_type) {
  // A concatenation's gradient is slices of its output's gradient, which eager runtimes hand on as views.
  if (op_type == "ConcatGrad") return OpClass::kView;
  op_type = ForwardType(op_type);
  if (absl::StartsWith(op_type, "Apply")) return OpClass::kOptimizer;  // ApplyAdam, ApplyMomentum, ...
  if (IsTranscendental(op_type)) return OpClass::kTranscendental;
  const auto& types = TypeClasses();
  const auto it = types.find(op_type);
  if (it != types.end()) return it->second;
  // Every other operator of the importer's tables reads its inputs once and writes its outputs once:
  // activations, arithmetic, comparisons, casts, and the unknown ones it costs that way.
  return OpClass::kElementwise;
}

OpClass BackwardFamily(OpClass c) {
  if (c == OpClass::kThinConv) return OpClass::kConv;
  if (c == OpClass::kThinGemm) return OpClass::kGemm;
  return c;
}

OpClass FamilyOfAutogradFunction(absl::string_view function) {
  // Names as torch writes them: "<Aten function>Backward<n>", the accumulation into .grad as
  // "torch::autograd::AccumulateGrad". Matched by the stem's pieces, since the stems vary by version and
  // backend (ConvolutionBackward0, MkldnnConvolutionBackward0, ConvDepthwise2DBackward0, CudnnBatchNormBackward0).
  if (absl::StrContains(function, "AccumulateGrad")) return OpClass::kOptimizer;
  struct Stem {
    absl::string_view piece;
    OpClass family;
  };
  static constexpr Stem kStems[] = {
      {"Conv", OpClass::kConv},
      {"Addmm", OpClass::kGemm},
      {"Mm", OpClass::kGemm},
      {"Bmm", OpClass::kGemm},
      {"Matmul", OpClass::kGemm},
      {"Linear", OpClass::kGemm},
      {"Pool", OpClass::kPooling},
      {"BatchNorm", OpClass::kNormalization},
      {"LayerNorm", OpClass::kNormalization},
      {"GroupNorm", OpClass::kNormalization},
      {"Softmax", OpClass::kNormalization},
      {"Mean", OpClass::kNormalization},
      {"Cat", OpClass::kView},
      {"Stack", OpClass::kDataMovement},
      {"Split", OpClass::kDataMovement},
      {"Slice", OpClass::kDataMovement},
      {"Select", OpClass::kDataMovement},
      {"Index", OpClass::kDataMovement},
      {"Permute", OpClass::kDataMovement},
      {"Transpose", OpClass::kDataMovement},
      {"Clone", OpClass::kDataMovement},
      {"Pad", OpClass::kDataMovement},
      {"Roll", OpClass::kDataMovement},
      {"View", OpClass::kView},
      {"Reshape", OpClass::kView},
      {"Squeeze", OpClass::kView},
      {"Expand", OpClass::kView},
      {"AsStrided", OpClass::kView},
      // After the views: "Exp" would match "ExpandBackward0".
      {"Sigmoid", OpClass::kTranscendental},
      {"Tanh", OpClass::kTranscendental},
      {"Silu", OpClass::kTranscendental},
      {"Gelu", OpClass::kTranscendental},
      {"Exp", OpClass::kTranscendental},
      {"Log", OpClass::kTranscendental},
      {"Erf", OpClass::kTranscendental},
      {"Softplus", OpClass::kTranscendental},
      {"Elu", OpClass::kTranscendental},
      {"Mish", OpClass::kTranscendental},
      {"Pow", OpClass::kTranscendental},
  };
  for (const Stem& stem : kStems) {
    if (absl::StrContains(function, stem.piece)) return stem.family;
  }
  if (absl::StartsWith(function, "TBackward")) return OpClass::kView;
  return OpClass::kElementwise;
}

OpClass RefineByIntensity(OpClass c, double flops, double bytes_accessed, int32_t window, bool channels_last) {
  const bool thin = bytes_accessed > 0 && flops < kThinFlopsPerByte * bytes_accessed;
  if ((c == OpClass::kConv || c == OpClass::kThinConv) && thin) {  // kThinConv: a class refined before, read back
    if (channels_last) return OpClass::kChannelsLastThinConv;
    return window > kMaxNarrowWindow ? OpClass::kWideThinConv : OpClass::kThinConv;
  }
  if (c == OpClass::kGemm && thin) return OpClass::kThinGemm;
  return c;
}

OpClass ClassOf(const Graph& graph, int32_t op) {
  // Eager PyTorch runs a model outside training in eval mode, where a batch normalization applies its running
  // statistics: a graph without a backward is that. In a training step it computes the batch's, forward and back.
  // Its backward computes the input's and the weights' gradients in one kernel, both of that class.
  if (ForwardType(graph.op_type(op)) == "BatchNormalization") {
    return graph.has_backward() ? OpClass::kTrainingBatchNorm : OpClass::kInferenceBatchNorm;
  }
  return RefineByIntensity(ClassOfType(graph.op_type(op)), graph.flops(op), graph.bytes_accessed(op), graph.window(op),
                           graph.channels_last(op));
}

}  // namespace placement
