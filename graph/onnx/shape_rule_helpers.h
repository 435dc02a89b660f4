// Helpers the shape rules share (shape_rules.cc, shape_rules_more.cc): setting an output, reading an input that
// must be there, constant integer inputs and axes.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "graph/onnx/constant_kernels.h"
#include "graph/onnx/newer_ops.h"

namespace placement::onnx_import::shape_rule {

using Inputs = absl::Span<const InputView>;
using Outputs = std::vector<onnx::TypeProto>;
constexpr int64_t kUnknown = -1;

inline void Set(Outputs* outputs, size_t o, int32_t elem_type, const std::vector<int64_t>& dims) {
  if (o >= outputs->size()) return;
  onnx::TypeProto_Tensor* t = (*outputs)[o].mutable_tensor_type();
  t->set_elem_type(elem_type);
  t->mutable_shape()->clear_dim();
  for (int64_t d : dims) {
    onnx::TensorShapeProto_Dimension* dim = t->mutable_shape()->add_dim();
    if (d >= 0) dim->set_dim_value(d);
  }
}

inline absl::StatusOr<const TensorInfo*> Need(Inputs in, size_t k, const char* what) {
  if (k >= in.size() || in[k].info == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("input ", k, " (", what, ") is missing"));
  }
  return in[k].info;
}

// The integer values of input k when it is a known constant.
inline std::optional<std::vector<int64_t>> ConstInts(Inputs in, size_t k) {
  if (k >= in.size() || in[k].value == nullptr || in[k].value->is_real) return std::nullopt;
  return in[k].value->ints;
}

inline bool Absent(Inputs in, size_t k) { return k >= in.size() || in[k].info == nullptr; }

// Axes as non-negative indices below `rank`; an error for one out of range or repeated.
inline absl::StatusOr<std::vector<int64_t>> Axes(std::vector<int64_t> axes, int64_t rank) {
  std::vector<bool> seen(rank, false);
  for (int64_t& a : axes) {
    std::optional<int64_t> axis = NormalizeAxis(a, rank);
    if (!axis || seen[*axis])
      return absl::InvalidArgumentError(absl::StrCat("axis ", a, " is out of range or repeated"));
    seen[*axis] = true;
    a = *axis;
  }
  return axes;
}

// The node's `axes` attribute checked against `rank`; every axis when it has none.
inline absl::StatusOr<std::vector<int64_t>> AxesAttribute(const onnx::NodeProto& node, int64_t rank) {
  std::vector<int64_t> axes;
  for (const onnx::AttributeProto& a : node.attribute()) {
    if (a.name() == "axes") axes.assign(a.ints().begin(), a.ints().end());
  }
  if (axes.empty()) {
    for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
  }
  return Axes(std::move(axes), rank);
}

}  // namespace placement::onnx_import::shape_rule
