// `placectl import` and `placectl generate`: graphs written in our JSON format (docs/graph-format.md), so an
// ONNX model, a Tarnawski input or a synthetic family becomes a file every other tool here reads.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "client/graph_loader.h"

namespace placement::cli {

// The graph at `path` (any format LoadGraphFile reads), as placement.graph/v1 JSON; importer warnings go into
// `warnings`.
absl::StatusOr<std::string> RunImport(const std::string& path, const GraphLoadOptions& options,
                                      std::vector<std::string>* warnings);

struct GenerateOptions {
  std::string family;
  int32_t ops = 1000;
  uint64_t seed = 1;
  int64_t batch = 32;
  int64_t width = 512;
  bool training = false;
};

absl::StatusOr<std::string> RunGenerate(const GenerateOptions& options);

}  // namespace placement::cli
