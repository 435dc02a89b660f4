#include "graph/onnx/layout.h"

#include <string>
#include <unordered_set>

#include "graph/op_class.h"

namespace placement::onnx_import {
namespace {

constexpr int kRank = 4;

int RankOf(const InferredShapes& shapes, const std::string& name) {
  const auto it = shapes.tensors.find(name);
  return it == shapes.tensors.end() ? -1 : static_cast<int>(it->second.dims.size());
}

bool IsToChannelsLast(const onnx::NodeProto& node) {
  if (node.op_type() != "Transpose") return false;
  for (const onnx::AttributeProto& a : node.attribute()) {
    if (a.name() == "perm") {
      return a.ints_size() == kRank && a.ints(0) == 0 && a.ints(1) == 3 && a.ints(2) == 1 && a.ints(3) == 2;
    }
  }
  return false;
}

// Operators whose output takes the layout of their data input (the first) in eager PyTorch.
bool KeepsLayoutOfFirstInput(const std::string& op_type) {
  return op_type == "Conv" || op_type == "ConvTranspose" || op_type == "BatchNormalization" ||
         op_type == "InstanceNormalization" || op_type == "MaxPool" || op_type == "AveragePool" ||
         op_type == "Identity" || op_type == "Dropout";
}

// Operators whose output takes the layout of any 4-D input in eager PyTorch: one pass over the data, as
// TensorIterator lays its output out like its inputs (a per-channel scale broadcast over a channels-last tensor
// writes a channels-last one).
bool KeepsLayoutOfAnyInput(const onnx::NodeProto& node) {
  if (!node.domain().empty() && node.domain() != "ai.onnx") return false;
  const OpClass c = ClassOfType(node.op_type());
  return c == OpClass::kElementwise || c == OpClass::kTranscendental;
}

}  // namespace

std::vector<bool> ChannelsLastNodes(const onnx::GraphProto& graph, const InferredShapes& shapes) {
  std::vector<bool> channels_last(graph.node_size(), false);
  std::unordered_set<std::string> tensors;  // the channels-last outputs so far
  const auto is_channels_last = [&](const std::string& name) {
    return !name.empty() && tensors.count(name) > 0 && RankOf(shapes, name) == kRank;
  };
  for (int n = 0; n < graph.node_size(); ++n) {
    const onnx::NodeProto& node = graph.node(n);
    bool keeps = false;
    if (IsToChannelsLast(node)) {
      keeps = node.input_size() > 0 && RankOf(shapes, node.input(0)) == kRank;
    } else if (KeepsLayoutOfFirstInput(node.op_type())) {
      keeps = node.input_size() > 0 && is_channels_last(node.input(0));
    } else if (KeepsLayoutOfAnyInput(node)) {
      for (const std::string& input : node.input()) keeps = keeps || is_channels_last(input);
    }
    if (!keeps || node.output_size() == 0 || RankOf(shapes, node.output(0)) != kRank) continue;
    channels_last[n] = true;
    for (const std::string& output : node.output()) {
      if (!output.empty()) tensors.insert(output);
    }
  }
  return channels_last;
}

}  // namespace placement::onnx_import
