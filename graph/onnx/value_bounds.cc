#include "graph/onnx/value_bounds.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <string>

#include "graph/onnx/attributes.h"
#include "graph/onnx/constant_kernels.h"

namespace placement::onnx_import {
namespace {

using onnx::TensorProto;
using Inputs = absl::Span<const Bounds* const>;

constexpr double kInf = std::numeric_limits<double>::infinity();

ConstValue AsReals(const ConstValue& v) {
  if (v.is_real) return v;
  std::vector<double> r(v.ints.begin(), v.ints.end());
  return Reals(TensorProto::DOUBLE, v.dims, std::move(r));
}

ConstValue Scalar(double x) { return Reals(TensorProto::DOUBLE, {}, {x}); }

bool Exact(const Bounds& b) {
  return !b.uniform && b.lo.is_real == b.hi.is_real && b.lo.reals == b.hi.reals && b.lo.ints == b.hi.ints;
}

}  // namespace

// The same bounds for every element: the least and the most of any.
Bounds Uniform(const Bounds& b) {
  if (b.uniform) return b;
  double lo = kInf, hi = -kInf;
  for (int64_t i = 0; i < b.lo.size(); ++i) lo = std::min(lo, b.lo.Real(i));
  for (int64_t i = 0; i < b.hi.size(); ++i) hi = std::max(hi, b.hi.Real(i));
  if (b.lo.size() == 0) lo = -kInf, hi = kInf;
  return Bounds{Scalar(lo), Scalar(hi), true};
}

namespace {

// Operators whose output elements are some of the data input's (input 0; Concat: any input's), and the inputs
// that say which (they must be exact to follow element by element).
const std::map<std::string, std::vector<int>>& Selections() {
  static const auto* ops = new std::map<std::string, std::vector<int>>{
      {"Identity", {}},        {"Dropout", {}},    {"Reshape", {1}},        {"Flatten", {}},
      {"Squeeze", {1}},        {"Unsqueeze", {1}}, {"Transpose", {}},       {"Expand", {1}},
      {"Tile", {1}},           {"Concat", {}},     {"Slice", {1, 2, 3, 4}}, {"Gather", {1}},
      {"GatherElements", {1}}, {"GatherND", {1}},  {"ReduceMax", {1}},      {"ReduceMin", {1}}};
  return *ops;
}

// Elementwise operators that never decrease when an input increases.
bool Increasing(const std::string& op) {
  static const char* const kOps[] = {"Floor", "Ceil", "Round", "Relu", "Sqrt", "Exp", "Log", "Sigmoid",
                                     "Tanh",  "Erf",  "Add",   "Sum",  "Max",  "Min", "Clip"};
  return std::find(std::begin(kOps), std::end(kOps), op) != std::end(kOps);
}

// Folds the node on one end of every input's bounds.
std::optional<ConstValue> FoldEnd(const onnx::NodeProto& node, int opset, Inputs inputs, bool upper,
                                  const std::vector<int64_t>* output_dims) {
  std::vector<FoldInput> in(inputs.size());
  for (size_t k = 0; k < inputs.size(); ++k) {
    if (inputs[k] == nullptr) continue;
    const ConstValue& v = upper ? inputs[k]->hi : inputs[k]->lo;
    in[k].value = &v;
    in[k].dims = &v.dims;
    in[k].elem_type = v.elem_type;
  }
  std::vector<ConstValue> out = FoldNode(node, opset, in, output_dims);
  if (out.empty()) return std::nullopt;
  return AsReals(out[0]);
}

std::optional<Bounds> Make(std::optional<ConstValue> lo, std::optional<ConstValue> hi, bool uniform) {
  if (!lo || !hi || lo->dims != hi->dims || lo->size() != hi->size()) return std::nullopt;
  Bounds b{AsReals(*lo), AsReals(*hi), uniform};
  for (int64_t i = 0; i < b.lo.size(); ++i) {
    if (std::isnan(b.lo.reals[i]) || std::isnan(b.hi.reals[i])) return std::nullopt;
  }
  return b;
}

// Mul and Div: the extremes are among the four products (quotients) of the ends.
std::optional<Bounds> Corners(const std::string& op, const Bounds& a, const Bounds& b, bool uniform) {
  if (op == "Div") {
    for (int64_t i = 0; i < b.lo.size(); ++i) {
      if (b.lo.Real(i) <= 0 && b.hi.Real(i) >= 0) return std::nullopt;  // the divisor may be 0
    }
  }
  std::optional<ConstValue> lo, hi;
  for (const ConstValue* x : {&a.lo, &a.hi}) {
    for (const ConstValue* y : {&b.lo, &b.hi}) {
      std::optional<ConstValue> v = Elementwise(op, *x, *y, false);
      if (!v) return std::nullopt;
      lo = lo ? Elementwise("Min", *lo, *v, false) : v;
      hi = hi ? Elementwise("Max", *hi, *v, false) : v;
      if (!lo || !hi) return std::nullopt;
    }
  }
  return Make(lo, hi, uniform);
}

std::optional<Bounds> CastBounds(Bounds b, int64_t to) {
  if (IsRealType(static_cast<int32_t>(to))) return b;
  if (!IsIntType(static_cast<int32_t>(to)) || to == TensorProto::BOOL) return std::nullopt;
  for (double& v : b.lo.reals) v = std::trunc(v);  // truncation toward zero keeps the order
  for (double& v : b.hi.reals) v = std::trunc(v);
  return b;
}

// Arithmetic on the ends; `uniform` says whether the operands are per-element or one range for all.
std::optional<Bounds> Arithmetic(const onnx::NodeProto& node, int opset, Inputs inputs,
                                 const std::vector<int64_t>* output_dims, bool uniform) {
  const std::string& op = node.op_type();
  if (op == "Cast") return CastBounds(*inputs[0], IntAttr(node, "to", 0));
  if (op == "Neg") return Make(Unary("Neg", inputs[0]->hi), Unary("Neg", inputs[0]->lo), uniform);
  if (op == "Sub" || op == "Mul" || op == "Div") {
    if (inputs.size() != 2 || inputs[1] == nullptr) return std::nullopt;
    const Bounds& a = *inputs[0];
    const Bounds& b = *inputs[1];
    if (op == "Sub") return Make(Elementwise("Sub", a.lo, b.hi, false), Elementwise("Sub", a.hi, b.lo, false), uniform);
    return Corners(op, a, b, uniform);
  }
  if (!Increasing(op)) return std::nullopt;
  return Make(FoldEnd(node, opset, inputs, false, uniform ? nullptr : output_dims),
              FoldEnd(node, opset, inputs, true, uniform ? nullptr : output_dims), uniform);
}

// One range for every element of the output: what the data can be for a selection, else arithmetic on ranges.
std::optional<Bounds> UniformOutput(const onnx::NodeProto& node, int opset, Inputs inputs) {
  const std::string& op = node.op_type();
  if (Selections().count(op) > 0) {
    Bounds out = Uniform(*inputs[0]);
    for (size_t k = 1; op == "Concat" && k < inputs.size(); ++k) {
      if (inputs[k] == nullptr) return std::nullopt;
      Bounds more = Uniform(*inputs[k]);
      out.lo.reals[0] = std::min(out.lo.reals[0], more.lo.reals[0]);
      out.hi.reals[0] = std::max(out.hi.reals[0], more.hi.reals[0]);
    }
    return out;
  }
  std::vector<Bounds> ranges;
  ranges.reserve(inputs.size());
  std::vector<const Bounds*> pointers;
  for (const Bounds* b : inputs) {
    if (b == nullptr) {
      pointers.push_back(nullptr);
      continue;
    }
    ranges.push_back(Uniform(*b));
    pointers.push_back(&ranges.back());
  }
  return Arithmetic(node, opset, pointers, nullptr, true);
}

}  // namespace

bool HasBoundRule(const std::string& op) {
  return op == "Cast" || op == "Neg" || op == "Sub" || op == "Mul" || op == "Div" || op == "Split" ||
         Selections().count(op) > 0 || Increasing(op);
}

bool Bounds::Informative() const {
  for (const ConstValue* end : {&lo, &hi}) {
    for (int64_t i = 0; i < end->size(); ++i) {
      if (std::isfinite(end->Real(i))) return true;
    }
  }
  return false;
}

double Bounds::Upper(int64_t i) const {
  if (uniform) return hi.size() == 0 ? kInf : hi.Real(0);
  return i >= 0 && i < hi.size() ? hi.Real(i) : kInf;
}

// Kept as it is (integers stay integers): an exact input may say where (Gather's indices) or how many.
Bounds ExactBounds(const ConstValue& value) { return Bounds{value, value, false}; }

Bounds UnknownBounds() { return Bounds{Scalar(-kInf), Scalar(kInf), true}; }

std::optional<Bounds> BoundOutput(const onnx::NodeProto& node, int opset, Inputs inputs,
                                  const std::vector<int64_t>* output_dims) {
  if (inputs.empty() || inputs[0] == nullptr) return std::nullopt;
  bool per_element = output_dims != nullptr && FoldableElements(*output_dims).has_value();
  for (const Bounds* b : inputs) per_element = per_element && (b == nullptr || !b->uniform);
  auto selection = Selections().find(node.op_type());
  if (per_element && selection != Selections().end()) {
    for (int k : selection->second) {
      if (k < static_cast<int>(inputs.size()) && inputs[k] != nullptr && !Exact(*inputs[k])) per_element = false;
    }
    if (per_element) {
      return Make(FoldEnd(node, opset, inputs, false, output_dims), FoldEnd(node, opset, inputs, true, output_dims),
                  false);
    }
  }
  if (per_element) {
    if (std::optional<Bounds> b = Arithmetic(node, opset, inputs, output_dims, false)) return b;
  }
  return UniformOutput(node, opset, inputs);
}

}  // namespace placement::onnx_import
