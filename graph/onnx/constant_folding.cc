#include "graph/onnx/constant_folding.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "graph/onnx/constant_kernels.h"

namespace placement::onnx_import {
namespace {

using onnx::TensorProto;

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

const onnx::AttributeProto* Attr(const onnx::NodeProto& node, const char* name) {
  for (const onnx::AttributeProto& a : node.attribute()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

int64_t IntAttr(const onnx::NodeProto& node, const char* name, int64_t fallback) {
  const onnx::AttributeProto* a = Attr(node, name);
  return a != nullptr && a->has_i() ? a->i() : fallback;
}

std::optional<int64_t> Scalar(const FoldInput& in) {
  if (in.value == nullptr || in.value->size() != 1 || in.value->is_real) return std::nullopt;
  return in.value->ints[0];
}

std::optional<ConstValue> FoldSlice(const onnx::NodeProto& node, int opset, absl::Span<const FoldInput> in) {
  int64_t start = 0, end = 0, step = 1;
  if (opset < 10) {
    const onnx::AttributeProto* s = Attr(node, "starts");
    const onnx::AttributeProto* e = Attr(node, "ends");
    if (s == nullptr || e == nullptr || s->ints_size() != 1 || e->ints_size() != 1) return std::nullopt;
    start = s->ints(0);
    end = e->ints(0);
  } else {
    if (in.size() < 3) return std::nullopt;
    std::optional<int64_t> s = Scalar(in[1]), e = Scalar(in[2]);
    if (!s || !e) return std::nullopt;
    start = *s;
    end = *e;
    if (in.size() > 3 && in[3].value != nullptr) {
      std::optional<int64_t> axis = Scalar(in[3]);
      if (!axis || (*axis != 0 && *axis != -1)) return std::nullopt;  // 1-D data has only axis 0
    }
    if (in.size() > 4 && in[4].value != nullptr) {
      std::optional<int64_t> st = Scalar(in[4]);
      if (!st) return std::nullopt;
      step = *st;
    }
  }
  return Slice1D(*in[0].value, start, end, step);
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
  switch (t.data_type()) {
    case TensorProto::FLOAT:
      v.is_real = true;
      if (t.has_raw_data()) AppendRaw<float>(raw, &v);
      else v.reals.assign(t.float_data().begin(), t.float_data().end());
      break;
    case TensorProto::DOUBLE:
      v.is_real = true;
      if (t.has_raw_data()) AppendRaw<double>(raw, &v);
      else v.reals.assign(t.double_data().begin(), t.double_data().end());
      break;
    case TensorProto::INT64:
      if (t.has_raw_data()) AppendRaw<int64_t>(raw, &v);
      else v.ints.assign(t.int64_data().begin(), t.int64_data().end());
      break;
    case TensorProto::INT32:
      if (t.has_raw_data()) AppendRaw<int32_t>(raw, &v);
      else v.ints.assign(t.int32_data().begin(), t.int32_data().end());
      break;
    case TensorProto::BOOL:
    case TensorProto::UINT8:
      if (t.has_raw_data()) AppendRaw<uint8_t>(raw, &v);
      else v.ints.assign(t.int32_data().begin(), t.int32_data().end());
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

std::optional<ConstValue> FoldNode(const onnx::NodeProto& node, int opset, absl::Span<const FoldInput> in,
                                   const std::vector<int64_t>* output_dims) {
  const std::string& op = node.op_type();
  if (!node.domain().empty() && node.domain() != "ai.onnx") return std::nullopt;
  if (op == "Constant") {
    if (const onnx::AttributeProto* a = Attr(node, "value"); a != nullptr && a->has_t()) {
      return DecodeTensor(a->t());
    }
    if (const onnx::AttributeProto* a = Attr(node, "value_int"); a != nullptr) {
      return Ints(TensorProto::INT64, {}, {a->i()});
    }
    if (const onnx::AttributeProto* a = Attr(node, "value_float"); a != nullptr) {
      return Reals(TensorProto::FLOAT, {}, {a->f()});
    }
    if (const onnx::AttributeProto* a = Attr(node, "value_ints"); a != nullptr && a->ints_size() <= kMaxFoldElements) {
      return Ints(TensorProto::INT64, {a->ints_size()}, std::vector<int64_t>(a->ints().begin(), a->ints().end()));
    }
    return std::nullopt;
  }
  if (in.empty()) return std::nullopt;
  if (op == "Shape" || op == "Size") {
    if (in[0].dims == nullptr) return std::nullopt;
    const std::vector<int64_t>& d = *in[0].dims;
    if (op == "Size") {
      int64_t n = 1;
      for (int64_t x : d) {
        if (__builtin_mul_overflow(n, x, &n)) return std::nullopt;
      }
      return Ints(TensorProto::INT64, {}, {n});
    }
    int64_t rank = static_cast<int64_t>(d.size());
    int64_t start = std::clamp<int64_t>(IntAttr(node, "start", 0), -rank, rank);
    int64_t end = std::clamp<int64_t>(IntAttr(node, "end", rank), -rank, rank);
    if (start < 0) start += rank;
    if (end < 0) end += rank;
    std::vector<int64_t> values(d.begin() + start, d.begin() + std::max(start, end));
    int64_t count = static_cast<int64_t>(values.size());
    return Ints(TensorProto::INT64, {count}, std::move(values));
  }
  for (const FoldInput& i : in) {
    if (i.value == nullptr && op != "Slice" && op != "Unsqueeze" && op != "Squeeze") return std::nullopt;
  }
  if (in[0].value == nullptr) return std::nullopt;
  const ConstValue& a = *in[0].value;
  if (op == "Identity") return a;
  if (op == "Cast") return Cast(a, IntAttr(node, "to", 0));
  if (op == "Unsqueeze" || op == "Squeeze" || op == "Reshape" || op == "Flatten") {
    if (output_dims == nullptr || FoldableElements(*output_dims) != a.size()) return std::nullopt;
    ConstValue v = a;
    v.dims = *output_dims;
    return v;
  }
  if (op == "Expand") {
    std::optional<int64_t> n = output_dims != nullptr ? FoldableElements(*output_dims) : std::nullopt;
    if (!n || !Broadcast(a.dims, *output_dims)) return std::nullopt;
    return Pick(a, BroadcastIndex(a.dims, *output_dims, *n), *output_dims);
  }
  if (op == "Gather" && in.size() == 2) return Gather(a, *in[1].value, IntAttr(node, "axis", 0));
  if (op == "Concat") {
    std::vector<const ConstValue*> values;
    for (const FoldInput& i : in) values.push_back(i.value);
    return Concat(values, IntAttr(node, "axis", 0));
  }
  if (op == "Slice") return FoldSlice(node, opset, in);
  if (op == "Where" && in.size() == 3) {
    const ConstValue &x = *in[1].value, &y = *in[2].value;
    std::optional<std::vector<int64_t>> dims = Broadcast(a.dims, x.dims);
    if (dims) dims = Broadcast(*dims, y.dims);
    std::optional<int64_t> n = dims ? FoldableElements(*dims) : std::nullopt;
    if (!n || a.is_real || x.is_real != y.is_real) return std::nullopt;
    std::vector<int64_t> ic = BroadcastIndex(a.dims, *dims, *n), ix = BroadcastIndex(x.dims, *dims, *n),
                         iy = BroadcastIndex(y.dims, *dims, *n);
    ConstValue v = x.is_real ? Reals(x.elem_type, *dims, {}) : Ints(x.elem_type, *dims, {});
    for (int64_t i = 0; i < *n; ++i) {
      const ConstValue& src = a.ints[ic[i]] ? x : y;
      int64_t k = a.ints[ic[i]] ? ix[i] : iy[i];
      if (x.is_real) v.reals.push_back(src.reals[k]);
      else v.ints.push_back(src.ints[k]);
    }
    return v;
  }
  if (op == "Range" && in.size() == 3) {
    std::optional<int64_t> start = Scalar(in[0]), limit = Scalar(in[1]), delta = Scalar(in[2]);
    if (!start || !limit || !delta || *delta == 0) return std::nullopt;
    std::vector<int64_t> values;
    for (int64_t x = *start; *delta > 0 ? x < *limit : x > *limit;) {
      if (static_cast<int64_t>(values.size()) >= kMaxFoldElements) return std::nullopt;
      values.push_back(x);
      if (__builtin_add_overflow(x, *delta, &x)) break;
    }
    int64_t count = static_cast<int64_t>(values.size());
    return Ints(a.elem_type, {count}, std::move(values));
  }
  if (op == "ConstantOfShape") {
    if (a.is_real) return std::nullopt;
    std::optional<int64_t> n = FoldableElements(a.ints);
    if (!n) return std::nullopt;
    ConstValue fill = Reals(TensorProto::FLOAT, {}, {0.0});
    if (const onnx::AttributeProto* v = Attr(node, "value"); v != nullptr && v->has_t()) {
      std::optional<ConstValue> decoded = DecodeTensor(v->t());
      if (!decoded || decoded->size() != 1) return std::nullopt;
      fill = *decoded;
    }
    ConstValue v = fill;
    v.dims = a.ints;
    if (fill.is_real) v.reals.assign(*n, fill.reals[0]);
    else v.ints.assign(*n, fill.ints[0]);
    return v;
  }
  if (in.size() == 1) return Unary(op, a);
  if (in.size() == 2) return Elementwise(op, a, *in[1].value);
  return std::nullopt;
}

}  // namespace placement::onnx_import
