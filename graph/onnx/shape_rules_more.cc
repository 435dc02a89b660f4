// The shape rules of newer operators that rearrange images, grids and signals, and the importer's Stack.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "graph/onnx/attributes.h"
#include "graph/onnx/shape_rule_helpers.h"
#include "graph/onnx/shape_rules.h"

namespace placement::onnx_import {

using namespace shape_rule;  // NOLINT: the helpers every rule uses

absl::Status Col2ImShape(const onnx::NodeProto&, Inputs in, Outputs* out) {
  absl::StatusOr<const TensorInfo*> x = Need(in, 0, "input");
  if (!x.ok()) return x.status();
  std::optional<std::vector<int64_t>> image = ConstInts(in, 1), block = ConstInts(in, 2);
  if (!image || !block || image->size() != block->size() || (*x)->dims.size() != 3) {
    return absl::InvalidArgumentError("Col2Im needs an input [N, C x block, L] and constant image and block shapes");
  }
  int64_t block_elements = 1;
  for (int64_t b : *block) {
    if (b < 1) return absl::InvalidArgumentError("block_shape must be positive");
    block_elements *= b;
  }
  if ((*x)->dims[1] % block_elements != 0) {
    return absl::InvalidArgumentError("the input's channel axis is not a multiple of the block size");
  }
  std::vector<int64_t> dims = {(*x)->dims[0], (*x)->dims[1] / block_elements};
  dims.insert(dims.end(), image->begin(), image->end());
  Set(out, 0, (*x)->elem_type, dims);
  return absl::OkStatus();
}

absl::Status CenterCropPadShape(const onnx::NodeProto& node, Inputs in, Outputs* out) {
  absl::StatusOr<const TensorInfo*> x = Need(in, 0, "input_data");
  if (!x.ok()) return x.status();
  const int64_t rank = static_cast<int64_t>((*x)->dims.size());
  absl::StatusOr<std::vector<int64_t>> checked = AxesAttribute(node, rank);
  if (!checked.ok()) return checked.status();
  std::vector<int64_t> dims = (*x)->dims;
  std::optional<std::vector<int64_t>> shape = ConstInts(in, 1);
  if (shape && shape->size() != checked->size()) return absl::InvalidArgumentError("shape has the wrong length");
  for (size_t i = 0; i < checked->size(); ++i) {
    if (shape && (*shape)[i] < 0) return absl::InvalidArgumentError("shape has a negative value");
    dims[(*checked)[i]] = shape ? (*shape)[i] : kUnknown;
  }
  Set(out, 0, (*x)->elem_type, dims);
  return absl::OkStatus();
}

absl::Status DeformConvShape(const onnx::NodeProto&, Inputs in, Outputs* out) {
  absl::StatusOr<const TensorInfo*> x = Need(in, 0, "X");
  absl::StatusOr<const TensorInfo*> w = Need(in, 1, "W");
  absl::StatusOr<const TensorInfo*> offset = Need(in, 2, "offset");
  for (const auto* s : {&x, &w, &offset}) {
    if (!s->ok()) return s->status();
  }
  const size_t rank = (*x)->dims.size();
  if (rank < 3 || (*w)->dims.size() != rank || (*offset)->dims.size() != rank) {
    return absl::InvalidArgumentError("X, W and offset must have the same rank, at least 3");
  }
  std::vector<int64_t> dims = {(*x)->dims[0], (*w)->dims[0]};
  dims.insert(dims.end(), (*offset)->dims.begin() + 2, (*offset)->dims.end());
  Set(out, 0, (*x)->elem_type, dims);
  return absl::OkStatus();
}

absl::Status AffineGridShape(const onnx::NodeProto&, Inputs in, Outputs* out) {
  absl::StatusOr<const TensorInfo*> theta = Need(in, 0, "theta");
  if (!theta.ok()) return theta.status();
  std::optional<std::vector<int64_t>> size = ConstInts(in, 1);
  if (Absent(in, 1)) return absl::InvalidArgumentError("input 1 (size) is missing");
  const size_t n = size ? size->size() : (in[1].info->dims.empty() ? 0 : static_cast<size_t>(in[1].info->dims[0]));
  if (n != 4 && n != 5) return absl::InvalidArgumentError("size must be [N, C, H, W] or [N, C, D, H, W]");
  std::vector<int64_t> dims = {size ? (*size)[0] : (*theta)->dims.empty() ? kUnknown : (*theta)->dims[0]};
  for (size_t d = 2; d < n; ++d) dims.push_back(size ? (*size)[d] : kUnknown);
  dims.push_back(static_cast<int64_t>(n) - 2);
  Set(out, 0, (*theta)->elem_type, dims);
  return absl::OkStatus();
}

absl::Status GridSampleShape(const onnx::NodeProto&, Inputs in, Outputs* out) {
  absl::StatusOr<const TensorInfo*> x = Need(in, 0, "X");
  absl::StatusOr<const TensorInfo*> grid = Need(in, 1, "grid");
  if (!x.ok() || !grid.ok()) return x.ok() ? grid.status() : x.status();
  const std::vector<int64_t>& g = (*grid)->dims;
  if ((*x)->dims.size() < 3 || g.size() != (*x)->dims.size()) {
    return absl::InvalidArgumentError("X [N, C, ...] and grid [N, ..., r] must have the same rank");
  }
  std::vector<int64_t> dims = {(*x)->dims[0], (*x)->dims[1]};
  dims.insert(dims.end(), g.begin() + 1, g.end() - 1);
  Set(out, 0, (*x)->elem_type, dims);
  return absl::OkStatus();
}

absl::Status DftShape(const onnx::NodeProto& node, Inputs in, Outputs* out) {
  absl::StatusOr<const TensorInfo*> x = Need(in, 0, "input");
  if (!x.ok()) return x.status();
  std::vector<int64_t> dims = (*x)->dims;
  const int64_t rank = static_cast<int64_t>(dims.size());
  if (rank < 2 || (dims.back() != 1 && dims.back() != 2)) {
    return absl::InvalidArgumentError("the input's last axis must hold 1 (real) or 2 (complex) values");
  }
  int64_t axis = -2;
  if (std::optional<std::vector<int64_t>> given = ConstInts(in, 2); given && given->size() == 1) axis = (*given)[0];
  std::optional<int64_t> a = NormalizeAxis(axis, rank - 1);
  if (!a) return absl::InvalidArgumentError("axis is out of range");
  int64_t length = dims[*a];
  if (!Absent(in, 1)) {
    std::optional<std::vector<int64_t>> given = ConstInts(in, 1);
    length = given && given->size() == 1 ? (*given)[0] : kUnknown;
  }
  const bool onesided = IntAttr(node, "onesided", 0) != 0 && IntAttr(node, "inverse", 0) == 0;
  dims[*a] = length < 0 ? kUnknown : onesided ? length / 2 + 1 : length;
  dims.back() = 2;
  Set(out, 0, (*x)->elem_type, dims);
  return absl::OkStatus();
}

absl::Status ImageDecoderShape(const onnx::NodeProto& node, Inputs, Outputs* out) {
  const int64_t channels = StringAttr(node, "pixel_format", "RGB") == "Grayscale" ? 1 : 3;
  Set(out, 0, onnx::TensorProto::UINT8, {kUnknown, kUnknown, channels});  // the image's size is in its bytes
  return absl::OkStatus();
}

absl::Status StringSplitShape(const onnx::NodeProto&, Inputs in, Outputs* out) {
  absl::StatusOr<const TensorInfo*> x = Need(in, 0, "X");
  if (!x.ok()) return x.status();
  std::vector<int64_t> dims = (*x)->dims;
  Set(out, 1, onnx::TensorProto::INT64, dims);
  dims.push_back(kUnknown);  // the most substrings any element splits into
  Set(out, 0, onnx::TensorProto::STRING, dims);
  return absl::OkStatus();
}

absl::Status StackShape(const onnx::NodeProto& node, Inputs in, Outputs* out) {
  absl::StatusOr<const TensorInfo*> first = Need(in, 0, "values");
  if (!first.ok()) return first.status();
  for (size_t k = 1; k < in.size(); ++k) {
    if (in[k].info == nullptr || in[k].info->dims != (*first)->dims) {
      return absl::InvalidArgumentError("the stacked values differ in shape from one iteration to the next");
    }
  }
  std::vector<int64_t> dims = (*first)->dims;
  std::optional<int64_t> axis = NormalizeAxis(IntAttr(node, "axis", 0), static_cast<int64_t>(dims.size()) + 1);
  if (!axis) return absl::InvalidArgumentError("axis is out of range");
  dims.insert(dims.begin() + *axis, static_cast<int64_t>(in.size()));
  Set(out, 0, (*first)->elem_type, dims);
  return absl::OkStatus();
}

}  // namespace placement::onnx_import
