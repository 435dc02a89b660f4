// The structure of an ONNX graph checked before anything is computed on it: every tensor has one producer,
// every input of a node exists, nothing depends on itself. A node holding subgraphs (If, Loop, Scan) depends on
// what they read from the graph as well as on its inputs. Errors name the node and tensor.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include <onnx/onnx_pb.h>

#include "absl/status/statusor.h"

namespace placement::onnx_import {

struct TensorProducer {
  int32_t node = -1;    // index into graph.node(); -1 for graph inputs and initializers
  int32_t output = -1;  // output slot of that node
};

struct GraphIndex {
  // Every tensor name: node outputs with their node, graph inputs and initializers with node -1.
  std::unordered_map<std::string, TensorProducer> producers;
  // Node indices in a topological order (file order where the file is sorted, as ONNX requires).
  std::vector<int32_t> order;
  // Operator name per node: the node's name, or "OpType_<index>" where it is empty or already taken.
  std::vector<std::string> op_names;
};

// Names an enclosing graph defines, for a graph nested in a node (If branch, Loop body): reading one is not an
// error. Empty for the main graph.
using OuterScope = std::function<bool(const std::string&)>;

absl::StatusOr<GraphIndex> IndexGraph(const onnx::GraphProto& graph, const OuterScope& outer = nullptr);

// The index of a graph whose nodes are already in a topological order and whose names are checked (the
// importer's expanded graph): producers, the identity order and operator names, without Kahn's algorithm.
GraphIndex IndexInOrder(const onnx::GraphProto& graph);

// "'name' (OpType)" for error messages, falling back to the node's index when it has no name.
std::string NodeLabel(const onnx::GraphProto& graph, int32_t node);
std::string NodeLabel(const onnx::NodeProto& node, int32_t index);

}  // namespace placement::onnx_import
