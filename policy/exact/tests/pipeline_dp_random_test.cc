// pipeline_dp equals a brute-force oracle (every pair of ideals, loads from the simulator's DeviceLoads) on
// hundreds of small seeded random graphs: Tarnawski-format inputs with colour classes that may close cycles,
// zero-latency nodes with and without bytes, backward nodes paired through colour classes, nodes only a CPU
// runs, tight or infeasible memory; and general graphs with several outputs per operator and transfer times
// derived from bytes.
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/tarnawski.h"
#include "graph/topology.h"
#include "policy/exact/pipeline_dp.h"
#include "policy/exact/tests/brute_force.h"
#include "policy/exact/tests/contiguity.h"
#include "simulator/objectives.h"

namespace placement {
namespace {

using testing_internal::BruteForceContiguous;
using testing_internal::OracleResult;

double Uniform(std::mt19937_64& rng, double lo, double hi) {
  return std::uniform_real_distribution<double>(lo, hi)(rng);
}
int Int(std::mt19937_64& rng, int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); }
bool Chance(std::mt19937_64& rng, double p) { return Uniform(rng, 0, 1) < p; }

// A random instance in the published input format.
std::string RandomTarnawski(uint64_t seed) {
  std::mt19937_64 rng(seed);
  const int total = Int(rng, 5, 12);
  const bool training = total >= 6 && Chance(rng, 0.35);
  const int nf = training ? (total + 1) / 2 : total;
  const int nb = total - nf;
  const int k = Int(rng, 2, 3);
  const int cpus = Chance(rng, 0.5) ? 1 : 0;
  const double density = Uniform(rng, 0.25, 0.6);

  std::vector<int> color(total);
  for (int i = 0; i < nf; ++i) color[i] = i;
  if (Chance(rng, 0.35)) {
    for (int m = Int(rng, 1, 2); m > 0; --m) color[Int(rng, 0, nf - 1)] = color[Int(rng, 0, nf - 1)];
  }
  for (int j = 0; j < nb; ++j) color[nf + j] = color[j];  // backward node j pairs with forward node j

  std::vector<std::pair<int, int>> edges;
  for (int j = 1; j < nf; ++j) {
    for (int i = 0; i < j; ++i) {
      if (Chance(rng, density)) edges.emplace_back(i, j);
    }
  }
  const size_t forward_edges = edges.size();
  for (size_t e = 0; e < forward_edges; ++e) {
    const auto [a, b] = edges[e];
    if (a < nb && b < nb && Chance(rng, 0.8)) edges.emplace_back(nf + b, nf + a);  // gradients flow back
    if (b < nb && Chance(rng, 0.4)) edges.emplace_back(a, nf + b);                 // a saved activation
  }
  for (int j = 0; j < nb; ++j) {
    if (Chance(rng, 0.5)) edges.emplace_back(j, nf + j);
  }

  std::vector<int64_t> size(total);
  int64_t total_size = 0, largest = 0;
  std::vector<std::string> nodes;
  for (int i = 0; i < total; ++i) {
    const double fpga = Chance(rng, 0.15) ? 0.0 : Uniform(rng, 0.5, 10);
    const double cpu = Chance(rng, 0.1) ? fpga * 0.5 : fpga * Uniform(rng, 2, 12);
    const bool supported = !(cpus > 0 && Chance(rng, 0.06));
    size[i] = Chance(rng, 0.2) ? 0 : Int(rng, 1, 100);
    total_size += size[i];
    largest = std::max(largest, size[i]);
    nodes.push_back(absl::StrCat(R"({"id": )", i, R"(, "supportedOnFpga": )", supported ? 1 : 0, R"(, "cpuLatency": )",
                                 cpu, R"(, "fpgaLatency": )", fpga, R"(, "isBackwardNode": )", i >= nf ? 1 : 0,
                                 R"(, "colorClass": )", color[i], R"(, "size": )", size[i], "}"));
  }
  std::vector<double> cost(total);
  for (int i = 0; i < total; ++i) cost[i] = Chance(rng, 0.2) ? 0.0 : Uniform(rng, 0.1, 4);
  std::vector<std::string> edge_text;
  for (const auto& [a, b] : edges) {
    edge_text.push_back(absl::StrCat(R"({"sourceId": )", a, R"(, "destId": )", b, R"(, "cost": )", cost[a], "}"));
  }
  const double capacity = Chance(rng, 0.4) ? 1e9 : std::max<double>(1, Uniform(rng, 0.9 * largest, 0.8 * total_size));
  return absl::StrCat(R"({"maxSizePerFPGA": )", static_cast<int64_t>(capacity), R"(, "maxFPGAs": )", k,
                      R"(, "maxCPUs": )", cpus, R"(, "nodes": [)", absl::StrJoin(nodes, ", "), R"(], "edges": [)",
                      absl::StrJoin(edge_text, ", "), "]}");
}

// A random general graph: operators with one or two outputs, transfer times from bytes over a shared bus.
absl::StatusOr<Problem> RandomGeneral(uint64_t seed) {
  std::mt19937_64 rng(seed);
  const int n = Int(rng, 5, 10);
  const int k = Int(rng, 2, 3);
  const bool cpu = Chance(rng, 0.5);
  // Colocation groups; the last two operators may be backward, always grouped with a forward one.
  std::vector<std::string> group(n);
  std::vector<uint8_t> backward(n, 0);
  for (int i = 0; i < n; ++i) {
    if (Chance(rng, 0.2)) group[i] = absl::StrCat("g", Int(rng, 0, 2));
  }
  for (int i = n - 2; i < n; ++i) {
    if (!Chance(rng, 0.3)) continue;
    const int j = Int(rng, 0, n - 3);
    if (group[j].empty()) group[j] = absl::StrCat("pair", j);
    group[i] = group[j];
    backward[i] = 1;
  }
  GraphBuilder b;
  std::vector<int> outputs(n);
  int64_t total = 0;
  for (int i = 0; i < n; ++i) {
    OpSpec op;
    op.name = absl::StrCat("op", i);
    op.op_type = "test";
    const double t = Chance(rng, 0.15) ? 0.0 : Uniform(rng, 0.5, 5);
    op.measured_seconds = {{"gpu", t}, {"cpu", t * Uniform(rng, 1, 8)}};
    op.param_bytes = Chance(rng, 0.2) ? 0 : Int(rng, 1, 50);
    total += op.param_bytes;
    outputs[i] = Int(rng, 1, 2);
    for (int o = 0; o < outputs[i]; ++o) op.outputs.push_back(OutputTensor{Int(rng, 0, 400), -1});
    op.colocation_group = group[i];
    op.is_backward = backward[i] != 0;
    b.AddOp(std::move(op));
  }
  const double density = Uniform(rng, 0.3, 0.6);
  for (int j = 1; j < n; ++j) {
    for (int i = 0; i < j; ++i) {
      if (Chance(rng, density)) b.AddEdge(i, Int(rng, 0, outputs[i] - 1), j);
    }
  }
  absl::StatusOr<Graph> g = std::move(b).Build();
  if (!g.ok()) return g.status();
  std::vector<Device> devices;
  const int64_t capacity = Chance(rng, 0.5) ? 0 : std::max<int64_t>(50, total / k + Int(rng, 0, 40));
  for (int i = 0; i < k; ++i)
    devices.push_back(Device{absl::StrCat("gpu", i), "gpu", DeviceType::kAccelerator, 1, 1, capacity});
  if (cpu) devices.push_back(Device{"cpu0", "cpu", DeviceType::kCpu, 1, 1, 0});
  absl::StatusOr<Topology> t = BuildSharedBus("bus", std::move(devices), /*bus_bandwidth=*/100, /*latency=*/0.01);
  if (!t.ok()) return t.status();
  Problem p;
  p.graph = *std::move(g);
  p.topology = *std::move(t);
  return p;
}

// Checks pipeline_dp (with and without the reductions) against the oracle; false when the oracle declined
// (too many ideals) and the instance does not count.
bool CheckAgainstOracle(const Problem& p, const std::string& what) {
  SCOPED_TRACE(what);
  absl::StatusOr<CostModel> costs = CostModel::Create(p.graph, *p.topology);
  EXPECT_TRUE(costs.ok()) << costs.status();
  if (!costs.ok()) return true;
  const OracleResult oracle = BruteForceContiguous(*costs);
  if (oracle.ideals == 0) return false;
  for (const bool reduce : {true, false}) {
    SCOPED_TRACE(reduce ? "reduced" : "unreduced");
    PipelineOptions options;
    options.reduce = reduce;
    absl::StatusOr<PipelineSolution> sol = SolveContiguousPipeline(*costs, Budget{}, options);
    if (!oracle.feasible) {
      EXPECT_EQ(sol.status().code(), absl::StatusCode::kFailedPrecondition) << sol.status();
      if (!sol.ok()) {
        EXPECT_NE(sol.status().message().find("missing"), std::string::npos) << sol.status();
      }
      continue;
    }
    EXPECT_TRUE(sol.ok()) << sol.status() << " (the oracle found " << oracle.value << ")";
    if (!sol.ok()) continue;
    EXPECT_NEAR(sol->max_load, oracle.value, 1e-9 * std::max(1.0, oracle.value));
    EXPECT_TRUE(sol->proven_optimal);
    absl::StatusOr<Evaluation> ev = Evaluate(*costs, sol->placement, Objective::kThroughput);
    EXPECT_TRUE(ev.ok()) << ev.status();
    if (!ev.ok()) continue;
    EXPECT_DOUBLE_EQ(ev->value, sol->max_load);
    EXPECT_TRUE(ev->fits_memory);
    EXPECT_TRUE(testing_internal::IsContiguous(p.graph, sol->placement));
  }
  return true;
}

TEST(PipelineDpRandom, MatchesBruteForceOnTarnawskiInputs) {
  int checked = 0, infeasible = 0;
  for (uint64_t seed = 1; checked < 600 && seed < 5000; ++seed) {
    const std::string text = RandomTarnawski(seed);
    absl::StatusOr<Problem> p = ParseTarnawskiGraph(text);
    ASSERT_TRUE(p.ok()) << p.status() << "\n" << text;
    if (CheckAgainstOracle(*p, absl::StrCat("seed ", seed, ": ", text))) {
      ++checked;
      absl::StatusOr<CostModel> costs = CostModel::Create(p->graph, *p->topology);
      if (costs.ok() && !BruteForceContiguous(*costs).feasible) ++infeasible;
    }
  }
  EXPECT_EQ(checked, 600);
  EXPECT_GT(infeasible, 5) << "the generator should also make instances memory cannot hold";
}

TEST(PipelineDpRandom, MatchesBruteForceOnGeneralGraphs) {
  int checked = 0;
  for (uint64_t seed = 1; checked < 200 && seed < 2000; ++seed) {
    absl::StatusOr<Problem> p = RandomGeneral(seed);
    ASSERT_TRUE(p.ok()) << p.status();
    if (CheckAgainstOracle(*p, absl::StrCat("general seed ", seed))) ++checked;
  }
  EXPECT_EQ(checked, 200);
}

}  // namespace
}  // namespace placement
