// The graph that runs: control flow expanded, every tensor inferred. A placement graph is static, so
//  - an If whose condition folds becomes the branch it takes; one whose condition depends on the data becomes
//    the costlier branch, with a warning naming the node;
//  - a Loop whose trip count folds (or whose condition folds to false) is unrolled, a Scan over a static axis
//    too; a data-dependent trip count takes OnnxImportOptions::loop_iterations, with a warning; a body that
//    would unroll past max_unrolled_nodes stays one operator costing the trip count times the body;
//  - subgraphs read enclosing-scope tensors by name, through any depth of nesting.
// Expanded operators are named "<node>/then/<body node>", "<node>/iter3/<body node>"; the per-iteration values
// of a Loop's or Scan's scan outputs are stacked by the importer's Stack operator.
#pragma once

#include <string>
#include <unordered_map>

#include <onnx/onnx_pb.h>

#include "absl/status/statusor.h"
#include "graph/onnx/graph_index.h"
#include "graph/onnx/infer_shapes.h"
#include "graph/onnx/onnx_import.h"
#include "graph/onnx/tensor_info.h"

namespace placement::onnx_import {

struct ExpandedGraph {
  // Nodes without subgraphs in a topological order, the main graph's initializers and those lifted from
  // subgraphs, inputs, and outputs renamed to the tensors that hold them.
  onnx::GraphProto graph;
  GraphIndex index;  // of `graph`
  InferredShapes shapes;
};

// Expands and infers `main` (indexed by `index`, which is reused when nothing needs expanding); its nodes and
// initializers are moved out. `initializers`
// holds the checked shape of each main-graph initializer.
absl::StatusOr<ExpandedGraph> ExpandGraph(onnx::GraphProto* main, GraphIndex index,
                                          const std::unordered_map<std::string, int>& opsets,
                                          const std::unordered_map<std::string, TensorInfo>& initializers,
                                          const OnnxImportOptions& options);

}  // namespace placement::onnx_import
