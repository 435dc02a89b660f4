// Instances for the search and AUTO tests: seeded layered DAGs and families on preset clusters, memory limits,
// pins, and the shared Tarnawski inputs when present.
#pragma once

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "absl/status/statusor.h"
#include "graph/cost_model.h"
#include "graph/generators.h"
#include "graph/graph.h"
#include "graph/placement.h"
#include "graph/problem.h"
#include "graph/topology.h"
#include "graph/topology_json.h"
#include "policy/placer.h"
#include "simulator/tests/test_support.h"

namespace placement::search::testing {

using ::placement::testing::WithMemory;

// A graph, its cluster and their cost model, kept together so the model's pointers stay valid.
struct Instance {
  Graph graph;
  Topology topology;
  std::unique_ptr<CostModel> costs;

  PlacementProblem Problem(Objective objective, uint64_t seed = 1) const {
    PlacementProblem p;
    p.costs = costs.get();
    p.objective = objective;
    p.seed = seed;
    return p;
  }
};

inline std::unique_ptr<Instance> MakeInstance(Graph graph, Topology topology) {
  auto x = std::make_unique<Instance>();
  x->graph = std::move(graph);
  x->topology = std::move(topology);
  absl::StatusOr<CostModel> costs = CostModel::Create(x->graph, x->topology);
  EXPECT_TRUE(costs.ok()) << costs.status();
  if (costs.ok()) x->costs = std::make_unique<CostModel>(*std::move(costs));
  return x;
}

inline Topology Shorthand(const std::string& spec) {
  absl::StatusOr<Topology> t = ParseTopologyShorthand(spec);
  EXPECT_TRUE(t.ok()) << t.status();
  return *std::move(t);
}

inline Graph Layered(int32_t ops, uint64_t seed, int32_t colocation_groups = 0) {
  LayeredDagOptions o;
  o.num_ops = ops;
  o.seed = seed;
  o.num_colocation_groups = colocation_groups;
  absl::StatusOr<Graph> g = LayeredRandomDag(o);
  EXPECT_TRUE(g.ok()) << g.status();
  return *std::move(g);
}

// The same graph with some operators pinned: op id -> device name.
inline Graph WithPins(const Graph& g, const std::map<OpId, std::string>& pins) {
  absl::StatusOr<Graph> out = RebuildGraph(g, [&](OpId v, OpSpec& s) {
    if (auto it = pins.find(v); it != pins.end()) s.pinned_device = it->second;
  });
  EXPECT_TRUE(out.ok()) << out.status();
  return *std::move(out);
}

inline Placement AllOn(const Graph& g, DeviceId d) { return Placement{std::vector<DeviceId>(g.num_ops(), d)}; }

}  // namespace placement::search::testing
