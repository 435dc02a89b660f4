#include "graph/onnx/graph_index.h"

#include <algorithm>
#include <functional>
#include <queue>
#include <unordered_set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/onnx/subgraphs.h"
#include "graph/status_macros.h"

namespace placement::onnx_import {
namespace {

std::vector<std::string> UniqueOpNames(const onnx::GraphProto& graph) {
  std::vector<std::string> names(graph.node_size());
  std::unordered_set<std::string> taken;
  for (int i = 0; i < graph.node_size(); ++i) {
    const std::string& name = graph.node(i).name();
    if (!name.empty() && taken.insert(name).second) names[i] = name;
  }
  for (int i = 0; i < graph.node_size(); ++i) {
    if (!names[i].empty()) continue;
    std::string base = absl::StrCat(graph.node(i).op_type().empty() ? "Op" : graph.node(i).op_type(), "_", i);
    std::string name = base;
    for (int k = 2; !taken.insert(name).second; ++k) name = absl::StrCat(base, "_", k);
    names[i] = name;
  }
  return names;
}

// Nodes that Kahn's algorithm could not order all wait on a cycle; walking from one of them to a waiting
// producer must revisit a node, and the walk from that node on is a cycle.
std::string DescribeCycle(const onnx::GraphProto& graph, const GraphIndex& index, const std::vector<int>& waiting) {
  int32_t start = -1;
  for (int i = 0; i < graph.node_size() && start < 0; ++i) {
    if (waiting[i] > 0) start = i;
  }
  std::vector<int32_t> path;
  std::vector<int32_t> seen_at(graph.node_size(), -1);
  int32_t node = start;
  while (node >= 0 && seen_at[node] < 0) {
    seen_at[node] = static_cast<int32_t>(path.size());
    path.push_back(node);
    int32_t next = -1;
    for (const std::string& input : graph.node(node).input()) {
      auto it = index.producers.find(input);
      if (it != index.producers.end() && it->second.node >= 0 && waiting[it->second.node] > 0) {
        next = it->second.node;
        break;
      }
    }
    node = next;
  }
  std::vector<std::string> names;
  if (node >= 0) {
    for (size_t i = seen_at[node]; i < path.size(); ++i) names.push_back(NodeLabel(graph, path[i]));
    std::reverse(names.begin(), names.end());  // the walk went from consumer to producer
    names.push_back(names.front());            // close the loop so the message reads as one
  }
  return absl::StrJoin(names, " -> ");
}

}  // namespace

std::string NodeLabel(const onnx::NodeProto& n, int32_t index) {
  if (n.name().empty()) return absl::StrCat("#", index, " (", n.op_type(), ")");
  return absl::StrCat("'", n.name(), "' (", n.op_type(), ")");
}

std::string NodeLabel(const onnx::GraphProto& graph, int32_t node) { return NodeLabel(graph.node(node), node); }

namespace {

// Every tensor name with its producer: initializers and inputs (node -1), then node outputs; each defined once.
absl::Status RegisterProducers(const onnx::GraphProto& graph, GraphIndex* index) {
  size_t tensors = static_cast<size_t>(graph.input_size() + graph.initializer_size());
  for (const onnx::NodeProto& node : graph.node()) tensors += static_cast<size_t>(node.output_size());
  index->producers.reserve(tensors);
  for (const onnx::TensorProto& init : graph.initializer()) {
    if (init.name().empty()) return absl::InvalidArgumentError("an initializer has no name");
    if (!index->producers.emplace(init.name(), TensorProducer{}).second) {
      return absl::InvalidArgumentError(absl::StrCat("initializer '", init.name(), "' is defined twice"));
    }
  }
  std::unordered_set<std::string> input_names;
  for (const onnx::ValueInfoProto& input : graph.input()) {
    if (input.name().empty()) return absl::InvalidArgumentError("a graph input has no name");
    if (!input_names.insert(input.name()).second) {
      return absl::InvalidArgumentError(absl::StrCat("graph input '", input.name(), "' is listed twice"));
    }
    index->producers.emplace(input.name(), TensorProducer{});  // an input may name its initializer
  }
  for (int i = 0; i < graph.node_size(); ++i) {
    const onnx::NodeProto& node = graph.node(i);
    if (node.op_type().empty()) return absl::InvalidArgumentError(absl::StrCat("node #", i, " has no op_type"));
    for (int o = 0; o < node.output_size(); ++o) {
      const std::string& name = node.output(o);
      if (name.empty()) continue;  // an optional output left out
      auto [it, inserted] = index->producers.emplace(name, TensorProducer{i, o});
      if (!inserted) {
        std::string other = it->second.node >= 0 ? absl::StrCat("node ", NodeLabel(graph, it->second.node))
                                                 : std::string("a graph input or initializer");
        return absl::InvalidArgumentError(
            absl::StrCat("tensor '", name, "' is an output of node ", NodeLabel(graph, i), " and also of ", other));
      }
    }
  }
  return absl::OkStatus();
}

// Consumers per node, counting each producing node once per consumer input, for Kahn's algorithm. A node
// holding subgraphs also waits for what they read from this graph.
absl::Status CountDependencies(const onnx::GraphProto& graph, const GraphIndex& index, const OuterScope& outer,
                               std::vector<int>* waiting, std::vector<std::vector<int32_t>>* consumers) {
  waiting->assign(graph.node_size(), 0);
  consumers->assign(graph.node_size(), {});
  for (int i = 0; i < graph.node_size(); ++i) {
    const onnx::NodeProto& node = graph.node(i);
    auto depend = [&](const std::string& name, const std::string& what) -> absl::Status {
      auto it = index.producers.find(name);
      if (it == index.producers.end()) {
        if (outer && outer(name)) return absl::OkStatus();
        return absl::InvalidArgumentError(absl::StrCat("node ", NodeLabel(graph, i), " ", what, " '", name,
                                                       "' is not a graph input, an initializer or a node output",
                                                       outer ? " here or in an enclosing graph" : ""));
      }
      if (it->second.node >= 0) {
        ++(*waiting)[i];
        (*consumers)[it->second.node].push_back(i);
      }
      return absl::OkStatus();
    };
    for (int k = 0; k < node.input_size(); ++k) {
      if (node.input(k).empty()) continue;  // an optional input left out
      RETURN_IF_ERROR(depend(node.input(k), absl::StrCat("input ", k)));
    }
    if (!HasSubgraph(node)) continue;
    for (const onnx::AttributeProto& a : node.attribute()) {
      if (!a.has_g()) continue;
      for (const std::string& name : CapturedNames(a.g())) {
        RETURN_IF_ERROR(depend(name, absl::StrCat("(its subgraph '", a.name(), "') reads")));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<GraphIndex> IndexGraph(const onnx::GraphProto& graph, const OuterScope& outer) {
  GraphIndex index;
  RETURN_IF_ERROR(RegisterProducers(graph, &index));
  std::vector<int> waiting;
  std::vector<std::vector<int32_t>> consumers;
  RETURN_IF_ERROR(CountDependencies(graph, index, outer, &waiting, &consumers));
  for (const onnx::ValueInfoProto& output : graph.output()) {
    if (index.producers.count(output.name()) == 0) {
      return absl::InvalidArgumentError(absl::StrCat("graph output '", output.name(), "' is produced by no node"));
    }
  }
  std::priority_queue<int32_t, std::vector<int32_t>, std::greater<int32_t>> ready;
  for (int i = 0; i < graph.node_size(); ++i) {
    if (waiting[i] == 0) ready.push(i);
  }
  index.order.reserve(graph.node_size());
  while (!ready.empty()) {
    int32_t node = ready.top();
    ready.pop();
    index.order.push_back(node);
    for (int32_t consumer : consumers[node]) {
      if (--waiting[consumer] == 0) ready.push(consumer);
    }
  }
  if (static_cast<int>(index.order.size()) != graph.node_size()) {
    return absl::InvalidArgumentError(absl::StrCat("the graph has a cycle: ", DescribeCycle(graph, index, waiting)));
  }
  index.op_names = UniqueOpNames(graph);
  return index;
}

GraphIndex IndexInOrder(const onnx::GraphProto& graph) {
  GraphIndex index;
  size_t tensors = static_cast<size_t>(graph.input_size() + graph.initializer_size());
  for (const onnx::NodeProto& node : graph.node()) tensors += static_cast<size_t>(node.output_size());
  index.producers.reserve(tensors);
  for (const onnx::TensorProto& init : graph.initializer()) index.producers.emplace(init.name(), TensorProducer{});
  for (const onnx::ValueInfoProto& input : graph.input()) index.producers.emplace(input.name(), TensorProducer{});
  index.order.resize(graph.node_size());
  for (int i = 0; i < graph.node_size(); ++i) {
    index.order[i] = i;
    const onnx::NodeProto& node = graph.node(i);
    for (int o = 0; o < node.output_size(); ++o) {
      if (!node.output(o).empty()) index.producers[node.output(o)] = TensorProducer{i, o};
    }
  }
  index.op_names = UniqueOpNames(graph);
  return index;
}

}  // namespace placement::onnx_import
