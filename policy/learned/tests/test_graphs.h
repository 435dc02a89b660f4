// Small graphs and clusters shared by the learned policy's tests.
#pragma once

#include <memory>
#include <string>

#include "graph/cost_model.h"
#include "graph/graph.h"
#include "graph/topology.h"
#include "graph/topology_json.h"

namespace placement::learned {

// a -> b -> c and a -> d -> c; `pin_d` pins d to the named device.
inline Graph Diamond(const std::string& pin_d = "") {
  GraphBuilder b;
  auto op = [&](const std::string& name, const std::string& type, double flops, int64_t params) {
    OpSpec s;
    s.name = name;
    s.op_type = type;
    s.flops = flops;
    s.bytes_accessed = 1e6;
    s.param_bytes = params;
    s.outputs = {OutputTensor{1 << 20}};
    if (name == "d") s.pinned_device = pin_d;
    return b.AddOp(std::move(s));
  };
  const OpId a = op("a", "MatMul", 1e9, 4 << 20), bb = op("b", "Relu", 1e8, 0), c = op("c", "Add", 1e8, 0),
             d = op("d", "Conv", 2e9, 1 << 20);
  b.AddEdge(a, 0, bb);
  b.AddEdge(bb, 0, c);
  b.AddEdge(a, 0, d);
  b.AddEdge(d, 0, c);
  return *std::move(b).Build();
}

// A graph, a cluster and their cost model kept together.
struct Fixture {
  Fixture(Graph g, const std::string& topology) : graph(std::move(g)), topo(*ParseTopologyShorthand(topology)) {
    costs = std::make_unique<CostModel>(*CostModel::Create(graph, topo));
  }
  Graph graph;
  Topology topo;
  std::unique_ptr<CostModel> costs;
};

}  // namespace placement::learned
