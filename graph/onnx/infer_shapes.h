// Static shapes for every tensor of an ONNX graph at a chosen batch size and sequence length.
//
// Symbolic dimensions of the graph inputs are bound first (docs/onnx.md gives the rules), then each node is
// inferred in topological order with its schema's inference function, the way onnx::shape_inference does,
// with two differences that make exported real models come out fully static: small integer tensors are
// evaluated as they appear (constant_folding.h), so Reshape targets computed from Shape are known, and every
// failure is reported against the node that caused it.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include <onnx/onnx_pb.h>

#include "absl/status/statusor.h"
#include "graph/onnx/graph_index.h"
#include "graph/onnx/onnx_import.h"
#include "graph/onnx/tensor_info.h"

namespace placement::onnx_import {

struct InferredShapes {
  // Every graph input, initializer and node output by name.
  std::unordered_map<std::string, TensorInfo> tensors;
  std::vector<std::string> warnings;
};

// `initializers` holds the checked shape of each initializer. The graph's nodes are not modified apart from
// what ONNX inference functions may read through a mutable reference.
absl::StatusOr<InferredShapes> InferShapes(onnx::GraphProto& graph, const GraphIndex& index,
                                           const std::unordered_map<std::string, int>& opsets,
                                           const std::unordered_map<std::string, TensorInfo>& initializers,
                                           const OnnxImportOptions& options);

}  // namespace placement::onnx_import
