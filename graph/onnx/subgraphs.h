// Graphs nested in node attributes (If branches, Loop and Scan bodies) and the scopes they see. A nested
// graph may read any tensor of an enclosing graph by name; function inlining and control-flow expansion both
// rename tensors, so both need to know which names a nested graph defines and which it takes from outside.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <onnx/onnx_pb.h>

namespace placement::onnx_import {

// True when a node holds a graph attribute or is one of the control-flow ops that must.
bool HasSubgraph(const onnx::NodeProto& node);

// The graph attribute `name` of a node, or nullptr.
const onnx::GraphProto* GraphAttribute(const onnx::NodeProto& node, const char* name);

// Names a graph reads from enclosing scopes: node inputs, its nested graphs' included, that it does not define
// (as an input, an initializer or a node output). In order of first use, each once.
std::vector<std::string> CapturedNames(const onnx::GraphProto& graph);

// True when a node of the graph, or of a graph nested in it, reads `name`.
bool ReadsName(const onnx::GraphProto& graph, const std::string& name);

// Renames references to enclosing-scope tensors inside a graph (and the graphs nested in it), leaving names
// the graph defines itself alone: a local definition shadows an outer one.
void RenameCaptured(onnx::GraphProto* graph, const std::unordered_map<std::string, std::string>& renames);

// Tensor names that are not yet taken: `base` itself, else `base#2`, `base#3`, ...
class NameTable {
 public:
  void Reserve(const std::string& name) { taken_.insert(name); }
  bool Taken(const std::string& name) const { return taken_.count(name) > 0; }
  std::string Fresh(const std::string& base);

 private:
  std::unordered_set<std::string> taken_;
  std::unordered_map<std::string, int64_t> next_suffix_;
};

// Reserves every tensor name a graph defines, its nested graphs' included.
void ReserveNames(const onnx::GraphProto& graph, NameTable* names);

}  // namespace placement::onnx_import
