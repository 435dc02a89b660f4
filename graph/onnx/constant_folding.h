// Evaluation of the small integer computations that exporters emit to compute shapes at run time
// (Shape -> Gather -> Div -> Concat -> Reshape). ONNX's own shape inference propagates such values only
// through a few ops, so a Transformer exported with a dynamic sequence axis would end with unknown shapes;
// evaluating them once the graph inputs are bound gives every Reshape its target shape.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "absl/types/span.h"

namespace placement::onnx_import {

// Larger tensors are never evaluated: shape computations are tiny, and the cap bounds the work a hostile
// model can ask for.
inline constexpr int64_t kMaxFoldElements = 4096;

// A constant tensor. Integer and boolean types keep their values in `ints`, floating types in `reals`.
struct ConstValue {
  int32_t elem_type = onnx::TensorProto::INT64;
  std::vector<int64_t> dims;
  bool is_real = false;
  std::vector<int64_t> ints;
  std::vector<double> reals;

  int64_t size() const { return is_real ? static_cast<int64_t>(reals.size()) : static_cast<int64_t>(ints.size()); }
};

// The value of an inline tensor of a supported type with at most kMaxFoldElements elements; nullopt otherwise.
std::optional<ConstValue> DecodeTensor(const onnx::TensorProto& tensor);

// The value as a TensorProto named `name`, for ONNX inference functions that read constant inputs.
std::optional<onnx::TensorProto> EncodeTensor(const ConstValue& value, const std::string& name);

struct FoldInput {
  const ConstValue* value = nullptr;         // nullptr: not a known constant
  const std::vector<int64_t>* dims = nullptr;  // nullptr: shape not fully known
};

// The value of output 0 of `node` when it can be computed from its constant inputs (or, for Shape and Size,
// from its input's shape); nullopt when it cannot. `output_dims` is the shape inference found for output 0,
// or nullptr. Never throws; malformed attributes simply make the node not foldable.
std::optional<ConstValue> FoldNode(const onnx::NodeProto& node, int opset, absl::Span<const FoldInput> inputs,
                                   const std::vector<int64_t>* output_dims);

}  // namespace placement::onnx_import
