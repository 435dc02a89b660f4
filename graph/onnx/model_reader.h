// Reading a serialized ONNX ModelProto safely: size limits, parse failures and unsupported versions become
// errors that say what is wrong with the input, before anything looks at the graph.
#pragma once

#include <string>
#include <unordered_map>

#include <onnx/onnx_pb.h>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace placement::onnx_import {

// A protobuf message cannot exceed 2 GiB (its sizes are 32-bit signed); a file this large is not a valid
// ONNX model, which is why large models keep their weights as external data.
inline constexpr int64_t kMaxModelBytes = (int64_t{1} << 31) - 1;

absl::StatusOr<onnx::ModelProto> ParseModelBytes(absl::string_view bytes);

// Parses the file straight from its descriptor (no second copy of the bytes). NotFound when it cannot be
// opened; parse errors are prefixed with the path.
absl::StatusOr<onnx::ModelProto> ReadModelFile(const std::string& path);

// Checks the IR version and the operator-set imports against what the linked ONNX library knows, and that
// there is a graph with nodes. Returns the opset version per domain, the default domain under "".
absl::StatusOr<std::unordered_map<std::string, int>> CheckModelHeader(const onnx::ModelProto& model);

// See LooksLikeOnnx in onnx_import.h.
bool SniffModelProto(absl::string_view bytes);

}  // namespace placement::onnx_import
