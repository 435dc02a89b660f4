#include "graph/onnx/constant_folding.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

#include "graph/onnx/attributes.h"
#include "graph/onnx/constant_kernels.h"
#include "graph/onnx/constant_layout.h"
#include "graph/onnx/tensor_info.h"

namespace placement::onnx_import {
namespace {

using onnx::TensorProto;
using Inputs = absl::Span<const FoldInput>;
using Folded = std::optional<ConstValue>;

template <typename T>
void AppendRaw(const std::string& raw, ConstValue* v) {
  for (size_t i = 0; i + sizeof(T) <= raw.size(); i += sizeof(T)) {
    T x;
    std::memcpy(&x, raw.data() + i, sizeof(T));
    if constexpr (std::is_floating_point_v<T>) {
      v->reals.push_back(x);
    } else {
      v->ints.push_back(static_cast<int64_t>(x));
    }
  }
}

bool Present(const FoldInput& in) { return in.value != nullptr || in.dims != nullptr || in.elem_type != 0; }

// The integer values of input k: nullopt when it is not a known integer constant.
std::optional<std::vector<int64_t>> IntsOf(Inputs in, size_t k) {
  if (k >= in.size() || in[k].value == nullptr || in[k].value->is_real) return std::nullopt;
  return in[k].value->ints;
}

// Optional input k: empty when the slot is left out, nullopt when it is present but not a known constant.
std::optional<std::vector<int64_t>> OptionalInts(Inputs in, size_t k) {
  if (k < in.size() && Present(in[k])) return IntsOf(in, k);
  return std::vector<int64_t>();
}

// An attribute before the opset that moved it to an input, the input from then on; empty when neither is given.
std::optional<std::vector<int64_t>> AttrOrInput(const onnx::NodeProto& node, const char* name, Inputs in, size_t k) {
  if (FindAttr(node, name) != nullptr) return IntsAttr(node, name);
  return OptionalInts(in, k);
}

Folded FoldConstant(const onnx::NodeProto& node) {
  if (const onnx::AttributeProto* a = FindAttr(node, "value"); a != nullptr && a->has_t()) return DecodeTensor(a->t());
  if (const onnx::AttributeProto* a = FindAttr(node, "value_int"); a != nullptr)
    return Ints(TensorProto::INT64, {}, {a->i()});
  if (const onnx::AttributeProto* a = FindAttr(node, "value_float"); a != nullptr) {
    return Reals(TensorProto::FLOAT, {}, {a->f()});
  }
  if (const onnx::AttributeProto* a = FindAttr(node, "value_ints");
      a != nullptr && a->ints_size() <= kMaxFoldElements) {
    return Ints(TensorProto::INT64, {a->ints_size()}, std::vector<int64_t>(a->ints().begin(), a->ints().end()));
  }
  if (const onnx::AttributeProto* a = FindAttr(node, "value_floats");
      a != nullptr && a->floats_size() <= kMaxFoldElements) {
    return Reals(TensorProto::FLOAT, {a->floats_size()}, std::vector<double>(a->floats().begin(), a->floats().end()));
  }
  return std::nullopt;
}

Folded FoldShape(const onnx::NodeProto& node, Inputs in) {
  if (in.empty() || in[0].dims == nullptr) return std::nullopt;
  const std::vector<int64_t>& d = *in[0].dims;
  if (node.op_type() == "Size") {
    int64_t n = 1;
    for (int64_t x : d) {
      if (__builtin_mul_overflow(n, x, &n)) return std::nullopt;
    }
    return Ints(TensorProto::INT64, {}, {n});
  }
  const int64_t rank = static_cast<int64_t>(d.size());
  int64_t start = std::clamp<int64_t>(IntAttr(node, "start", 0), -rank, rank);
  int64_t end = std::clamp<int64_t>(IntAttr(node, "end", rank), -rank, rank);
  if (start < 0) start += rank;
  if (end < 0) end += rank;
  std::vector<int64_t> values(d.begin() + start, d.begin() + std::max(start, end));
  const int64_t count = static_cast<int64_t>(values.size());
  return Ints(TensorProto::INT64, {count}, std::move(values));
}

// Squeeze, Unsqueeze, Reshape, Flatten: the data with another shape, from inference or computed here.
Folded FoldReshape(const onnx::NodeProto& node, Inputs in, const std::vector<int64_t>* output_dims) {
  const ConstValue& a = *in[0].value;
  std::optional<std::vector<int64_t>> dims;
  if (output_dims != nullptr) {
    dims = *output_dims;
  } else if (node.op_type() == "Reshape") {
    std::optional<std::vector<int64_t>> target = IntsOf(in, 1);
    if (target) dims = ReshapeDims(a.dims, *target, IntAttr(node, "allowzero", 0) != 0);
  } else if (node.op_type() == "Flatten") {
    const int64_t rank = static_cast<int64_t>(a.dims.size());
    int64_t axis = IntAttr(node, "axis", 1);
    if (axis < 0) axis += rank;
    if (axis < 0 || axis > rank) return std::nullopt;
    int64_t outer = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= a.dims[d];
    dims = std::vector<int64_t>{outer, outer > 0 ? a.size() / outer : 0};
  } else {
    std::optional<std::vector<int64_t>> axes = AttrOrInput(node, "axes", in, 1);
    if (!axes) return std::nullopt;
    dims = a.dims;
    if (node.op_type() == "Squeeze") {
      std::vector<int64_t> kept;
      for (size_t d = 0; d < a.dims.size(); ++d) {
        bool drop = axes->empty() ? a.dims[d] == 1 : false;
        for (int64_t x : *axes)
          drop = drop || NormalizeAxis(x, static_cast<int64_t>(a.dims.size())) == static_cast<int64_t>(d);
        if (!drop) kept.push_back(a.dims[d]);
      }
      dims = kept;
    } else {
      const int64_t rank = static_cast<int64_t>(a.dims.size() + axes->size());
      std::vector<bool> inserted(rank, false);
      for (int64_t x : *axes) {
        std::optional<int64_t> axis = NormalizeAxis(x, rank);
        if (!axis) return std::nullopt;
        inserted[*axis] = true;
      }
      std::vector<int64_t> out;
      size_t next = 0;
      for (int64_t d = 0; d < rank; ++d) out.push_back(inserted[d] ? 1 : (next < a.dims.size() ? a.dims[next++] : 1));
      dims = out;
    }
  }
  if (!dims || FoldableElements(*dims) != a.size()) return std::nullopt;
  ConstValue v = a;
  v.dims = *std::move(dims);
  return v;
}

Folded FoldSlice(const onnx::NodeProto& node, int opset, Inputs in) {
  if (opset < 10) {
    return Slice(*in[0].value, IntsAttr(node, "starts"), IntsAttr(node, "ends"), IntsAttr(node, "axes"), {});
  }
  std::optional<std::vector<int64_t>> starts = IntsOf(in, 1), ends = IntsOf(in, 2);
  std::optional<std::vector<int64_t>> axes = OptionalInts(in, 3), steps = OptionalInts(in, 4);
  if (!starts || !ends || !axes || !steps) return std::nullopt;
  return Slice(*in[0].value, *starts, *ends, *axes, *steps);
}

Folded FoldRange(Inputs in) {
  const ConstValue &start = *in[0].value, &limit = *in[1].value, &delta = *in[2].value;
  if (start.size() != 1 || limit.size() != 1 || delta.size() != 1 || delta.Real(0) == 0) return std::nullopt;
  const double s = start.Real(0), l = limit.Real(0), d = delta.Real(0);
  const double count = std::max(std::ceil((l - s) / d), 0.0);
  if (!(count <= kMaxFoldElements)) return std::nullopt;
  const int64_t n = static_cast<int64_t>(count);
  if (start.is_real) {
    std::vector<double> values(n);
    for (int64_t i = 0; i < n; ++i) values[i] = s + static_cast<double>(i) * d;
    return Reals(start.elem_type, {n}, std::move(values));
  }
  std::vector<int64_t> values(n);
  for (int64_t i = 0; i < n; ++i) values[i] = start.ints[0] + i * delta.ints[0];
  return Ints(start.elem_type, {n}, std::move(values));
}

Folded FoldConstantOfShape(const onnx::NodeProto& node, Inputs in) {
  std::optional<std::vector<int64_t>> shape = IntsOf(in, 0);
  std::optional<int64_t> n = shape ? FoldableElements(*shape) : std::nullopt;
  if (!n) return std::nullopt;
  ConstValue fill = Reals(TensorProto::FLOAT, {}, {0.0});
  if (const onnx::AttributeProto* v = FindAttr(node, "value"); v != nullptr && v->has_t()) {
    std::optional<ConstValue> decoded = DecodeTensor(v->t());
    if (!decoded || decoded->size() != 1) return std::nullopt;
    fill = *decoded;
  }
  ConstValue v = fill;
  v.dims = *shape;
  if (fill.is_real)
    v.reals.assign(*n, fill.reals[0]);
  else
    v.ints.assign(*n, fill.ints[0]);
  return v;
}

Folded FoldClip(const onnx::NodeProto& node, int opset, Inputs in) {
  std::optional<ConstValue> v = *in[0].value;
  auto bound = [&](const char* name, size_t k) -> std::optional<ConstValue> {
    if (opset < 11) {
      const onnx::AttributeProto* a = FindAttr(node, name);
      return a == nullptr ? std::nullopt : std::optional<ConstValue>(Reals(TensorProto::FLOAT, {}, {a->f()}));
    }
    if (k < in.size() && in[k].value != nullptr) return *in[k].value;
    return std::nullopt;
  };
  if (std::optional<ConstValue> lo = bound("min", 1)) v = Elementwise("Max", *v, *lo, false);
  if (v) {
    if (std::optional<ConstValue> hi = bound("max", 2)) v = Elementwise("Min", *v, *hi, false);
  }
  if (v) v->elem_type = in[0].value->elem_type;
  return v;
}

Folded FoldVariadic(const std::string& op, Inputs in) {
  std::optional<ConstValue> acc = *in[0].value;
  for (size_t k = 1; k < in.size() && acc; ++k) acc = Elementwise(op == "Mean" ? "Sum" : op, *acc, *in[k].value, false);
  if (acc && op == "Mean")
    acc = Elementwise("Div", *acc, Ints(TensorProto::INT64, {}, {static_cast<int64_t>(in.size())}), false);
  return acc;
}

Folded FoldReduce(const onnx::NodeProto& node, Inputs in) {
  std::optional<std::vector<int64_t>> axes = AttrOrInput(node, "axes", in, 1);
  if (!axes) return std::nullopt;
  return Reduce(node.op_type(), *in[0].value, *axes, IntAttr(node, "keepdims", 1) != 0,
                IntAttr(node, "noop_with_empty_axes", 0) != 0);
}

Folded FoldPad(const onnx::NodeProto& node, int opset, Inputs in) {
  if (StringAttr(node, "mode", "constant") != "constant") return std::nullopt;
  std::optional<std::vector<int64_t>> pads = opset < 11 ? IntsAttr(node, "pads") : IntsOf(in, 1);
  if (!pads) return std::nullopt;
  double value = opset < 11 ? FloatAttr(node, "value", 0.0f) : 0.0;
  if (opset >= 11 && in.size() > 2 && in[2].value != nullptr && in[2].value->size() == 1) value = in[2].value->Real(0);
  const int64_t rank = static_cast<int64_t>(in[0].value->dims.size());
  std::optional<std::vector<int64_t>> axes = OptionalInts(in, 3);
  if (!axes) return std::nullopt;
  if (!axes->empty()) {  // opset 18: pads for the listed axes only
    if (pads->size() != 2 * axes->size()) return std::nullopt;
    std::vector<int64_t> full(2 * rank, 0);
    for (size_t i = 0; i < axes->size(); ++i) {
      std::optional<int64_t> axis = NormalizeAxis((*axes)[i], rank);
      if (!axis) return std::nullopt;
      full[*axis] = (*pads)[i];
      full[*axis + rank] = (*pads)[i + axes->size()];
    }
    pads = full;
  }
  return PadConstant(*in[0].value, *pads, value);
}

std::optional<std::vector<ConstValue>> FoldSplit(const onnx::NodeProto& node, Inputs in) {
  const ConstValue& a = *in[0].value;
  const int64_t axis_attr = IntAttr(node, "axis", 0);
  std::optional<int64_t> axis = NormalizeAxis(axis_attr, static_cast<int64_t>(a.dims.size()));
  if (!axis) return std::nullopt;
  std::optional<std::vector<int64_t>> sizes = AttrOrInput(node, "split", in, 1);
  if (!sizes) return std::nullopt;
  if (sizes->empty()) {
    const int64_t parts = IntAttr(node, "num_outputs", node.output_size());
    if (parts < 1) return std::nullopt;
    const int64_t n = a.dims[*axis], chunk = (n + parts - 1) / parts;
    for (int64_t start = 0; start < n; start += chunk) sizes->push_back(std::min(chunk, n - start));
  }
  return Split(a, *axis, *sizes);
}

// The single-output folders; each is called only when every present input is a constant.
Folded FoldValue(const onnx::NodeProto& node, int opset, Inputs in, const std::vector<int64_t>* output_dims) {
  const std::string& op = node.op_type();
  const ConstValue& a = *in[0].value;
  if (op == "Identity" || op == "Dropout") return a;
  // From here on, operators whose inputs are all required (a slot left empty in a malformed model is not folded)
  // or whose optional inputs their folder reads through OptionalInts.
  bool all = true;
  for (const FoldInput& i : in) all = all && i.value != nullptr;
  static const char* const kOptionalInputs[] = {
      "Cast",     "Unsqueeze", "Squeeze",         "Reshape",         "Flatten",   "Expand",
      "Tile",     "Transpose", "Slice",           "ConstantOfShape", "NonZero",   "Clip",
      "Pad",      "ReduceSum", "ReduceProd",      "ReduceMax",       "ReduceMin", "ReduceMean",
      "ReduceL1", "ReduceL2",  "ReduceSumSquare", "ArgMax",          "ArgMin"};
  if (!all && std::find(std::begin(kOptionalInputs), std::end(kOptionalInputs), op) == std::end(kOptionalInputs)) {
    return std::nullopt;
  }
  if (op == "Cast") return Cast(a, IntAttr(node, "to", 0));
  if (op == "CastLike") return in.size() > 1 ? Cast(a, in[1].value->elem_type) : std::nullopt;
  if (op == "Unsqueeze" || op == "Squeeze" || op == "Reshape" || op == "Flatten") {
    return FoldReshape(node, in, output_dims);
  }
  if (op == "Expand") return IntsOf(in, 1) ? Expand(a, *IntsOf(in, 1)) : std::nullopt;
  if (op == "Tile") return IntsOf(in, 1) ? Tile(a, *IntsOf(in, 1)) : std::nullopt;
  if (op == "Transpose") return Transpose(a, IntsAttr(node, "perm"));
  if (op == "Gather" && in.size() == 2) return Gather(a, *in[1].value, IntAttr(node, "axis", 0));
  if (op == "GatherElements" && in.size() == 2) return GatherElements(a, *in[1].value, IntAttr(node, "axis", 0));
  if (op == "Concat") {
    std::vector<const ConstValue*> values;
    for (const FoldInput& i : in) values.push_back(i.value);
    return Concat(values, IntAttr(node, "axis", 0));
  }
  if (op == "Slice") return FoldSlice(node, opset, in);
  if (op == "Where" && in.size() == 3) return Where(a, *in[1].value, *in[2].value);
  if (op == "Range" && in.size() == 3) return FoldRange(in);
  if (op == "ConstantOfShape") return FoldConstantOfShape(node, in);
  if (op == "NonZero") return NonZero(a);
  if (op == "Clip") return FoldClip(node, opset, in);
  if (op == "Pad") return FoldPad(node, opset, in);
  if (op == "CumSum" && in.size() == 2 && in[1].value->size() == 1) {
    return CumSum(a, in[1].value->ints.empty() ? 0 : in[1].value->ints[0], IntAttr(node, "exclusive", 0) != 0,
                  IntAttr(node, "reverse", 0) != 0);
  }
  if (op.rfind("Reduce", 0) == 0) return FoldReduce(node, in);
  if (op == "ArgMax" || op == "ArgMin") {
    return ArgReduce(op == "ArgMax", a, IntAttr(node, "axis", 0), IntAttr(node, "keepdims", 1) != 0,
                     IntAttr(node, "select_last_index", 0) != 0);
  }
  if ((op == "Max" || op == "Min" || op == "Sum" || op == "Mean") && in.size() != 2) return FoldVariadic(op, in);
  if (op == "BitShift" && in.size() == 2) {
    const onnx::AttributeProto* direction = FindAttr(node, "direction");
    return direction == nullptr ? std::nullopt : Elementwise("BitShift" + direction->s(), a, *in[1].value, false);
  }
  if (in.size() == 1) return Unary(op, a);
  if (in.size() == 2) return Elementwise(op, a, *in[1].value, IntAttr(node, "fmod", 0) != 0);
  return std::nullopt;
}

}  // namespace

std::optional<ConstValue> DecodeTensor(const TensorProto& t) {
  if (t.data_location() == TensorProto::EXTERNAL || t.has_segment()) return std::nullopt;
  std::vector<int64_t> dims(t.dims().begin(), t.dims().end());
  std::optional<int64_t> n = FoldableElements(dims);
  if (!n) return std::nullopt;
  ConstValue v;
  v.elem_type = t.data_type();
  v.dims = std::move(dims);
  const std::string& raw = t.raw_data();
  const bool has_raw = t.has_raw_data();
  switch (t.data_type()) {
    case TensorProto::FLOAT:
      v.is_real = true;
      if (has_raw)
        AppendRaw<float>(raw, &v);
      else
        v.reals.assign(t.float_data().begin(), t.float_data().end());
      break;
    case TensorProto::DOUBLE:
      v.is_real = true;
      if (has_raw)
        AppendRaw<double>(raw, &v);
      else
        v.reals.assign(t.double_data().begin(), t.double_data().end());
      break;
    case TensorProto::INT64:
      if (has_raw)
        AppendRaw<int64_t>(raw, &v);
      else
        v.ints.assign(t.int64_data().begin(), t.int64_data().end());
      break;
    case TensorProto::INT32:
    case TensorProto::INT16:
    case TensorProto::INT8:
    case TensorProto::UINT16:
    case TensorProto::BOOL:
    case TensorProto::UINT8:
      if (!has_raw)
        v.ints.assign(t.int32_data().begin(), t.int32_data().end());
      else if (t.data_type() == TensorProto::INT32)
        AppendRaw<int32_t>(raw, &v);
      else if (t.data_type() == TensorProto::INT16)
        AppendRaw<int16_t>(raw, &v);
      else if (t.data_type() == TensorProto::INT8)
        AppendRaw<int8_t>(raw, &v);
      else if (t.data_type() == TensorProto::UINT16)
        AppendRaw<uint16_t>(raw, &v);
      else
        AppendRaw<uint8_t>(raw, &v);
      break;
    default:
      return std::nullopt;
  }
  if (v.size() != *n) return std::nullopt;
  return v;
}

std::optional<TensorProto> EncodeTensor(const ConstValue& value, const std::string& name) {
  TensorProto t;
  t.set_name(name);
  t.set_data_type(value.elem_type);
  for (int64_t d : value.dims) t.add_dims(d);
  switch (value.elem_type) {
    case TensorProto::INT64:
      for (int64_t x : value.ints) t.add_int64_data(x);
      return t;
    case TensorProto::INT32:
    case TensorProto::INT16:
    case TensorProto::INT8:
    case TensorProto::UINT16:
    case TensorProto::BOOL:
    case TensorProto::UINT8:
      for (int64_t x : value.ints) t.add_int32_data(static_cast<int32_t>(x));
      return t;
    case TensorProto::FLOAT:
      for (double x : value.reals) t.add_float_data(static_cast<float>(x));
      return t;
    case TensorProto::DOUBLE:
      for (double x : value.reals) t.add_double_data(x);
      return t;
    default:
      return std::nullopt;
  }
}

std::vector<ConstValue> FoldNode(const onnx::NodeProto& node, int opset, Inputs in,
                                 const std::vector<int64_t>* output_dims) {
  const std::string& op = node.op_type();
  if (!node.domain().empty() && node.domain() != "ai.onnx") return {};
  if (op == "Constant") {
    Folded v = FoldConstant(node);
    return v ? std::vector<ConstValue>{*std::move(v)} : std::vector<ConstValue>();
  }
  if (op == "Shape" || op == "Size") {
    Folded v = FoldShape(node, in);
    return v ? std::vector<ConstValue>{*std::move(v)} : std::vector<ConstValue>();
  }
  if (in.empty() || in[0].value == nullptr) return {};
  for (const FoldInput& i : in) {
    if (Present(i) && i.value == nullptr) return {};
  }
  if (op == "Split") {
    std::optional<std::vector<ConstValue>> parts = FoldSplit(node, in);
    if (!parts || static_cast<int>(parts->size()) != node.output_size()) return {};
    return *std::move(parts);
  }
  Folded v = FoldValue(node, opset, in, output_dims);
  if (!v) return {};
  std::vector<ConstValue> out;
  out.push_back(*std::move(v));
  return out;
}

}  // namespace placement::onnx_import
