// Sizes that depend on the data: how many elements NonZero finds, how many boxes NonMaxSuppression keeps, a
// TopK whose k is computed from a tensor. A placement needs a number; the importer takes a stated bound from
// the node's inputs (the most there can be, or for Resize with computed sizes the input's own size), says so
// in a warning, and the user can give the real value with --dim TENSOR:AXIS=VALUE.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <onnx/onnx_pb.h>

#include "absl/types/span.h"
#include "graph/onnx/newer_ops.h"

namespace placement::onnx_import {

struct DimAssumption {
  int64_t value = 0;
  std::string reason;  // for the warning, e.g. "NonZero of 4800 elements: at most all of them"
  bool exact = false;  // not an assumption at all (an axis the op keeps as it is): no warning
};

// The rank of output `output` of `node` when inference gave it no shape at all but the op keeps its input's rank
// (Slice, Pad, Resize, Tile, Expand with a shape from the data); nullopt otherwise.
std::optional<int64_t> DataDependentRank(const onnx::NodeProto& node, int output, absl::Span<const InputView> inputs);

// The value assumed for dimension `axis` of output `output` of `node`, which inference left unknown; nullopt
// when the importer has no rule for it.
std::optional<DimAssumption> DataDependentDim(const onnx::NodeProto& node, int output, int axis,
                                              absl::Span<const InputView> inputs);

}  // namespace placement::onnx_import
