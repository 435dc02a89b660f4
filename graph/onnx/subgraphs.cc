#include "graph/onnx/subgraphs.h"

#include <algorithm>
#include <cstdint>

#include "absl/strings/str_cat.h"

namespace placement::onnx_import {
namespace {

std::unordered_set<std::string> DefinedNames(const onnx::GraphProto& graph) {
  std::unordered_set<std::string> defined;
  for (const onnx::ValueInfoProto& input : graph.input()) defined.insert(input.name());
  for (const onnx::TensorProto& init : graph.initializer()) defined.insert(init.name());
  for (const onnx::NodeProto& node : graph.node()) {
    for (const std::string& output : node.output()) {
      if (!output.empty()) defined.insert(output);
    }
  }
  return defined;
}

template <typename Visit>
void ForEachSubgraph(const onnx::NodeProto& node, const Visit& visit) {
  for (const onnx::AttributeProto& a : node.attribute()) {
    if (a.has_g()) visit(a.g());
    for (const onnx::GraphProto& g : a.graphs()) visit(g);
  }
}

void AddCaptured(const onnx::GraphProto& graph, std::unordered_set<std::string>* seen,
                 std::vector<std::string>* captured) {
  const std::unordered_set<std::string> defined = DefinedNames(graph);
  auto add = [&](const std::string& name) {
    if (!name.empty() && defined.count(name) == 0 && seen->insert(name).second) captured->push_back(name);
  };
  for (const onnx::NodeProto& node : graph.node()) {
    for (const std::string& input : node.input()) add(input);
    ForEachSubgraph(node, [&](const onnx::GraphProto& sub) {
      for (const std::string& name : CapturedNames(sub)) add(name);
    });
  }
}

}  // namespace

bool HasSubgraph(const onnx::NodeProto& node) {
  for (const onnx::AttributeProto& attr : node.attribute()) {
    if (attr.has_g() || attr.graphs_size() > 0 || attr.type() == onnx::AttributeProto::GRAPH ||
        attr.type() == onnx::AttributeProto::GRAPHS) {
      return true;
    }
  }
  return node.op_type() == "If" || node.op_type() == "Loop" || node.op_type() == "Scan";
}

const onnx::GraphProto* GraphAttribute(const onnx::NodeProto& node, const char* name) {
  for (const onnx::AttributeProto& a : node.attribute()) {
    if (a.name() == name && a.has_g()) return &a.g();
  }
  return nullptr;
}

std::vector<std::string> CapturedNames(const onnx::GraphProto& graph) {
  std::unordered_set<std::string> seen;
  std::vector<std::string> captured;
  AddCaptured(graph, &seen, &captured);
  return captured;
}

bool ReadsName(const onnx::GraphProto& graph, const std::string& name) {
  for (const onnx::NodeProto& node : graph.node()) {
    for (const std::string& input : node.input()) {
      if (input == name) return true;
    }
    bool nested = false;
    ForEachSubgraph(node, [&](const onnx::GraphProto& sub) { nested = nested || ReadsName(sub, name); });
    if (nested) return true;
  }
  return false;
}

void RenameCaptured(onnx::GraphProto* graph, const std::unordered_map<std::string, std::string>& renames) {
  const std::unordered_set<std::string> defined = DefinedNames(*graph);
  for (onnx::NodeProto& node : *graph->mutable_node()) {
    for (std::string& input : *node.mutable_input()) {
      if (defined.count(input) > 0) continue;
      if (auto it = renames.find(input); it != renames.end()) input = it->second;
    }
    for (onnx::AttributeProto& a : *node.mutable_attribute()) {
      if (a.has_g()) RenameCaptured(a.mutable_g(), renames);
      for (onnx::GraphProto& g : *a.mutable_graphs()) RenameCaptured(&g, renames);
    }
  }
}

std::string NameTable::Fresh(const std::string& base) {
  if (taken_.insert(base).second) return base;
  int64_t& next = next_suffix_[base];  // where the last search for this base stopped: no quadratic rescans
  for (int64_t k = std::max<int64_t>(next, 2);; ++k) {
    std::string name = absl::StrCat(base, "#", k);
    if (taken_.insert(name).second) {
      next = k + 1;
      return name;
    }
  }
}

void ReserveNames(const onnx::GraphProto& graph, NameTable* names) {
  for (const std::string& name : DefinedNames(graph)) names->Reserve(name);
  for (const onnx::NodeProto& node : graph.node()) {
    ForEachSubgraph(node, [&](const onnx::GraphProto& sub) { ReserveNames(sub, names); });
  }
}

}  // namespace placement::onnx_import
