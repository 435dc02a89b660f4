// Small builders for hand-computed simulator tests: devices whose operators take the times the test names,
// and graphs whose tensors take the bytes it names; and the checked Build/Costs/WithMemory the placer tests share.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/cost_model.h"
#include "graph/graph.h"
#include "graph/topology.h"
#include "gtest/gtest.h"

namespace placement::testing {

// An accelerator of kind "gpu"; operators built by Op() take their given time on it.
inline Device Gpu(std::string name, int64_t memory_bytes = 0) {
  return Device{std::move(name), "gpu", DeviceType::kAccelerator, 1e12, 1e12, memory_bytes, 0, 0};
}

// A host CPU of kind "cpu"; Op() gives it the same time as a GPU unless told otherwise.
inline Device Cpu(std::string name) { return Device{std::move(name), "cpu", DeviceType::kCpu, 1e11, 1e11, 0, 0, 0}; }

// An operator measured at `seconds` on both kinds, with one output per entry of `output_bytes`.
inline OpSpec Op(std::string name, double seconds, std::vector<int64_t> output_bytes = {0}) {
  OpSpec op;
  op.name = std::move(name);
  op.op_type = "test";
  op.measured_seconds = {{"gpu", seconds}, {"cpu", seconds}};
  for (int64_t b : output_bytes) op.outputs.push_back(OutputTensor{b, -1});
  return op;
}

// Every ordered pair its own link of `bandwidth` bytes/s and `latency` seconds.
inline Topology Matrix(std::vector<Device> devices, double bandwidth, double latency = 0) {
  const size_t n = devices.size();
  std::vector<std::vector<double>> bw(n, std::vector<double>(n, bandwidth));
  std::vector<std::vector<double>> lat(n, std::vector<double>(n, latency));
  absl::StatusOr<Topology> t = BuildMatrix("matrix", std::move(devices), bw, lat);
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *std::move(t) : Topology();
}

inline Graph Build(GraphBuilder&& builder) {
  absl::StatusOr<Graph> g = std::move(builder).Build();
  EXPECT_TRUE(g.ok()) << g.status();
  return g.ok() ? *std::move(g) : Graph();
}

// Two layers of a training step, each a forward (1 s, its weights) and a backward operator (2 s), colocated, every
// tensor of `tensor_bytes`: l1 -> l2, l1 -> l1/grad, l2 -> l2/grad and l2/grad -> l1/grad.
inline Graph TwoLayerStep(int64_t tensor_bytes, int64_t l1_weights, int64_t l2_weights) {
  GraphBuilder b;
  for (const char* name : {"l1", "l2"}) {
    OpSpec f = Op(name, 1.0, {tensor_bytes});
    f.param_bytes = std::string(name) == "l1" ? l1_weights : l2_weights;
    f.colocation_group = name;
    b.AddOp(std::move(f));
    OpSpec grad = Op(std::string(name) + "/grad", 2.0, {tensor_bytes});
    grad.is_backward = true;
    grad.colocation_group = name;
    b.AddOp(std::move(grad));
  }
  b.AddEdge("l1", 0, "l2");
  b.AddEdge("l1", 0, "l1/grad");
  b.AddEdge("l2", 0, "l2/grad");
  b.AddEdge("l2/grad", 0, "l1/grad");
  return Build(std::move(b));
}

// `hosts` hosts of one GPU each behind network interfaces of `bandwidth` bytes/s.
inline Topology HostsOfOneGpu(int hosts, double bandwidth) {
  HierarchySpec spec;
  for (int h = 0; h < hosts; ++h) spec.hosts.push_back(HostSpec{"host" + std::to_string(h), {Gpu("gpu0")}, 0, 0});
  spec.network_bandwidth = bandwidth;
  absl::StatusOr<Topology> t = BuildHierarchy(spec);
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *std::move(t) : Topology();
}

// A CostModel keeps pointers to both: temporaries would dangle.
CostModel Costs(const Graph&, Topology&&) = delete;
CostModel Costs(Graph&&, const Topology&) = delete;
inline CostModel Costs(const Graph& g, const Topology& t) {
  absl::StatusOr<CostModel> c = CostModel::Create(g, t);
  EXPECT_TRUE(c.ok()) << c.status();
  return *std::move(c);
}

// The same cluster with every device's memory set to `bytes` (0 = unlimited).
inline Topology WithMemory(const Topology& t, int64_t bytes) {
  absl::StatusOr<Topology> out = WithMemoryCapacity(t, bytes);
  EXPECT_TRUE(out.ok()) << out.status();
  return *std::move(out);
}

}  // namespace placement::testing
