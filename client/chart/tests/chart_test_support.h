// Small problems for the chart's tests: hand-made graphs whose schedules are easy to work out, and a large
// generated one, each simulated with its timeline.
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/cost_model.h"
#include "graph/generators.h"
#include "graph/graph.h"
#include "graph/placement.h"
#include "graph/topology.h"
#include "gtest/gtest.h"
#include "simulator/simulator.h"

namespace placement::chart::testing {

inline Device Gpu(std::string name, int64_t memory_bytes = 0) {
  return Device{std::move(name), "gpu", DeviceType::kAccelerator, 1e12, 1e12, memory_bytes, 0, 0};
}

// An operator measured at `seconds` on kind "gpu", with one output of `output_bytes`.
inline OpSpec Op(std::string name, std::string type, double seconds, int64_t output_bytes = 1000) {
  OpSpec op;
  op.name = std::move(name);
  op.op_type = std::move(type);
  op.measured_seconds = {{"gpu", seconds}};
  op.outputs.push_back(OutputTensor{output_bytes, -1});
  return op;
}

// Every ordered pair of devices its own link of `bandwidth` bytes/s.
inline Topology Matrix(std::vector<Device> devices, double bandwidth) {
  const size_t n = devices.size();
  std::vector<std::vector<double>> bw(n, std::vector<double>(n, bandwidth));
  std::vector<std::vector<double>> lat(n, std::vector<double>(n, 0));
  absl::StatusOr<Topology> t = BuildMatrix("matrix", std::move(devices), bw, lat);
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *std::move(t) : Topology();
}

// A graph, its cluster, placement and simulated step, kept together because the cost model points into the
// graph and topology.
struct Scenario {
  Graph graph;
  Topology topology;
  std::unique_ptr<CostModel> costs;
  Placement placement;
  SimulationResult sim;
};

inline std::unique_ptr<Scenario> Simulated(Graph graph, Topology topology, std::vector<DeviceId> devices) {
  auto s = std::make_unique<Scenario>();
  s->graph = std::move(graph);
  s->topology = std::move(topology);
  absl::StatusOr<CostModel> costs = CostModel::Create(s->graph, s->topology);
  EXPECT_TRUE(costs.ok()) << costs.status();
  if (!costs.ok()) return nullptr;
  s->costs = std::make_unique<CostModel>(*std::move(costs));
  s->placement.device = std::move(devices);
  SimulatorConfig config;
  config.record_timeline = true;
  absl::StatusOr<SimulationResult> sim = Simulate(*s->costs, s->placement, config);
  EXPECT_TRUE(sim.ok()) << sim.status();
  if (!sim.ok()) return nullptr;
  s->sim = *std::move(sim);
  return s;
}

// On three devices, at 1000 bytes/s:
//   d0: load 0..1, then aux 1..1.5 (independent)
//   load's 1000 bytes go to d1 over 1..2, where matmul runs 2..4; matmul's output goes to d2 over 4..5
//   d2: relu 5..6; and small 0..0.25 (independent)
// The step ends with relu at 6, decided by the chain load -> transfer -> matmul -> transfer -> relu.
inline std::unique_ptr<Scenario> ThreeDeviceChain(std::string load_name = "load") {
  GraphBuilder b;
  const OpId load = b.AddOp(Op(std::move(load_name), "Load", 1.0));
  const OpId matmul = b.AddOp(Op("matmul", "MatMul", 2.0));
  const OpId relu = b.AddOp(Op("relu", "Relu", 1.0));
  b.AddOp(Op("aux", "Relu", 0.5));
  b.AddOp(Op("small", "Add", 0.25));
  b.AddEdge(load, 0, matmul);
  b.AddEdge(matmul, 0, relu);
  absl::StatusOr<Graph> g = std::move(b).Build();
  EXPECT_TRUE(g.ok()) << g.status();
  return Simulated(*std::move(g), Matrix({Gpu("d0"), Gpu("d1"), Gpu("d2")}, 1000), {0, 1, 2, 0, 2});
}

// A generated graph of `num_ops` operators placed at random on eight devices.
inline std::unique_ptr<Scenario> LargeScenario(int32_t num_ops) {
  LayeredDagOptions options;
  options.num_ops = num_ops;
  options.seed = 3;
  absl::StatusOr<Graph> g = LayeredRandomDag(options);
  EXPECT_TRUE(g.ok()) << g.status();
  if (!g.ok()) return nullptr;
  std::vector<Device> devices;
  for (int i = 0; i < 8; ++i) {
    devices.push_back(Device{"gpu" + std::to_string(i), "A100", DeviceType::kAccelerator, 312e12, 2e12, 0, 0, 5e-6});
  }
  std::mt19937_64 rng(11);
  std::vector<DeviceId> placement(num_ops);
  for (DeviceId& d : placement) d = static_cast<DeviceId>(rng() % 8);
  return Simulated(*std::move(g), Matrix(std::move(devices), 100e9), std::move(placement));
}

}  // namespace placement::chart::testing
