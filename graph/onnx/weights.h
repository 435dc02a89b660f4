// Which graph inputs are weights. A model exported without its parameters (torch.onnx.export with
// export_params=False, or a graph stripped for transport) lists every weight as a graph input with no
// initializer; counting those as inputs would leave the model with no parameters, so the importer decides
// which inputs hold data and which hold weights. The rule is in docs/onnx.md.
#pragma once

#include <string>
#include <unordered_set>

#include <onnx/onnx_pb.h>

#include "absl/status/statusor.h"
#include "graph/onnx/onnx_import.h"

namespace placement::onnx_import {

// Names of the graph inputs without an initializer that count as weights.
absl::StatusOr<std::unordered_set<std::string>> WeightInputs(const onnx::GraphProto& graph,
                                                             const OnnxImportOptions& options);

}  // namespace placement::onnx_import
