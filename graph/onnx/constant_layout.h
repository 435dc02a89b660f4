// Constant folding of the operators that move, pick and reduce elements (N-D, ONNX semantics: negative axes,
// clamped slice bounds for either sign of step). Like constant_kernels.h, every function returns nullopt
// rather than compute something it cannot represent.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "graph/onnx/constant_folding.h"

namespace placement::onnx_import {

std::optional<ConstValue> Gather(const ConstValue& data, const ConstValue& indices, int64_t axis);
std::optional<ConstValue> GatherElements(const ConstValue& data, const ConstValue& indices, int64_t axis);
std::optional<ConstValue> Concat(absl::Span<const ConstValue* const> inputs, int64_t axis);
// `axes` empty: 0, 1, ... ; `steps` empty: all 1.
std::optional<ConstValue> Slice(const ConstValue& data, const std::vector<int64_t>& starts,
                                const std::vector<int64_t>& ends, std::vector<int64_t> axes,
                                std::vector<int64_t> steps);
// `perm` empty: the axes reversed.
std::optional<ConstValue> Transpose(const ConstValue& data, std::vector<int64_t> perm);
std::optional<ConstValue> Tile(const ConstValue& data, const std::vector<int64_t>& repeats);
// Broadcasts `data` to `shape` (ONNX Expand: the result has the broadcast of both).
std::optional<ConstValue> Expand(const ConstValue& data, const std::vector<int64_t>& shape);
std::optional<std::vector<ConstValue>> Split(const ConstValue& data, int64_t axis, const std::vector<int64_t>& sizes);
// Constant-mode Pad; `pads` holds the begins of every axis, then the ends (negative ones crop).
std::optional<ConstValue> PadConstant(const ConstValue& data, const std::vector<int64_t>& pads, double value);
std::optional<ConstValue> NonZero(const ConstValue& data);
// ReduceSum, ReduceProd, ReduceMax, ReduceMin, ReduceMean, ReduceL1, ReduceL2, ReduceSumSquare. `axes` empty:
// every axis, unless noop_with_empty_axes.
std::optional<ConstValue> Reduce(const std::string& op, const ConstValue& data, std::vector<int64_t> axes,
                                 bool keepdims, bool noop_with_empty_axes);
std::optional<ConstValue> ArgReduce(bool max, const ConstValue& data, int64_t axis, bool keepdims, bool select_last);
std::optional<ConstValue> CumSum(const ConstValue& data, int64_t axis, bool exclusive, bool reverse);
// The shape a Reshape target gives `data` (0 copies the input's dimension unless allowzero, -1 is inferred).
std::optional<std::vector<int64_t>> ReshapeDims(const std::vector<int64_t>& input, const std::vector<int64_t>& target,
                                                bool allowzero);

}  // namespace placement::onnx_import
