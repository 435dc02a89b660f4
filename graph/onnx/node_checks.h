// Checks of standard-domain nodes that ONNX 1.12's own inference functions do not make before they divide by
// an attribute or index past a vector's end (found by fuzzing: tests/fuzz/corpus/onnx_import/regression_*).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>

#include <onnx/onnx_pb.h>

#include "absl/status/status.h"

namespace placement::onnx_import {

// Size and divisor attributes (strides, dilations, kernel_shape, group, blocksize, hidden_size) are positive;
// convolutions and pooling have a batch and a channel axis, a kernel of the input's rank and per-axis
// attributes of the right length. `types` holds what is known of each tensor so far.
absl::Status CheckNodeAttributes(const onnx::NodeProto& node, int32_t index,
                                 const std::unordered_map<std::string, onnx::TypeProto*>& types);

}  // namespace placement::onnx_import
