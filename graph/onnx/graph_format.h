// Which reader a graph's bytes are for, told by content (never by file name): an ONNX model, our
// placement.graph/v1 JSON, a Tarnawski et al. JSON graph, or a PipeDream per-layer profile. placectl and the
// server's request decoder both decide with it, so a file means the same to both.
#pragma once

#include <string>

#include "absl/strings/string_view.h"

namespace placement {

enum class GraphFormat { kOnnx, kGraphJson, kTarnawski, kPipeDream, kUnknown };

GraphFormat DetectGraphFormat(absl::string_view bytes);

// For bytes of no known format: "not ONNX, JSON or a Tarnawski graph (nor a PipeDream profile): 3000 bytes,
// starting 5f 3a 10 ..." (the first bytes in hex, so a person can see what the file is), or for JSON of another
// kind, which keys our two JSON formats have.
std::string UnknownGraphFormatMessage(absl::string_view bytes);

}  // namespace placement
