#include "graph/onnx/data_dependent.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "graph/onnx/attributes.h"
#include "graph/onnx/tensor_info.h"
#include "graph/onnx/value_bounds.h"

namespace placement::onnx_import {
namespace {

const TensorInfo* InputInfo(absl::Span<const InputView> inputs, size_t k) {
  return k < inputs.size() ? inputs[k].info : nullptr;
}

// Dimension `axis` (negative from the end) of input k, or nullopt.
std::optional<int64_t> InputDim(absl::Span<const InputView> inputs, size_t k, int64_t axis) {
  const TensorInfo* info = InputInfo(inputs, k);
  if (info == nullptr) return std::nullopt;
  const int64_t rank = static_cast<int64_t>(info->dims.size());
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return std::nullopt;
  return info->dims[axis];
}

std::optional<DimAssumption> Assume(std::optional<int64_t> value, std::string reason) {
  if (!value) return std::nullopt;
  return DimAssumption{*value, std::move(reason)};
}

std::optional<DimAssumption> NonMaxSuppressionBoxes(absl::Span<const InputView> inputs) {
  const TensorInfo* boxes = InputInfo(inputs, 0);
  const TensorInfo* scores = InputInfo(inputs, 1);
  if (boxes == nullptr || scores == nullptr || boxes->dims.size() != 3 || scores->dims.size() != 3) {
    return std::nullopt;
  }
  const int64_t batches = boxes->dims[0], candidates = boxes->dims[1], classes = scores->dims[1];
  int64_t per_class = candidates;
  std::string limit = "every candidate box";
  if (inputs.size() > 2 && inputs[2].value != nullptr && inputs[2].value->size() == 1 && !inputs[2].value->is_real) {
    per_class = std::min(per_class, std::max<int64_t>(inputs[2].value->ints[0], 0));
    limit = absl::StrCat("max_output_boxes_per_class ", inputs[2].value->ints[0]);
  } else if (inputs.size() <= 2 || inputs[2].info == nullptr) {
    per_class = 0;  // the input left out means no box is selected (ONNX's default of 0)
    limit = "max_output_boxes_per_class left out (0)";
  }
  int64_t total = 0;
  if (__builtin_mul_overflow(batches * classes, per_class, &total)) return std::nullopt;
  return DimAssumption{total, absl::StrCat("NonMaxSuppression keeps at most ", batches, " x ", classes, " x ",
                                           per_class, " boxes: ", limit)};
}

// The most element i of input k can be: its value when constant, else its finite upper bound.
std::optional<int64_t> Most(absl::Span<const InputView> inputs, size_t k, int64_t i) {
  if (k >= inputs.size()) return std::nullopt;
  if (const ConstValue* v = inputs[k].value; v != nullptr) {
    if (i < 0 || i >= v->size()) return std::nullopt;
    return static_cast<int64_t>(v->Real(i));
  }
  const Bounds* b = inputs[k].bounds;
  if (b == nullptr || i < 0 || !(b->Upper(i) < 9.0e18)) return std::nullopt;
  return static_cast<int64_t>(std::max(b->Upper(i), 0.0));
}

// Whether element i of input k is known exactly (a constant, or bounds that meet).
bool Exactly(absl::Span<const InputView> inputs, size_t k, int64_t i) {
  if (k >= inputs.size()) return false;
  if (inputs[k].value != nullptr) return true;
  const Bounds* b = inputs[k].bounds;
  return b != nullptr && !b->uniform && i >= 0 && i < b->lo.size() && b->lo.Real(i) == b->hi.Real(i);
}

// Sizes given by a tensor computed from the data (ConstantOfShape, Expand, Tile, Reshape, Resize's sizes, TopK's
// k, Range): the most its values can be.
std::optional<DimAssumption> FromBoundedSizes(const onnx::NodeProto& node, int axis, absl::Span<const InputView> in) {
  const std::string& op = node.op_type();
  const TensorInfo* x = InputInfo(in, 0);
  const int64_t rank = x == nullptr ? 0 : static_cast<int64_t>(x->dims.size());
  std::optional<int64_t> most;
  bool exact = false;
  if (op == "ConstantOfShape") {
    most = Most(in, 0, axis);
    exact = Exactly(in, 0, axis);
  } else if (op == "Reshape" || op == "Expand") {
    const TensorInfo* shape = InputInfo(in, 1);
    const int64_t length = shape == nullptr || shape->dims.size() != 1 ? 0 : shape->dims[0];
    const int64_t out_rank = op == "Expand" ? std::max(rank, length) : length;
    most = Most(in, 1, axis - (out_rank - length));
    std::optional<int64_t> own = InputDim(in, 0, axis - (out_rank - rank));
    if (op == "Expand" && most && own) most = std::max(*most, *own);
  } else if (op == "Tile") {
    std::optional<int64_t> repeats = Most(in, 1, axis), own = InputDim(in, 0, axis);
    if (repeats && own) most = *repeats * *own;
  } else if (op == "Resize" && FindAttr(node, "axes") == nullptr) {
    most = Most(in, 3, axis);
    exact = Exactly(in, 3, axis);
  } else if (op == "Range") {
    const Bounds* limit = in.size() > 1 ? in[1].bounds : nullptr;
    std::optional<int64_t> hi = Most(in, 1, 0);
    const ConstValue* start = in.size() > 0 ? in[0].value : nullptr;
    const ConstValue* delta = in.size() > 2 ? in[2].value : nullptr;
    if ((limit != nullptr || hi) && start != nullptr && delta != nullptr && start->size() == 1 && delta->size() == 1 &&
        delta->Real(0) > 0 && hi) {
      most = std::max<int64_t>(
          0, static_cast<int64_t>(std::ceil((static_cast<double>(*hi) - start->Real(0)) / delta->Real(0))));
    }
  }
  if (!most) return std::nullopt;
  return DimAssumption{*most,
                       absl::StrCat(op, " of sizes computed from the data: at most ", *most,
                                    ", from the bounds of the values they are computed from"),
                       exact};
}

}  // namespace

std::optional<int64_t> DataDependentRank(const onnx::NodeProto& node, int output, absl::Span<const InputView> inputs) {
  static const char* const kSameRank[] = {"Slice", "Pad", "Resize", "Upsample", "Tile", "CenterCropPad", "TopK"};
  const TensorInfo* x = InputInfo(inputs, 0);
  if (x == nullptr || (!node.domain().empty() && node.domain() != "ai.onnx")) return std::nullopt;
  for (const char* op : kSameRank) {
    if (node.op_type() == op && (output == 0 || node.op_type() == "TopK")) return static_cast<int64_t>(x->dims.size());
  }
  return std::nullopt;
}

std::optional<DimAssumption> DataDependentDim(const onnx::NodeProto& node, int output, int axis,
                                              absl::Span<const InputView> inputs) {
  const std::string& op = node.op_type();
  if (!node.domain().empty() && node.domain() != "ai.onnx") return std::nullopt;
  const TensorInfo* x = InputInfo(inputs, 0);
  if (x == nullptr) return std::nullopt;
  if (op == "NonZero" && output == 0 && axis == 1) {
    return DimAssumption{x->elements, absl::StrCat("NonZero of ", x->elements, " elements: at most all of them")};
  }
  if (op == "NonMaxSuppression" && output == 0 && axis == 0) return NonMaxSuppressionBoxes(inputs);
  if (std::optional<DimAssumption> bounded = FromBoundedSizes(node, axis, inputs)) return bounded;
  if (op == "TopK" && output < 2) {
    int64_t topk_axis = IntAttr(node, "axis", -1);
    if (topk_axis < 0) topk_axis += static_cast<int64_t>(x->dims.size());
    std::optional<DimAssumption> a =
        Assume(InputDim(inputs, 0, axis), "TopK with a computed k: at most the whole axis");
    if (a && axis != topk_axis) a->exact = true;  // the other axes are the input's
    return a;
  }
  if (op == "Unique" || (op == "Compress" && output == 0)) {
    if (FindAttr(node, "axis") == nullptr || (op == "Unique" && output == 2)) {
      return DimAssumption{x->elements, absl::StrCat(op, " of ", x->elements, " elements: at most all of them")};
    }
    return Assume(InputDim(inputs, 0, IntAttr(node, "axis", 0)), absl::StrCat(op, ": at most the whole axis"));
  }
  if (op == "Slice" && output == 0) {
    return Assume(InputDim(inputs, 0, axis), "Slice with computed bounds: at most the whole axis");
  }
  if ((op == "Resize" || op == "Upsample") && output == 0) {
    return Assume(InputDim(inputs, 0, axis), absl::StrCat(op, " with computed sizes: taken as the input's size"));
  }
  if ((op == "Pad" || op == "Tile" || op == "CenterCropPad") && output == 0) {
    return Assume(InputDim(inputs, 0, axis),
                  absl::StrCat(op, " with amounts from the data: taken as the input's size"));
  }
  return std::nullopt;
}

}  // namespace placement::onnx_import
