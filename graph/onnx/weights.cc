#include "graph/onnx/weights.h"

#include <unordered_map>
#include <vector>

#include "absl/strings/str_cat.h"

namespace placement::onnx_import {
namespace {

bool HasSymbolicDim(const onnx::ValueInfoProto& input) {
  if (!input.type().has_tensor_type() || !input.type().tensor_type().has_shape()) return true;
  for (const auto& dim : input.type().tensor_type().shape().dim()) {
    if (!dim.has_dim_value()) return true;
  }
  return false;
}

// Input slots that hold parameters in the operators that have them.
bool IsWeightSlot(const std::string& op, int slot) {
  if (op == "Conv" || op == "ConvTranspose" || op == "Gemm" || op == "InstanceNormalization" ||
      op == "LayerNormalization" || op == "GroupNormalization") {
    return slot == 1 || slot == 2;
  }
  if (op == "BatchNormalization") return slot >= 1 && slot <= 4;
  if (op == "LSTM" || op == "GRU" || op == "RNN") return slot >= 1 && slot <= 3;
  if (op == "MatMul" || op == "PRelu") return slot == 1;
  if (op == "Gather") return slot == 0;  // an embedding table
  return false;
}

}  // namespace

absl::StatusOr<std::unordered_set<std::string>> WeightInputs(const onnx::GraphProto& graph,
                                                             const OnnxImportOptions& options) {
  std::unordered_set<std::string> initializers;
  for (const onnx::TensorProto& init : graph.initializer()) initializers.insert(init.name());
  std::vector<const onnx::ValueInfoProto*> candidates;
  for (const onnx::ValueInfoProto& input : graph.input()) {
    if (initializers.count(input.name()) == 0) candidates.push_back(&input);
  }
  std::unordered_set<std::string> weights;
  // 1. The caller says how many inputs hold data.
  if (options.num_data_inputs >= 0) {
    if (options.num_data_inputs > static_cast<int32_t>(candidates.size())) {
      return absl::InvalidArgumentError(absl::StrCat("num_data_inputs is ", options.num_data_inputs,
                                                     " but the graph has only ", candidates.size(),
                                                     " inputs without an initializer"));
    }
    for (size_t i = options.num_data_inputs; i < candidates.size(); ++i) weights.insert(candidates[i]->name());
    return weights;
  }
  // 2. Real inputs carry the dynamic axes (batch, sequence) and weights never do: when some input is dynamic,
  // the static ones are weights.
  bool any_dynamic = false;
  for (const onnx::ValueInfoProto* input : candidates) any_dynamic = any_dynamic || HasSymbolicDim(*input);
  if (any_dynamic) {
    for (const onnx::ValueInfoProto* input : candidates) {
      if (!HasSymbolicDim(*input)) weights.insert(input->name());
    }
    return weights;
  }
  // 3. A fully static model: an input is a weight when every use of it is a parameter slot (a Conv's filter,
  // a Gemm's B, an LSTM's W, an embedding table...).
  std::unordered_map<std::string, bool> only_weight_slots;
  for (const onnx::ValueInfoProto* input : candidates) only_weight_slots[input->name()] = true;
  for (const onnx::NodeProto& node : graph.node()) {
    for (int k = 0; k < node.input_size(); ++k) {
      auto it = only_weight_slots.find(node.input(k));
      if (it != only_weight_slots.end() && !IsWeightSlot(node.op_type(), k)) it->second = false;
    }
  }
  for (const auto& [name, weight] : only_weight_slots) {
    if (weight) weights.insert(name);
  }
  return weights;
}

}  // namespace placement::onnx_import
