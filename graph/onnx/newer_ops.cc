#include "graph/onnx/newer_ops.h"

#include <map>

#include "absl/strings/str_cat.h"
#include "graph/onnx/shape_rules.h"

namespace placement::onnx_import {
namespace {

struct Version {
  int since;
  ShapeFn own;  // nullptr: the opset-17 schema's inference, without its checks
};

// Every operator of the default domain with a version after opset 17 (onnx/docs/Changelog.md, opsets 18 to
// 21), and how its shapes are inferred from then on. If, Loop and Scan never reach inference: the importer
// expands them first (control_flow.h).
const std::map<std::string, std::vector<Version>>& Table() {
  static const auto* table = new std::map<std::string, std::vector<Version>>{
      {"AffineGrid", {{20, &AffineGridShape}}},
      {"AveragePool", {{19, &PoolShape}}},
      {"BitwiseAnd", {{18, &BroadcastShape}}},
      {"BitwiseNot", {{18, &SameShape}}},
      {"BitwiseOr", {{18, &BroadcastShape}}},
      {"BitwiseXor", {{18, &BroadcastShape}}},
      {"Cast", {{19, &CastShape}, {21, &CastShape}}},
      {"CastLike", {{19, &CastLikeShape}, {21, &CastLikeShape}}},
      {"CenterCropPad", {{18, &CenterCropPadShape}}},
      {"Col2Im", {{18, &Col2ImShape}}},
      {"Constant", {{19, &ConstantShape}, {21, &ConstantShape}}},
      {"ConstantOfShape", {{20, &ConstantOfShapeShape}, {21, &ConstantOfShapeShape}}},
      {"DFT", {{20, &DftShape}}},
      {"DeformConv", {{19, &DeformConvShape}}},
      {"DequantizeLinear", {{19, &DequantizeShape}, {21, &DequantizeShape}}},
      {"Equal", {{19, nullptr}}},
      {"Flatten", {{21, nullptr}}},
      {"Gelu", {{20, &SameShape}}},
      {"GridSample", {{20, &GridSampleShape}}},
      {"GroupNormalization", {{18, &SameShape}, {21, &SameShape}}},
      {"Identity", {{19, &SameShape}, {21, &SameShape}}},
      {"ImageDecoder", {{20, &ImageDecoderShape}}},
      {"IsInf", {{20, nullptr}}},
      {"IsNaN", {{20, nullptr}}},
      {"LpPool", {{18, &PoolShape}}},
      {"Mish", {{18, &SameShape}}},
      {"OptionalGetElement", {{18, nullptr}}},
      {"OptionalHasElement", {{18, nullptr}}},
      {"Pad", {{18, &PadShape}, {19, &PadShape}, {21, &PadShape}}},
      {"QLinearMatMul", {{21, nullptr}}},
      {"QuantizeLinear", {{19, &QuantizeShape}, {21, &QuantizeShape}}},
      {"ReduceL1", {{18, &ReduceShape}}},
      {"ReduceL2", {{18, &ReduceShape}}},
      {"ReduceLogSum", {{18, &ReduceShape}}},
      {"ReduceLogSumExp", {{18, &ReduceShape}}},
      {"ReduceMax", {{18, &ReduceShape}, {20, &ReduceShape}}},
      {"ReduceMean", {{18, &ReduceShape}}},
      {"ReduceMin", {{18, &ReduceShape}, {20, &ReduceShape}}},
      {"ReduceProd", {{18, &ReduceShape}}},
      {"ReduceSumSquare", {{18, &ReduceShape}}},
      {"RegexFullMatch", {{20, &BoolSameShape}}},
      {"Reshape", {{19, nullptr}, {21, nullptr}}},
      {"Resize", {{18, &ResizeShape}, {19, &ResizeShape}}},
      {"ScatterElements", {{18, nullptr}}},
      {"ScatterND", {{18, nullptr}}},
      {"Shape", {{19, nullptr}, {21, nullptr}}},
      {"Size", {{19, nullptr}, {21, nullptr}}},
      {"Split", {{18, &SplitShape}}},
      {"Squeeze", {{21, nullptr}}},
      {"StringConcat", {{20, &BroadcastShape}}},
      {"StringSplit", {{20, &StringSplitShape}}},
      {"Transpose", {{21, nullptr}}},
      {"Unsqueeze", {{21, nullptr}}},
  };
  return *table;
}

}  // namespace

std::optional<NewerOpRule> NewerOp(const std::string& op, int opset) {
  const auto& table = Table();
  auto it = table.find(op);
  if (it == table.end()) return std::nullopt;
  const Version* in_effect = nullptr;
  for (const Version& v : it->second) {
    if (v.since <= opset) in_effect = &v;
  }
  if (in_effect == nullptr) return std::nullopt;
  return NewerOpRule{in_effect->own};
}

ShapeFn InternalOp(const std::string& op) { return op == "Stack" ? &StackShape : nullptr; }

}  // namespace placement::onnx_import
