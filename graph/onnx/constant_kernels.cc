#include "graph/onnx/constant_kernels.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "graph/onnx/tensor_info.h"

namespace placement::onnx_import {
namespace {

using onnx::TensorProto;

bool IsComparison(const std::string& op) {
  return op == "Equal" || op == "Less" || op == "Greater" || op == "LessOrEqual" || op == "GreaterOrEqual";
}

std::optional<double> RealOp(const std::string& op, double x, double y, bool fmod) {
  if (op == "Add" || op == "Sum") return x + y;
  if (op == "Sub") return x - y;
  if (op == "Mul") return x * y;
  if (op == "Div") return x / y;
  if (op == "Pow") return std::pow(x, y);
  if (op == "Max") return std::max(x, y);
  if (op == "Min") return std::min(x, y);
  if (op == "Mod") {
    double r = std::fmod(x, y);
    if (!fmod && r != 0 && ((r < 0) != (y < 0))) r += y;
    return r;
  }
  if (op == "Equal") return x == y;
  if (op == "Less") return x < y;
  if (op == "Greater") return x > y;
  if (op == "LessOrEqual") return x <= y;
  if (op == "GreaterOrEqual") return x >= y;
  return std::nullopt;
}

std::optional<int64_t> IntOp(const std::string& op, int64_t x, int64_t y) {
  int64_t r = 0;
  if (op == "Add" || op == "Sum") return __builtin_add_overflow(x, y, &r) ? std::nullopt : std::optional<int64_t>(r);
  if (op == "Sub") return __builtin_sub_overflow(x, y, &r) ? std::nullopt : std::optional<int64_t>(r);
  if (op == "Mul") return __builtin_mul_overflow(x, y, &r) ? std::nullopt : std::optional<int64_t>(r);
  if (op == "Div" || op == "Mod") {
    if (y == 0 || (x == std::numeric_limits<int64_t>::min() && y == -1)) return std::nullopt;
    return op == "Div" ? x / y : x % y;
  }
  if (op == "Pow") {
    if (y < 0 || y > 62) return std::nullopt;
    r = 1;
    for (int64_t k = 0; k < y; ++k) {
      if (__builtin_mul_overflow(r, x, &r)) return std::nullopt;
    }
    return r;
  }
  if (op == "Max") return std::max(x, y);
  if (op == "Min") return std::min(x, y);
  if (op == "Equal") return x == y;
  if (op == "Less") return x < y;
  if (op == "Greater") return x > y;
  if (op == "LessOrEqual") return x <= y;
  if (op == "GreaterOrEqual") return x >= y;
  if (op == "And") return x && y;
  if (op == "Or") return x || y;
  if (op == "Xor") return (x != 0) != (y != 0);
  if (op == "BitwiseAnd") return x & y;
  if (op == "BitwiseOr") return x | y;
  if (op == "BitwiseXor") return x ^ y;
  if (op == "BitShiftLEFT" || op == "BitShiftRIGHT") {
    if (x < 0 || y < 0 || y > 63) return std::nullopt;
    return op == "BitShiftLEFT" ? static_cast<int64_t>(static_cast<uint64_t>(x) << y) : x >> y;
  }
  return std::nullopt;
}

std::optional<double> RealUnary(const std::string& op, double x) {
  if (op == "Neg") return -x;
  if (op == "Abs") return std::fabs(x);
  if (op == "Sqrt") return std::sqrt(x);
  if (op == "Floor") return std::floor(x);
  if (op == "Ceil") return std::ceil(x);
  if (op == "Round") return std::nearbyint(x);  // ONNX rounds halves to even, as the default FP mode does
  if (op == "Sign") return static_cast<double>((x > 0) - (x < 0));
  if (op == "Reciprocal") return 1.0 / x;
  if (op == "Exp") return std::exp(x);
  if (op == "Log") return std::log(x);
  if (op == "Relu") return std::max(x, 0.0);
  if (op == "Sigmoid") return 1.0 / (1.0 + std::exp(-x));
  if (op == "Tanh") return std::tanh(x);
  if (op == "Erf") return std::erf(x);
  if (op == "Sin") return std::sin(x);
  if (op == "Cos") return std::cos(x);
  return std::nullopt;
}

std::optional<int64_t> IntUnary(const std::string& op, int64_t x) {
  const bool min = x == std::numeric_limits<int64_t>::min();
  if (op == "Neg") return min ? std::nullopt : std::optional<int64_t>(-x);
  if (op == "Abs") return min ? std::nullopt : std::optional<int64_t>(x < 0 ? -x : x);
  if (op == "Sign") return (x > 0) - (x < 0);
  if (op == "Relu") return std::max<int64_t>(x, 0);
  if (op == "Not") return !x;
  if (op == "BitwiseNot") return ~x;
  if (op == "Floor" || op == "Ceil" || op == "Round") return x;
  return std::nullopt;
}

}  // namespace

bool IsRealType(int32_t t) {
  return t == TensorProto::FLOAT || t == TensorProto::DOUBLE || t == TensorProto::FLOAT16 ||
         t == TensorProto::BFLOAT16 || (t >= kFloat8E4M3FN && t <= kFloat8E5M2FNUZ);
}

bool IsIntType(int32_t t) {
  switch (t) {
    case TensorProto::INT64:
    case TensorProto::INT32:
    case TensorProto::INT16:
    case TensorProto::INT8:
    case TensorProto::UINT64:
    case TensorProto::UINT32:
    case TensorProto::UINT16:
    case TensorProto::UINT8:
    case TensorProto::BOOL:
      return true;
    default:
      return false;
  }
}

std::optional<int64_t> NormalizeAxis(int64_t axis, int64_t rank) {
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return std::nullopt;
  return axis;
}

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

ConstValue Pick(const ConstValue& a, const std::vector<int64_t>& index, std::vector<int64_t> dims) {
  ConstValue v = a.is_real ? Reals(a.elem_type, std::move(dims), {}) : Ints(a.elem_type, std::move(dims), {});
  for (int64_t i : index) {
    if (a.is_real)
      v.reals.push_back(a.reals[i]);
    else
      v.ints.push_back(a.ints[i]);
  }
  return v;
}

std::optional<ConstValue> Elementwise(const std::string& op, const ConstValue& a, const ConstValue& b, bool fmod) {
  std::optional<std::vector<int64_t>> dims = Broadcast(a.dims, b.dims);
  if (!dims) return std::nullopt;
  std::optional<int64_t> n = FoldableElements(*dims);
  if (!n) return std::nullopt;
  std::vector<int64_t> ia = BroadcastIndex(a.dims, *dims, *n), ib = BroadcastIndex(b.dims, *dims, *n);
  const bool compare = IsComparison(op);
  // Mixed operands (Pow with an integer exponent, a comparison of a float with an int) are computed as reals.
  if (a.is_real || b.is_real) {
    std::vector<double> r(*n);
    for (int64_t i = 0; i < *n; ++i) {
      std::optional<double> x = RealOp(op, a.Real(ia[i]), b.Real(ib[i]), fmod);
      if (!x) return std::nullopt;
      r[i] = *x;
    }
    if (compare) {
      std::vector<int64_t> c(r.begin(), r.end());
      return Ints(TensorProto::BOOL, *dims, std::move(c));
    }
    return Reals(a.is_real ? a.elem_type : b.elem_type, *dims, std::move(r));
  }
  std::vector<int64_t> r(*n);
  for (int64_t i = 0; i < *n; ++i) {
    int64_t x = a.ints[ia[i]], y = b.ints[ib[i]];
    std::optional<int64_t> v = IntOp(op, x, y);
    if (!v) return std::nullopt;
    if (op == "Mod" && !fmod && *v != 0 && ((*v < 0) != (y < 0))) *v += y;  // Python's sign rule
    r[i] = *v;
  }
  return Ints(compare ? TensorProto::BOOL : a.elem_type, *dims, std::move(r));
}

std::optional<ConstValue> Unary(const std::string& op, const ConstValue& a) {
  if (op == "IsNaN" || op == "IsInf") {
    std::vector<int64_t> r(a.size());
    for (int64_t i = 0; i < a.size(); ++i) {
      r[i] = a.is_real && (op == "IsNaN" ? std::isnan(a.reals[i]) : std::isinf(a.reals[i]));
    }
    return Ints(TensorProto::BOOL, a.dims, std::move(r));
  }
  ConstValue v = a;
  if (a.is_real) {
    for (double& x : v.reals) {
      std::optional<double> r = RealUnary(op, x);
      if (!r) return std::nullopt;
      x = *r;
    }
    return v;
  }
  for (int64_t& x : v.ints) {
    std::optional<int64_t> r = IntUnary(op, x);
    if (!r) return std::nullopt;
    x = *r;
  }
  return v;
}

std::optional<ConstValue> Cast(const ConstValue& a, int64_t to) {
  if (IsRealType(static_cast<int32_t>(to))) {
    std::vector<double> r(a.size());
    for (int64_t i = 0; i < a.size(); ++i) r[i] = a.Real(i);
    return Reals(static_cast<int32_t>(to), a.dims, std::move(r));
  }
  if (!IsIntType(static_cast<int32_t>(to))) return std::nullopt;
  std::vector<int64_t> r(a.size());
  for (int64_t i = 0; i < a.size(); ++i) {
    if (!a.is_real) {
      r[i] = a.ints[i];
    } else if (to == TensorProto::BOOL) {
      r[i] = a.reals[i] != 0;
    } else if (!std::isfinite(a.reals[i]) || std::fabs(a.reals[i]) > 9.0e18) {
      return std::nullopt;
    } else {
      r[i] = static_cast<int64_t>(a.reals[i]);
    }
    if (to == TensorProto::BOOL) r[i] = r[i] != 0;
  }
  return Ints(static_cast<int32_t>(to), a.dims, std::move(r));
}

std::optional<ConstValue> Where(const ConstValue& condition, const ConstValue& x, const ConstValue& y) {
  std::optional<std::vector<int64_t>> dims = Broadcast(condition.dims, x.dims);
  if (dims) dims = Broadcast(*dims, y.dims);
  std::optional<int64_t> n = dims ? FoldableElements(*dims) : std::nullopt;
  if (!n || condition.is_real) return std::nullopt;
  const bool real = x.is_real || y.is_real;
  std::vector<int64_t> ic = BroadcastIndex(condition.dims, *dims, *n), ix = BroadcastIndex(x.dims, *dims, *n),
                       iy = BroadcastIndex(y.dims, *dims, *n);
  ConstValue v = real ? Reals(x.elem_type, *dims, {}) : Ints(x.elem_type, *dims, {});
  for (int64_t i = 0; i < *n; ++i) {
    const bool take_x = condition.ints[ic[i]] != 0;
    const ConstValue& src = take_x ? x : y;
    const int64_t k = take_x ? ix[i] : iy[i];
    if (real)
      v.reals.push_back(src.Real(k));
    else
      v.ints.push_back(src.ints[k]);
  }
  return v;
}

}  // namespace placement::onnx_import
