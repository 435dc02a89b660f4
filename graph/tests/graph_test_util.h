// Small graphs for the graph library's tests, built by hand.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "graph/graph.h"

namespace placement::testing {

// An operator of a type, with parameters and one output of each size in `outputs`.
inline OpSpec TypedOp(std::string name, std::string type, int64_t param_bytes, std::vector<int64_t> outputs) {
  OpSpec op;
  op.name = std::move(name);
  op.op_type = std::move(type);
  op.flops = 1000;
  op.bytes_accessed = 100;
  op.param_bytes = param_bytes;
  for (int64_t b : outputs) op.outputs.push_back(OutputTensor{b, -1});
  return op;
}

// Edges from each first operator's output 0 to the second.
inline void AddEdges(GraphBuilder& b, std::initializer_list<std::pair<const char*, const char*>> edges) {
  for (const auto& [src, dst] : edges) b.AddEdge(src, 0, dst);
}

// The graph, failing the test (and returning an empty graph) when it does not build.
inline Graph BuildOrFail(GraphBuilder&& b) {
  absl::StatusOr<Graph> g = std::move(b).Build();
  EXPECT_TRUE(g.ok()) << g.status();
  return g.ok() ? *std::move(g) : Graph();
}

}  // namespace placement::testing
