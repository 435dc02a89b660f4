// Sizes of initializers, including those whose data lives in a separate file next to the model (ONNX
// "external data"). The importer needs only their sizes, so external files are checked with stat() and never
// read: a model with 100 GB of weights imports in the time its graph takes.
#pragma once

#include <string>

#include <onnx/onnx_pb.h>

#include "absl/status/statusor.h"
#include "graph/onnx/tensor_info.h"

namespace placement::onnx_import {

// Shape and bytes of an initializer. Inline data must match the shape (raw_data bytes or the count of the
// typed field). External data must name a file inside model_dir (no absolute path, no '..', no symbolic link
// leading out) that holds offset + length bytes, and a given length must equal the shape's bytes.
absl::StatusOr<TensorInfo> InitializerInfo(const onnx::TensorProto& init, const std::string& model_dir);

}  // namespace placement::onnx_import
