// Evaluation of the small computations exporters emit to compute sizes at run time: Shape -> Gather -> Div
// -> Concat -> Reshape in every attention layer, ConstantOfShape -> Concat -> Slice (negative step) -> Transpose
// -> Cast for a Pad whose pads come from shapes, a Loop's trip count, an If's condition. ONNX's own shape
// inference propagates such values through a few ops only; evaluating any operator whose inputs are constants
// or shapes, once the graph inputs are bound, resolves every size that static shapes determine.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "absl/types/span.h"

namespace placement::onnx_import {

// Larger tensors are never evaluated: size computations are tiny, and the cap bounds the work a hostile model
// can ask for.
inline constexpr int64_t kMaxFoldElements = 4096;

// A constant tensor. Integer and boolean types keep their values in `ints`, floating types in `reals`.
struct ConstValue {
  int32_t elem_type = onnx::TensorProto::INT64;
  std::vector<int64_t> dims;
  bool is_real = false;
  std::vector<int64_t> ints;
  std::vector<double> reals;

  int64_t size() const { return is_real ? static_cast<int64_t>(reals.size()) : static_cast<int64_t>(ints.size()); }
  double Real(int64_t i) const { return is_real ? reals[i] : static_cast<double>(ints[i]); }
};

// The value of an inline tensor of a supported type with at most kMaxFoldElements elements; nullopt otherwise.
std::optional<ConstValue> DecodeTensor(const onnx::TensorProto& tensor);

// The value as a TensorProto named `name`, for ONNX inference functions that read constant inputs.
std::optional<onnx::TensorProto> EncodeTensor(const ConstValue& value, const std::string& name);

struct FoldInput {
  const ConstValue* value = nullptr;           // nullptr: not a known constant (or the slot is empty)
  const std::vector<int64_t>* dims = nullptr;  // nullptr: shape not fully known
  int32_t elem_type = 0;                       // 0: unknown
};

// The values of the node's outputs, from output 0 on, as far as they can be computed from constant inputs (or,
// for Shape and Size, from the input's shape); empty when none can. `output_dims` is the shape inference
// found for output 0, or nullptr. Never throws; malformed attributes simply make the node not foldable.
std::vector<ConstValue> FoldNode(const onnx::NodeProto& node, int opset, absl::Span<const FoldInput> inputs,
                                 const std::vector<int64_t>* output_dims);

}  // namespace placement::onnx_import
