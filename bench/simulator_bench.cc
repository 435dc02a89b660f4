// Time to simulate one step of a layered random DAG (about 1.5 inputs per operator) placed uniformly at random
// on 8 devices, two hosts of four, for each queue priority. Run by `./placement bench`; the figures are kept
// in docs/BENCHMARKS.md.
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <utility>

#include "benchmark/benchmark.h"
#include "graph/cost_model.h"
#include "graph/generators.h"
#include "graph/placement.h"
#include "graph/topology.h"
#include "simulator/simulator.h"

namespace placement {
namespace {

constexpr int kDevices = 8;

Topology TwoHostsOfFour() {
  HierarchySpec spec;
  spec.name = "2x4";
  spec.network_bandwidth = 25e9;  // 200 Gb/s per host
  spec.network_latency = 5e-6;
  for (int h = 0; h < 2; ++h) {
    HostSpec host;
    host.name = "host" + std::to_string(h);
    host.intra_bandwidth = 300e9;
    host.intra_latency = 2e-6;
    for (int i = 0; i < kDevices / 2; ++i) {
      host.devices.push_back(Device{"gpu" + std::to_string(i), "A100", DeviceType::kAccelerator, 312e12, 2.0e12,
                                    int64_t{80} << 30, 0, 5e-6});
    }
    spec.hosts.push_back(std::move(host));
  }
  absl::StatusOr<Topology> t = BuildHierarchy(spec);
  if (!t.ok()) {
    std::cerr << t.status() << "\n";
    std::abort();
  }
  return *std::move(t);
}

// Graphs are built once per size and shared by both priorities; the cost model points into them, so they
// live behind stable addresses.
struct Instance {
  Graph graph;
  Topology topology;
  std::unique_ptr<CostModel> costs;
  Placement placement;
};

const Instance& GetInstance(int32_t num_ops) {
  static std::map<int32_t, std::unique_ptr<Instance>> cache;
  std::unique_ptr<Instance>& slot = cache[num_ops];
  if (slot) return *slot;
  LayeredDagOptions options;
  options.num_ops = num_ops;
  options.seed = 42;
  absl::StatusOr<Graph> graph = LayeredRandomDag(options);
  if (!graph.ok()) {
    std::cerr << graph.status() << "\n";
    std::abort();
  }
  slot = std::make_unique<Instance>();
  slot->graph = *std::move(graph);
  slot->topology = TwoHostsOfFour();
  absl::StatusOr<CostModel> costs = CostModel::Create(slot->graph, slot->topology);
  if (!costs.ok()) {
    std::cerr << costs.status() << "\n";
    std::abort();
  }
  slot->costs = std::make_unique<CostModel>(*std::move(costs));
  std::mt19937_64 rng(7);
  slot->placement.device.resize(num_ops);
  for (DeviceId& d : slot->placement.device) d = static_cast<DeviceId>(rng() % kDevices);
  return *slot;
}

void BM_Simulate(benchmark::State& state) {
  const Instance& in = GetInstance(static_cast<int32_t>(state.range(0)));
  SimulatorConfig config;
  config.priority = static_cast<QueuePriority>(state.range(1));
  int64_t transfers = 0;
  for (auto _ : state) {
    absl::StatusOr<SimulationResult> r = Simulate(*in.costs, in.placement, config);
    if (!r.ok()) {
      state.SkipWithError(std::string(r.status().message()).c_str());
      return;
    }
    transfers = r->transfers;
    benchmark::DoNotOptimize(r->makespan);
  }
  state.SetLabel(config.priority == QueuePriority::kTopological ? "topological" : "upward_rank");
  state.counters["nodes"] = static_cast<double>(in.graph.num_ops());
  state.counters["edges"] = static_cast<double>(in.graph.num_edges());
  state.counters["transfers"] = static_cast<double>(transfers);
  state.counters["nodes_per_s"] =
      benchmark::Counter(static_cast<double>(in.graph.num_ops()), benchmark::Counter::kIsIterationInvariantRate);
}

BENCHMARK(BM_Simulate)
    ->ArgNames({"nodes", "priority"})
    ->ArgsProduct({{1000, 10000, 100000},
                   {static_cast<int64_t>(QueuePriority::kTopological),
                    static_cast<int64_t>(QueuePriority::kUpwardRank)}})
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace placement

BENCHMARK_MAIN();
