// Model-local functions (ModelProto.functions, IR 8 and later): newer exporters write a function for each module
// and call it from the graph. The importer inlines every call, nested calls and calls inside If, Loop and Scan
// bodies included, so that the placement graph holds the operators that actually run.
//
// An inlined node is named "<call node>/<body node>" (the body node's op type where it has no name), which
// keeps the module path of an exporter that names each call after its module; tensors the body makes are
// renamed the same way. Attributes the body takes from the call (ref_attr_name) get the call's value, else the
// function's default (IR 9's attribute_proto), else are left out.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include <onnx/onnx_pb.h>

#include "absl/status/status.h"

namespace placement::onnx_import {

// Replaces every call of a model-local function in `model`'s graph by the function's body. Domains the
// functions import and the model does not are added to `opsets`. INVALID_ARGUMENT for a malformed function
// (a body reading a name it does not define, a function calling itself); RESOURCE_EXHAUSTED when the inlined
// graph would hold more than `max_nodes` nodes (nested calls multiply). A model without functions is left as
// it is.
absl::Status InlineFunctions(onnx::ModelProto* model, int64_t max_nodes, std::unordered_map<std::string, int>* opsets,
                             std::vector<std::string>* warnings);

}  // namespace placement::onnx_import
