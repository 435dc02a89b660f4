// Graph inputs with their symbolic dimensions bound to values, by the rules of docs/onnx.md: a value in the
// options' dims, a batch-like name to the batch size, a sequence-like name to the sequence length, an unnamed
// leading dimension to the batch size.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <onnx/onnx_pb.h>

#include "absl/status/statusor.h"
#include "graph/onnx/onnx_import.h"
#include "graph/onnx/tensor_info.h"

namespace placement::onnx_import {

struct BoundInput {
  onnx::TypeProto type;  // every dimension with a value
  TensorInfo info;
  std::vector<std::pair<std::string, int64_t>> symbols;  // symbol -> the value it was bound to
  std::vector<std::string> unresolved;  // parts counted as 1 under allow_unresolved_dims ("dimension 2")
  bool used_batch = false;              // the batch size bound a dimension
  bool used_sequence = false;           // the sequence length bound a dimension
};

// An error names the input, the dimension and the symbol when nothing binds it.
absl::StatusOr<BoundInput> BindInput(const onnx::ValueInfoProto& input, const OnnxImportOptions& options);

}  // namespace placement::onnx_import
