// Helpers for the ILP placers' tests: running a placer by name, small clusters and graphs, reading files.
#pragma once

#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "absl/status/statusor.h"
#include "graph/cost_model.h"
#include "graph/graph.h"
#include "graph/topology.h"
#include "policy/ilp/ilp_placers.h"
#include "policy/placer.h"
#include "policy/registry.h"
#include "simulator/tests/test_support.h"

namespace placement::ilp::testing {

using ::placement::testing::Costs;

inline const PlacerRegistry& IlpPlacers() {
  static const PlacerRegistry* registry = [] {
    auto* r = new PlacerRegistry;
    RegisterIlpPlacers(*r);
    return r;
  }();
  return *registry;
}

inline absl::StatusOr<PlacerResult> RunPlacer(absl::string_view placer, const CostModel& costs, Objective objective,
                                              const Budget& budget = Budget{}, const Placement* start = nullptr) {
  absl::StatusOr<const Placer*> p = IlpPlacers().Find(placer);
  if (!p.ok()) return p.status();
  PlacementProblem problem;
  problem.costs = &costs;
  problem.objective = objective;
  problem.start = start;
  return (*p)->Place(problem, budget);
}

// Devices "dev0".. of the given kinds, types and memories, each with its own outgoing link at 1 GB/s.
struct DeviceSpec {
  std::string kind;
  int64_t memory = 0;
  DeviceType type = DeviceType::kAccelerator;
};
inline Topology Cluster(const std::vector<DeviceSpec>& specs) {
  std::vector<Device> devices;
  for (size_t i = 0; i < specs.size(); ++i) {
    Device d;
    d.name = "dev" + std::to_string(i);
    d.kind = specs[i].kind;
    d.type = specs[i].type;
    d.peak_flops = 1e12;
    d.memory_bandwidth = 1e11;
    d.memory_bytes = specs[i].memory;
    devices.push_back(std::move(d));
  }
  absl::StatusOr<Topology> t = BuildSharedBus("cluster", std::move(devices), 1e9, 0.0);
  EXPECT_TRUE(t.ok()) << t.status();
  return *std::move(t);
}

// A small random case: a DAG of `ops` operators (some with two outputs), devices of kinds "a" and "b" with
// random memory limits and at times a CPU (kind "cpu", no memory limit, no transfer charges), parameter
// bytes, colocation groups and pins. Transfer times are measured per output (the same between any two
// devices) unless `bandwidth_transfers`, where most follow from bytes over links of distinct bandwidths.
// Without `memory_limits` every device is unlimited.
struct RandomCase {
  Graph graph;
  Topology topology;
};
// The random draws of one case, in the order they are made (the cases depend on it).
struct CaseDraws {
  std::mt19937_64 rng;
  double Uniform(double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng); }
  bool Chance(double p) { return Uniform(0, 1) < p; }
  double Quarter(double lo, double hi) { return std::round(Uniform(lo, hi) * 4) / 4; }
};

// Operators with measured times on kinds "a", "b" and "cpu"; sets the total and the largest parameter bytes.
inline std::vector<OpSpec> RandomOps(CaseDraws& r, int ops, bool with_cpu, bool bandwidth_transfers,
                                     int64_t& total_bytes, int64_t& largest) {
  std::vector<OpSpec> specs(ops);
  for (int v = 0; v < ops; ++v) {
    OpSpec& op = specs[v];
    op.name = "op" + std::to_string(v);
    op.op_type = "test";
    op.measured_seconds.emplace_back("a", r.Quarter(0.5, 10));
    if (r.Chance(0.8)) op.measured_seconds.emplace_back("b", r.Quarter(0.5, 10));
    if (with_cpu && r.Chance(0.8)) op.measured_seconds.emplace_back("cpu", r.Quarter(2, 20));
    op.param_bytes = static_cast<int64_t>(r.Uniform(0, 100));
    total_bytes += op.param_bytes;
    largest = std::max(largest, op.param_bytes);
    const int outputs = r.Chance(0.25) ? 2 : 1;
    for (int o = 0; o < outputs; ++o) {
      const double measured = bandwidth_transfers && r.Chance(0.7) ? -1.0 : r.Quarter(0, 3);
      op.outputs.push_back(OutputTensor{static_cast<int64_t>(r.Uniform(1e8, 4e9)), measured});
    }
  }
  return specs;
}

inline std::vector<Device> RandomDevices(CaseDraws& r, int devices_count, bool with_cpu, bool memory_limits,
                                         int64_t total_bytes, int64_t largest) {
  std::vector<Device> devices;
  for (int d = 0; d < devices_count; ++d) {
    Device dev;
    dev.name = "dev" + std::to_string(d);
    dev.kind = d == 0 || r.Chance(0.6) ? "a" : "b";
    dev.peak_flops = 1e12;
    dev.memory_bandwidth = 1e11;
    // Limits between the largest operator and a fair share of the total, or none.
    dev.memory_bytes = memory_limits && r.Chance(0.7)
                           ? static_cast<int64_t>(r.Uniform(std::max<double>(largest, 1),
                                                            1.2 * total_bytes / std::max(1, devices_count - 1) + 1))
                           : 0;
    if (with_cpu && d == devices_count - 1) {
      dev.kind = "cpu";
      dev.type = DeviceType::kCpu;
      dev.memory_bytes = 0;
    }
    devices.push_back(std::move(dev));
  }
  return devices;
}

// Up to two colocation groups of two operators, and a pin.
inline void RandomGroupsAndPin(CaseDraws& r, std::vector<OpSpec>& specs, const std::vector<Device>& devices) {
  const int ops = static_cast<int>(specs.size());
  for (int g = 0; g < 2; ++g) {
    if (!r.Chance(0.4)) continue;
    const int a = static_cast<int>(r.rng() % ops), b = static_cast<int>(r.rng() % ops);
    if (a == b || !specs[a].colocation_group.empty() || !specs[b].colocation_group.empty()) continue;
    specs[a].colocation_group = specs[b].colocation_group = "g" + std::to_string(g);
  }
  if (r.Chance(0.35)) {
    const int v = static_cast<int>(r.rng() % ops);
    const int d = static_cast<int>(r.rng() % devices.size());
    for (const auto& [kind, seconds] : specs[v].measured_seconds) {
      if (kind == devices[d].kind) specs[v].pinned_device = devices[d].name;
    }
  }
}

// Each operator after the first reads up to two earlier ones (or none).
inline Graph RandomEdges(CaseDraws& r, std::vector<OpSpec> specs) {
  const int ops = static_cast<int>(specs.size());
  GraphBuilder b;
  std::vector<int> outputs(ops);
  for (int v = 0; v < ops; ++v) {
    outputs[v] = static_cast<int>(specs[v].outputs.size());
    b.AddOp(std::move(specs[v]));
  }
  for (int w = 1; w < ops; ++w) {
    const int preds = r.Chance(0.15) ? 0 : 1 + static_cast<int>(r.rng() % 2);
    std::vector<int> chosen;
    for (int i = 0; i < preds; ++i) {
      const int u = static_cast<int>(r.rng() % w);
      if (std::find(chosen.begin(), chosen.end(), u) != chosen.end()) continue;
      chosen.push_back(u);
      b.AddEdge(u, static_cast<int32_t>(r.rng() % outputs[u]), w);
    }
  }
  absl::StatusOr<Graph> graph = std::move(b).Build();
  EXPECT_TRUE(graph.ok()) << graph.status();
  return *std::move(graph);
}

inline RandomCase MakeRandomCase(uint64_t seed, int ops, int devices_count, bool with_cpu,
                                 bool bandwidth_transfers = false, bool memory_limits = true) {
  CaseDraws r{std::mt19937_64(seed)};
  int64_t total_bytes = 0, largest = 0;
  std::vector<OpSpec> specs = RandomOps(r, ops, with_cpu, bandwidth_transfers, total_bytes, largest);
  std::vector<Device> devices = RandomDevices(r, devices_count, with_cpu, memory_limits, total_bytes, largest);
  RandomGroupsAndPin(r, specs, devices);
  Graph graph = RandomEdges(r, std::move(specs));
  std::vector<std::vector<double>> bandwidth(devices.size(), std::vector<double>(devices.size()));
  for (auto& row : bandwidth) {
    for (double& bw : row) bw = bandwidth_transfers ? r.Uniform(1e9, 4e9) : 1e9;
  }
  absl::StatusOr<Topology> topology =
      BuildMatrix("random", std::move(devices), bandwidth,
                  std::vector<std::vector<double>>(bandwidth.size(), std::vector<double>(bandwidth.size(), 0.0)));
  EXPECT_TRUE(topology.ok()) << topology.status();
  return RandomCase{std::move(graph), *std::move(topology)};
}

}  // namespace placement::ilp::testing
