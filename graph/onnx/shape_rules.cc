#include "graph/onnx/shape_rules.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "absl/strings/str_cat.h"
#include "graph/onnx/attributes.h"
#include "graph/onnx/constant_kernels.h"
#include "graph/onnx/shape_rule_helpers.h"

namespace placement::onnx_import {
namespace {

using namespace shape_rule;  // NOLINT: the helpers every rule uses

int64_t OutputSize(int64_t in, int64_t pad, int64_t kernel, int64_t stride, int64_t dilation, bool ceil_mode) {
  const int64_t span = dilation * (kernel - 1) + 1;
  const int64_t room = in + pad - span;
  if (room < 0) return 0;
  int64_t out = (ceil_mode ? (room + stride - 1) / stride : room / stride) + 1;
  return out;
}

}  // namespace

absl::Status SameShape(const onnx::NodeProto&, Inputs in, Outputs* out) {
  absl::StatusOr<const TensorInfo*> x = Need(in, 0, "X");
  if (!x.ok()) return x.status();
  Set(out, 0, (*x)->elem_type, (*x)->dims);
  return absl::OkStatus();
}

absl::Status BoolSameShape(const onnx::NodeProto&, Inputs in, Outputs* out) {
  absl::StatusOr<const TensorInfo*> x = Need(in, 0, "X");
  if (!x.ok()) return x.status();
  Set(out, 0, onnx::TensorProto::BOOL, (*x)->dims);
  return absl::OkStatus();
}

absl::Status BroadcastShape(const onnx::NodeProto&, Inputs in, Outputs* out) {
  absl::StatusOr<const TensorInfo*> a = Need(in, 0, "A");
  absl::StatusOr<const TensorInfo*> b = Need(in, 1, "B");
  if (!a.ok() || !b.ok()) return a.ok() ? b.status() : a.status();
  std::optional<std::vector<int64_t>> dims = Broadcast((*a)->dims, (*b)->dims);
  if (!dims) return absl::InvalidArgumentError("the inputs' shapes do not broadcast");
  Set(out, 0, (*a)->elem_type, *dims);
  return absl::OkStatus();
}

absl::Status CastShape(const onnx::NodeProto& node, Inputs in, Outputs* out) {
  absl::StatusOr<const TensorInfo*> x = Need(in, 0, "input");
  if (!x.ok()) return x.status();
  const int64_t to = IntAttr(node, "to", 0);
  if (!IsKnownDataType(static_cast<int32_t>(to))) {
    return absl::InvalidArgumentError(absl::StrCat("attribute 'to' is not a data type: ", to));
  }
  Set(out, 0, static_cast<int32_t>(to), (*x)->dims);
  return absl::OkStatus();
}

absl::Status CastLikeShape(const onnx::NodeProto&, Inputs in, Outputs* out) {
  absl::StatusOr<const TensorInfo*> x = Need(in, 0, "input");
  absl::StatusOr<const TensorInfo*> like = Need(in, 1, "target_type");
  if (!x.ok() || !like.ok()) return x.ok() ? like.status() : x.status();
  Set(out, 0, (*like)->elem_type, (*x)->dims);
  return absl::OkStatus();
}

absl::Status ConstantShape(const onnx::NodeProto& node, Inputs, Outputs* out) {
  if (node.attribute_size() != 1) return absl::InvalidArgumentError("a Constant needs exactly one value attribute");
  const onnx::AttributeProto& a = node.attribute(0);
  const std::string& name = a.name();
  if (name == "value" && a.has_t()) {
    if (!IsKnownDataType(a.t().data_type())) return absl::InvalidArgumentError("its value has an unknown data type");
    Set(out, 0, a.t().data_type(), std::vector<int64_t>(a.t().dims().begin(), a.t().dims().end()));
  } else if (name == "value_float" || name == "value_int" || name == "value_string") {
    Set(out, 0,
        name == "value_float" ? onnx::TensorProto::FLOAT
        : name == "value_int" ? onnx::TensorProto::INT64
                              : onnx::TensorProto::STRING,
        {});
  } else if (name == "value_floats" || name == "value_ints" || name == "value_strings") {
    const int64_t n = name == "value_floats" ? a.floats_size()
                      : name == "value_ints" ? a.ints_size()
                                             : a.strings_size();
    Set(out, 0,
        name == "value_floats" ? onnx::TensorProto::FLOAT
        : name == "value_ints" ? onnx::TensorProto::INT64
                               : onnx::TensorProto::STRING,
        {n});
  } else {
    return absl::InvalidArgumentError(absl::StrCat("attribute '", name, "' is not a Constant's value"));
  }
  return absl::OkStatus();
}

absl::Status ConstantOfShapeShape(const onnx::NodeProto& node, Inputs in, Outputs* out) {
  if (Absent(in, 0)) return absl::InvalidArgumentError("input 0 (input) is missing");
  int32_t type = onnx::TensorProto::FLOAT;
  if (const onnx::AttributeProto* v = FindAttr(node, "value"); v != nullptr && v->has_t()) type = v->t().data_type();
  std::optional<std::vector<int64_t>> shape = ConstInts(in, 0);
  if (!shape) {
    const std::vector<int64_t>& d = in[0].info->dims;
    Set(out, 0, type, std::vector<int64_t>(d.empty() ? 0 : static_cast<size_t>(d[0]), kUnknown));
    return absl::OkStatus();
  }
  for (int64_t d : *shape) {
    if (d < 0) return absl::InvalidArgumentError("the shape has a negative dimension");
  }
  Set(out, 0, type, *shape);
  return absl::OkStatus();
}

absl::Status QuantizeShape(const onnx::NodeProto& node, Inputs in, Outputs* out) {
  absl::StatusOr<const TensorInfo*> x = Need(in, 0, "x");
  if (!x.ok()) return x.status();
  int32_t type = onnx::TensorProto::UINT8;
  if (!Absent(in, 2)) type = in[2].info->elem_type;
  if (const int64_t given = IntAttr(node, "output_dtype", 0); given != 0) type = static_cast<int32_t>(given);
  Set(out, 0, type, (*x)->dims);
  return absl::OkStatus();
}

absl::Status DequantizeShape(const onnx::NodeProto& node, Inputs in, Outputs* out) {
  absl::StatusOr<const TensorInfo*> x = Need(in, 0, "x");
  absl::StatusOr<const TensorInfo*> scale = Need(in, 1, "x_scale");
  if (!x.ok() || !scale.ok()) return x.ok() ? scale.status() : x.status();
  int32_t type = (*scale)->elem_type;
  if (const int64_t given = IntAttr(node, "output_dtype", 0); given != 0) type = static_cast<int32_t>(given);
  Set(out, 0, type, (*x)->dims);
  return absl::OkStatus();
}

absl::Status ReduceShape(const onnx::NodeProto& node, Inputs in, Outputs* out) {
  absl::StatusOr<const TensorInfo*> x = Need(in, 0, "data");
  if (!x.ok()) return x.status();
  const int64_t rank = static_cast<int64_t>((*x)->dims.size());
  const bool keep = IntAttr(node, "keepdims", 1) != 0;
  std::optional<std::vector<int64_t>> axes = IntsAttr(node, "axes");
  if (!Absent(in, 1)) axes = ConstInts(in, 1);
  if (!axes) {  // axes computed from the data: which ones is unknown
    Set(out, 0, (*x)->elem_type, std::vector<int64_t>(keep ? rank : 0, kUnknown));
    return keep ? absl::OkStatus() : absl::InvalidArgumentError("axes depend on the data and keepdims is 0");
  }
  if (axes->empty() && IntAttr(node, "noop_with_empty_axes", 0) != 0) {
    Set(out, 0, (*x)->elem_type, (*x)->dims);
    return absl::OkStatus();
  }
  absl::StatusOr<std::vector<int64_t>> checked = Axes(*axes, rank);
  if (!checked.ok()) return checked.status();
  std::vector<bool> reduced(rank, checked->empty());
  for (int64_t a : *checked) reduced[a] = true;
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < rank; ++d) {
    if (!reduced[d])
      dims.push_back((*x)->dims[d]);
    else if (keep)
      dims.push_back(1);
  }
  Set(out, 0, (*x)->elem_type, dims);
  return absl::OkStatus();
}

absl::Status PadShape(const onnx::NodeProto&, Inputs in, Outputs* out) {
  absl::StatusOr<const TensorInfo*> x = Need(in, 0, "data");
  if (!x.ok()) return x.status();
  const int64_t rank = static_cast<int64_t>((*x)->dims.size());
  std::optional<std::vector<int64_t>> pads = ConstInts(in, 1);
  std::vector<int64_t> axes(rank);
  for (int64_t d = 0; d < rank; ++d) axes[d] = d;
  if (!Absent(in, 3)) {
    std::optional<std::vector<int64_t>> given = ConstInts(in, 3);
    if (!given)
      pads.reset();
    else
      axes = *given;
  }
  std::vector<int64_t> dims = (*x)->dims;
  if (!pads) {
    std::fill(dims.begin(), dims.end(), kUnknown);  // pads computed from the data
    Set(out, 0, (*x)->elem_type, dims);
    return absl::OkStatus();
  }
  absl::StatusOr<std::vector<int64_t>> checked = Axes(axes, rank);
  if (!checked.ok()) return checked.status();
  if (pads->size() != 2 * checked->size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("pads has ", pads->size(), " values for ", checked->size(), " axes"));
  }
  for (size_t i = 0; i < checked->size(); ++i) {
    int64_t& d = dims[(*checked)[i]];
    if (__builtin_add_overflow(d, (*pads)[i] + (*pads)[i + checked->size()], &d) || d < 0) {
      return absl::InvalidArgumentError("the padded size is negative or overflows");
    }
  }
  Set(out, 0, (*x)->elem_type, dims);
  return absl::OkStatus();
}

absl::Status SplitShape(const onnx::NodeProto& node, Inputs in, Outputs* out) {
  absl::StatusOr<const TensorInfo*> x = Need(in, 0, "input");
  if (!x.ok()) return x.status();
  const int64_t rank = static_cast<int64_t>((*x)->dims.size());
  std::optional<int64_t> axis = NormalizeAxis(IntAttr(node, "axis", 0), rank);
  if (!axis) return absl::InvalidArgumentError("axis is out of range");
  const int64_t n = (*x)->dims[*axis];
  std::vector<int64_t> sizes;
  if (!Absent(in, 1)) {
    std::optional<std::vector<int64_t>> given = ConstInts(in, 1);
    if (!given) return absl::InvalidArgumentError("the split sizes depend on the data");
    sizes = *given;
  } else {
    const int64_t parts = IntAttr(node, "num_outputs", node.output_size());
    if (parts < 1 || parts != node.output_size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("num_outputs ", parts, " differs from the ", node.output_size(), " outputs"));
    }
    const int64_t chunk = (n + parts - 1) / parts;
    for (int64_t k = 0; k < parts; ++k) sizes.push_back(std::max<int64_t>(std::min(chunk, n - k * chunk), 0));
  }
  int64_t total = 0;
  for (int64_t s : sizes) total += s < 0 ? n + 1 : s;
  if (static_cast<int>(sizes.size()) != node.output_size() || total != n) {
    return absl::InvalidArgumentError(absl::StrCat("split sizes do not add up to the axis' ", n));
  }
  for (size_t k = 0; k < sizes.size(); ++k) {
    std::vector<int64_t> dims = (*x)->dims;
    dims[*axis] = sizes[k];
    Set(out, k, (*x)->elem_type, dims);
  }
  return absl::OkStatus();
}

absl::Status ResizeShape(const onnx::NodeProto& node, Inputs in, Outputs* out) {
  absl::StatusOr<const TensorInfo*> x = Need(in, 0, "X");
  if (!x.ok()) return x.status();
  const int64_t rank = static_cast<int64_t>((*x)->dims.size());
  absl::StatusOr<std::vector<int64_t>> checked = AxesAttribute(node, rank);
  if (!checked.ok()) return checked.status();
  std::vector<int64_t> dims = (*x)->dims;
  const bool has_sizes = !Absent(in, 3), has_scales = !Absent(in, 2) && in[2].info->elements > 0;
  std::optional<std::vector<int64_t>> sizes = has_sizes ? ConstInts(in, 3) : std::nullopt;
  const ConstValue* scales = has_scales ? in[2].value : nullptr;
  if (sizes) {
    if (sizes->size() != checked->size()) return absl::InvalidArgumentError("sizes has the wrong length");
    const std::string policy = StringAttr(node, "keep_aspect_ratio_policy", "stretch");
    double scale = policy == "not_larger" ? INFINITY : 0;
    for (size_t i = 0; i < checked->size(); ++i) {
      const double r = dims[(*checked)[i]] > 0 ? static_cast<double>((*sizes)[i]) / dims[(*checked)[i]] : 1.0;
      scale = policy == "not_larger" ? std::min(scale, r) : std::max(scale, r);
    }
    for (size_t i = 0; i < checked->size(); ++i) {
      int64_t& d = dims[(*checked)[i]];
      d = policy == "stretch" ? (*sizes)[i] : static_cast<int64_t>(std::round(scale * static_cast<double>(d)));
    }
  } else if (scales != nullptr && scales->is_real) {
    if (scales->size() != static_cast<int64_t>(checked->size())) {
      return absl::InvalidArgumentError("scales has the wrong length");
    }
    for (size_t i = 0; i < checked->size(); ++i) {
      int64_t& d = dims[(*checked)[i]];
      const double scaled = std::floor(static_cast<double>(d) * scales->reals[i]);
      if (!(scaled >= 0 && scaled < 9.0e18)) return absl::InvalidArgumentError("a scale gives an invalid size");
      d = static_cast<int64_t>(scaled);
    }
  } else if (has_sizes || has_scales) {
    for (int64_t a : *checked) dims[a] = kUnknown;  // computed from the data
  } else {
    return absl::InvalidArgumentError("neither scales nor sizes is given");
  }
  Set(out, 0, (*x)->elem_type, dims);
  return absl::OkStatus();
}

absl::Status PoolShape(const onnx::NodeProto& node, Inputs in, Outputs* out) {
  absl::StatusOr<const TensorInfo*> x = Need(in, 0, "X");
  if (!x.ok()) return x.status();
  const std::vector<int64_t>& xd = (*x)->dims;
  const size_t spatial = xd.size() < 2 ? 0 : xd.size() - 2;
  std::vector<int64_t> kernel = IntsAttr(node, "kernel_shape"), strides = IntsAttr(node, "strides"),
                       dilations = IntsAttr(node, "dilations"), pads = IntsAttr(node, "pads");
  if (spatial == 0 || kernel.size() != spatial) {
    return absl::InvalidArgumentError("kernel_shape must give one size per spatial axis of an input [N,C,...]");
  }
  if (strides.empty()) strides.assign(spatial, 1);
  if (dilations.empty()) dilations.assign(spatial, 1);
  if (pads.empty()) pads.assign(2 * spatial, 0);
  if (strides.size() != spatial || dilations.size() != spatial || pads.size() != 2 * spatial) {
    return absl::InvalidArgumentError("strides, dilations or pads have the wrong length");
  }
  const std::string auto_pad = StringAttr(node, "auto_pad", "NOTSET");
  const bool ceil_mode = IntAttr(node, "ceil_mode", 0) != 0;
  std::vector<int64_t> dims = {xd[0], xd[1]};
  for (size_t i = 0; i < spatial; ++i) {
    if (kernel[i] < 1 || strides[i] < 1 || dilations[i] < 1) {
      return absl::InvalidArgumentError("kernel_shape, strides and dilations must be positive");
    }
    const int64_t n = xd[i + 2];
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      dims.push_back((n + strides[i] - 1) / strides[i]);
    } else if (auto_pad == "VALID") {
      dims.push_back(OutputSize(n, 0, kernel[i], strides[i], dilations[i], true));
    } else {
      int64_t o = OutputSize(n, pads[i] + pads[i + spatial], kernel[i], strides[i], dilations[i], ceil_mode);
      // A window may not start in the end padding (ONNX and PyTorch drop such a last window).
      if (ceil_mode && o > 0 && (o - 1) * strides[i] >= n + pads[i]) --o;
      dims.push_back(o);
    }
  }
  Set(out, 0, (*x)->elem_type, dims);
  return absl::OkStatus();
}

}  // namespace placement::onnx_import
