#include "graph/onnx/constant_kernels.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

namespace placement::onnx_import {
namespace {

using onnx::TensorProto;

bool IsRealType(int32_t t) {
  return t == TensorProto::FLOAT || t == TensorProto::DOUBLE || t == TensorProto::FLOAT16 ||
         t == TensorProto::BFLOAT16;
}

bool IsIntType(int32_t t) {
  switch (t) {
    case TensorProto::INT64: case TensorProto::INT32: case TensorProto::INT16: case TensorProto::INT8:
    case TensorProto::UINT64: case TensorProto::UINT32: case TensorProto::UINT16: case TensorProto::UINT8:
    case TensorProto::BOOL:
      return true;
    default:
      return false;
  }
}

// Normalizes a possibly negative axis; nullopt when out of range.
std::optional<int64_t> Axis(int64_t axis, int64_t rank) {
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return std::nullopt;
  return axis;
}

}  // namespace

std::optional<int64_t> FoldableElements(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0 || __builtin_mul_overflow(n, d, &n) || n > kMaxFoldElements) return std::nullopt;
  }
  return n;
}

ConstValue Ints(int32_t type, std::vector<int64_t> dims, std::vector<int64_t> values) {
  ConstValue v;
  v.elem_type = type;
  v.dims = std::move(dims);
  v.ints = std::move(values);
  return v;
}

ConstValue Reals(int32_t type, std::vector<int64_t> dims, std::vector<double> values) {
  ConstValue v;
  v.elem_type = type;
  v.dims = std::move(dims);
  v.is_real = true;
  v.reals = std::move(values);
  return v;
}

// Numpy broadcasting of two shapes.
std::optional<std::vector<int64_t>> Broadcast(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  size_t rank = std::max(a.size(), b.size());
  std::vector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t x = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t y = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (x != y && x != 1 && y != 1) return std::nullopt;
    out[i] = x == 1 ? y : x;
  }
  return out;
}

// For each element of `out`, the flat index of the element of a tensor of shape `in` broadcast to it.
std::vector<int64_t> BroadcastIndex(const std::vector<int64_t>& in, const std::vector<int64_t>& out, int64_t n) {
  std::vector<int64_t> index(n, 0);
  size_t offset = out.size() - in.size();
  for (int64_t flat = 0; flat < n; ++flat) {
    int64_t rest = flat, src = 0, stride = 1;
    for (size_t d = out.size(); d-- > 0;) {
      int64_t coord = rest % out[d];
      rest /= out[d];
      if (d >= offset) {
        int64_t size = in[d - offset];
        if (size != 1) src += coord * stride;
        stride *= size;
      }
    }
    index[flat] = src;
  }
  return index;
}

std::optional<ConstValue> Elementwise(const std::string& op, const ConstValue& a, const ConstValue& b) {
  std::optional<std::vector<int64_t>> dims = Broadcast(a.dims, b.dims);
  if (!dims || a.is_real != b.is_real) return std::nullopt;
  std::optional<int64_t> n = FoldableElements(*dims);
  if (!n) return std::nullopt;
  std::vector<int64_t> ia = BroadcastIndex(a.dims, *dims, *n), ib = BroadcastIndex(b.dims, *dims, *n);
  bool compare = op == "Equal" || op == "Less" || op == "Greater" || op == "LessOrEqual" || op == "GreaterOrEqual";
  if (a.is_real) {
    std::vector<double> r(*n);
    std::vector<int64_t> c(*n);
    for (int64_t i = 0; i < *n; ++i) {
      double x = a.reals[ia[i]], y = b.reals[ib[i]];
      if (op == "Add") r[i] = x + y;
      else if (op == "Sub") r[i] = x - y;
      else if (op == "Mul") r[i] = x * y;
      else if (op == "Div") r[i] = x / y;
      else if (op == "Pow") r[i] = std::pow(x, y);
      else if (op == "Max") r[i] = std::max(x, y);
      else if (op == "Min") r[i] = std::min(x, y);
      else if (op == "Equal") c[i] = x == y;
      else if (op == "Less") c[i] = x < y;
      else if (op == "Greater") c[i] = x > y;
      else if (op == "LessOrEqual") c[i] = x <= y;
      else if (op == "GreaterOrEqual") c[i] = x >= y;
      else return std::nullopt;
    }
    return compare ? Ints(TensorProto::BOOL, *dims, std::move(c)) : Reals(a.elem_type, *dims, std::move(r));
  }
  std::vector<int64_t> r(*n);
  for (int64_t i = 0; i < *n; ++i) {
    int64_t x = a.ints[ia[i]], y = b.ints[ib[i]];
    bool overflow = false;
    if (op == "Add") overflow = __builtin_add_overflow(x, y, &r[i]);
    else if (op == "Sub") overflow = __builtin_sub_overflow(x, y, &r[i]);
    else if (op == "Mul") overflow = __builtin_mul_overflow(x, y, &r[i]);
    else if (op == "Div" || op == "Mod") {
      if (y == 0 || (x == std::numeric_limits<int64_t>::min() && y == -1)) return std::nullopt;
      r[i] = op == "Div" ? x / y : x % y;
    } else if (op == "Max") r[i] = std::max(x, y);
    else if (op == "Min") r[i] = std::min(x, y);
    else if (op == "Equal") r[i] = x == y;
    else if (op == "Less") r[i] = x < y;
    else if (op == "Greater") r[i] = x > y;
    else if (op == "LessOrEqual") r[i] = x <= y;
    else if (op == "GreaterOrEqual") r[i] = x >= y;
    else if (op == "And") r[i] = x && y;
    else if (op == "Or") r[i] = x || y;
    else return std::nullopt;
    if (overflow) return std::nullopt;
  }
  return Ints(compare ? TensorProto::BOOL : a.elem_type, *dims, std::move(r));
}

std::optional<ConstValue> Unary(const std::string& op, const ConstValue& a) {
  ConstValue v = a;
  if (a.is_real) {
    std::function<double(double)> f;
    if (op == "Neg") f = [](double x) { return -x; };
    else if (op == "Abs") f = [](double x) { return std::fabs(x); };
    else if (op == "Sqrt") f = [](double x) { return std::sqrt(x); };
    else if (op == "Floor") f = [](double x) { return std::floor(x); };
    else if (op == "Ceil") f = [](double x) { return std::ceil(x); };
    else if (op == "Reciprocal") f = [](double x) { return 1.0 / x; };
    else return std::nullopt;
    for (double& x : v.reals) x = f(x);
    return v;
  }
  for (int64_t& x : v.ints) {
    if (op == "Neg" && x != std::numeric_limits<int64_t>::min()) x = -x;
    else if (op == "Abs" && x != std::numeric_limits<int64_t>::min()) x = x < 0 ? -x : x;
    else if (op == "Not") x = !x;
    else return std::nullopt;
  }
  return v;
}

std::optional<ConstValue> Cast(const ConstValue& a, int64_t to) {
  if (IsRealType(static_cast<int32_t>(to))) {
    std::vector<double> r(a.size());
    for (int64_t i = 0; i < a.size(); ++i) r[i] = a.is_real ? a.reals[i] : static_cast<double>(a.ints[i]);
    return Reals(static_cast<int32_t>(to), a.dims, std::move(r));
  }
  if (!IsIntType(static_cast<int32_t>(to))) return std::nullopt;
  std::vector<int64_t> r(a.size());
  for (int64_t i = 0; i < a.size(); ++i) {
    if (!a.is_real) {
      r[i] = a.ints[i];
    } else if (!std::isfinite(a.reals[i]) || std::fabs(a.reals[i]) > 9.0e18) {
      return std::nullopt;
    } else {
      r[i] = static_cast<int64_t>(a.reals[i]);
    }
    if (to == TensorProto::BOOL) r[i] = r[i] != 0;
  }
  return Ints(static_cast<int32_t>(to), a.dims, std::move(r));
}

// Elements of `a` picked by flat indices, as a value of shape `dims`.
ConstValue Pick(const ConstValue& a, const std::vector<int64_t>& index, std::vector<int64_t> dims) {
  ConstValue v = a.is_real ? Reals(a.elem_type, std::move(dims), {}) : Ints(a.elem_type, std::move(dims), {});
  for (int64_t i : index) {
    if (a.is_real) v.reals.push_back(a.reals[i]);
    else v.ints.push_back(a.ints[i]);
  }
  return v;
}

std::optional<ConstValue> Gather(const ConstValue& data, const ConstValue& indices, int64_t axis_attr) {
  std::optional<int64_t> axis = Axis(axis_attr, static_cast<int64_t>(data.dims.size()));
  if (!axis || indices.is_real) return std::nullopt;
  int64_t outer = 1, inner = 1, size = data.dims[*axis];
  for (int64_t d = 0; d < *axis; ++d) outer *= data.dims[d];
  for (size_t d = *axis + 1; d < data.dims.size(); ++d) inner *= data.dims[d];
  std::vector<int64_t> dims(data.dims.begin(), data.dims.begin() + *axis);
  dims.insert(dims.end(), indices.dims.begin(), indices.dims.end());
  dims.insert(dims.end(), data.dims.begin() + *axis + 1, data.dims.end());
  if (!FoldableElements(dims)) return std::nullopt;
  std::vector<int64_t> index;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t k : indices.ints) {
      if (k < 0) k += size;
      if (k < 0 || k >= size) return std::nullopt;
      for (int64_t i = 0; i < inner; ++i) index.push_back((o * size + k) * inner + i);
    }
  }
  return Pick(data, index, std::move(dims));
}

std::optional<ConstValue> Concat(absl::Span<const ConstValue* const> inputs, int64_t axis_attr) {
  const ConstValue& first = *inputs[0];
  std::optional<int64_t> axis = Axis(axis_attr, static_cast<int64_t>(first.dims.size()));
  if (!axis) return std::nullopt;
  std::vector<int64_t> dims = first.dims;
  dims[*axis] = 0;
  for (const ConstValue* in : inputs) {
    const ConstValue& v = *in;
    if (v.dims.size() != first.dims.size() || v.is_real != first.is_real) return std::nullopt;
    for (size_t d = 0; d < dims.size(); ++d) {
      if (static_cast<int64_t>(d) != *axis && v.dims[d] != first.dims[d]) return std::nullopt;
    }
    dims[*axis] += v.dims[*axis];
  }
  if (!FoldableElements(dims)) return std::nullopt;
  int64_t outer = 1;
  for (int64_t d = 0; d < *axis; ++d) outer *= dims[d];
  ConstValue out = first.is_real ? Reals(first.elem_type, dims, {}) : Ints(first.elem_type, dims, {});
  for (int64_t o = 0; o < outer; ++o) {
    for (const ConstValue* in : inputs) {
      int64_t chunk = in->size() / std::max<int64_t>(outer, 1);
      for (int64_t i = o * chunk; i < (o + 1) * chunk; ++i) {
        if (first.is_real) out.reals.push_back(in->reals[i]);
        else out.ints.push_back(in->ints[i]);
      }
    }
  }
  return out;
}

// Slice of a 1-D value (shape vectors), with ONNX's clamping of starts and ends for either sign of step.
std::optional<ConstValue> Slice1D(const ConstValue& data, int64_t start, int64_t end, int64_t step) {
  if (data.dims.size() != 1 || step == 0) return std::nullopt;
  int64_t n = data.dims[0];
  if (start < 0) start = start < -n ? -1 : start + n;  // saturate: INT64_MIN is a common "from the end"
  if (end < 0) end = end < -n ? -1 : end + n;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, n);
    end = std::clamp<int64_t>(end, 0, n);
  } else {
    start = std::clamp<int64_t>(start, 0, n - 1);
    end = std::clamp<int64_t>(end, -1, n - 1);
  }
  std::vector<int64_t> index;
  for (int64_t i = start; step > 0 ? i < end : i > end; i += step) index.push_back(i);
  int64_t count = static_cast<int64_t>(index.size());
  return Pick(data, index, {count});
}

}  // namespace placement::onnx_import
