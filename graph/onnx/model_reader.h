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

// The newest versions this importer reads. The linked ONNX library (Debian's 1.12) knows opsets up to 17 and
// IR 8; the operators that changed after it are handled by newer_ops.h, whatever is unchanged by its schemas.
inline constexpr int64_t kMaxIrVersion = 10;
inline constexpr int kMaxDefaultOpset = 21;
inline constexpr int kMaxMlOpset = 5;

absl::StatusOr<onnx::ModelProto> ParseModelBytes(absl::string_view bytes);

// Parses the file straight from its descriptor (no second copy of the bytes). NotFound when it cannot be
// opened; parse errors are prefixed with the path.
absl::StatusOr<onnx::ModelProto> ReadModelFile(const std::string& path);

// Checks the IR version and the operator-set imports against what this importer knows, and that there is a
// graph with nodes. Returns the opset version per domain, the default domain under "".
absl::StatusOr<std::unordered_map<std::string, int>> CheckModelHeader(const onnx::ModelProto& model);

// The newest opset the linked library has schemas for in `domain` (INT_MAX for a domain it does not know).
int MaxLibraryOpset(const std::string& domain);

// The newest opset of a standard domain ("" or "ai.onnx", "ai.onnx.ml") this importer reads; 0 for others.
int MaxKnownOpset(const std::string& domain);

// See LooksLikeOnnx in onnx_import.h.
bool SniffModelProto(absl::string_view bytes);

}  // namespace placement::onnx_import
