// The arithmetic behind constant folding: ONNX semantics (numpy broadcasting, negative axes, clamped slices)
// on small ConstValues. Every function returns nullopt rather than computing something it cannot represent
// (overflow, division by zero, a result over kMaxFoldElements).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "graph/onnx/constant_folding.h"

namespace placement::onnx_import {

// Element count when every dim is non-negative and the product is at most kMaxFoldElements.
std::optional<int64_t> FoldableElements(const std::vector<int64_t>& dims);

ConstValue Ints(int32_t type, std::vector<int64_t> dims, std::vector<int64_t> values);
ConstValue Reals(int32_t type, std::vector<int64_t> dims, std::vector<double> values);
bool IsRealType(int32_t type);
bool IsIntType(int32_t type);

// Normalizes a possibly negative axis; nullopt when out of range.
std::optional<int64_t> NormalizeAxis(int64_t axis, int64_t rank);

// Numpy broadcasting of two shapes; nullopt when they are incompatible.
std::optional<std::vector<int64_t>> Broadcast(const std::vector<int64_t>& a, const std::vector<int64_t>& b);
// For each of the n elements of shape `out`, the flat index of the element of shape `in` broadcast to it.
std::vector<int64_t> BroadcastIndex(const std::vector<int64_t>& in, const std::vector<int64_t>& out, int64_t n);
// Elements of `a` at flat indices, as a value of shape `dims`.
ConstValue Pick(const ConstValue& a, const std::vector<int64_t>& index, std::vector<int64_t> dims);

// Add, Sub, Mul, Div, Mod (fmod: C's remainder, else the divisor's sign), Pow, Max, Min, Sum,
// comparisons, And, Or, Xor, BitShift (direction in `op`: "BitShiftLEFT"), BitwiseAnd, BitwiseOr, BitwiseXor.
std::optional<ConstValue> Elementwise(const std::string& op, const ConstValue& a, const ConstValue& b, bool fmod);
// Neg, Abs, Sqrt, Floor, Ceil, Round, Sign, Reciprocal, Exp, Log, Relu, Sigmoid, Tanh, Erf, Sin, Cos, Not,
// IsNaN, IsInf, BitwiseNot.
std::optional<ConstValue> Unary(const std::string& op, const ConstValue& a);
std::optional<ConstValue> Cast(const ConstValue& a, int64_t to);
std::optional<ConstValue> Where(const ConstValue& condition, const ConstValue& x, const ConstValue& y);

}  // namespace placement::onnx_import
