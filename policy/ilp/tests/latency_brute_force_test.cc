// ilp_latency against exhaustive enumeration. The comparison is with the optimum of the MILP's own model
// (transfers start when their producer ends and take c(t, from, to); links carry them in parallel; a device
// runs one operator at a time): the enumeration tries every placement and, for each, every topological order
// as the order in which operators start, scheduling each as early as the model allows. On chains, where no
// two transfers ever compete for a link and the simulator's list scheduling is optimal, the model and the
// simulator agree, so there the placer's simulated latency must equal the best simulated latency of all
// placements. Everywhere, the reported bound must not exceed the best simulated latency.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "policy/ilp/latency_ilp.h"
#include "policy/ilp/tests/ilp_test_util.h"
#include "simulator/objectives.h"

namespace placement::ilp::testing {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

bool FitsParameters(const CostModel& costs, const Placement& p) {
  std::vector<int64_t> used(costs.topology().num_devices(), 0);
  for (OpId v = 0; v < costs.graph().num_ops(); ++v) used[p.device[v]] += costs.graph().param_bytes(v);
  for (DeviceId d = 0; d < costs.topology().num_devices(); ++d) {
    const int64_t cap = costs.topology().device(d).memory_bytes;
    if (cap > 0 && used[d] > cap) return false;
  }
  return true;
}

// The model's optimal makespan for one placement: the best over start orders (topological orders) of the
// schedule that starts each operator as early as its inputs and its device allow.
double ModelOptimum(const CostModel& costs, const Placement& p, double gap) {
  const Graph& g = costs.graph();
  const int32_t n = g.num_ops();
  std::vector<uint64_t> reach(n, 0);
  for (auto it = g.topo_order().rbegin(); it != g.topo_order().rend(); ++it) {
    for (const Edge& e : g.out_edges(*it)) reach[*it] |= reach[e.dst] | (uint64_t{1} << e.dst);
  }
  auto ordered = [&](OpId a, OpId b) { return ((reach[a] >> b) & 1) || ((reach[b] >> a) & 1); };
  std::vector<OpId> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::vector<int32_t> position(n);
  double best = kInf;
  do {
    for (int32_t i = 0; i < n; ++i) position[order[i]] = i;
    bool topological = true;
    for (EdgeId e = 0; e < g.num_edges() && topological; ++e)
      topological = position[g.edge(e).src] < position[g.edge(e).dst];
    if (!topological) continue;
    std::vector<double> start(n), end(n);
    double makespan = 0;
    for (int32_t i = 0; i < n; ++i) {
      const OpId v = order[i];
      const DeviceId d = p.device[v];
      double s = 0;
      for (EdgeId e : g.in_edges(v)) {
        const OpId u = g.edge(e).src;
        s = std::max(s, end[u] + costs.transfer_time(g.edge_tensor(e), p.device[u], d));
      }
      for (int32_t j = 0; j < i; ++j) {
        const OpId w = order[j];
        if (p.device[w] == d && !ordered(v, w)) s = std::max(s, end[w] + gap);
      }
      start[v] = s;
      end[v] = s + costs.op_time(v, d);
      makespan = std::max(makespan, end[v]);
    }
    best = std::min(best, makespan);
  } while (std::next_permutation(order.begin(), order.end()));
  return best;
}

struct Truth {
  double model = kInf;      // best model makespan over placements that are valid and fit their parameters
  double simulated = kInf;  // best simulated latency over placements that are valid and fit
};

Truth Enumerate(const CostModel& costs, double gap) {
  const int32_t n = costs.graph().num_ops();
  const int32_t num_devices = costs.topology().num_devices();
  SimulatorConfig config;
  config.op_gap = gap;
  Truth t;
  Placement p;
  p.device.assign(n, 0);
  for (;;) {
    if (ValidatePlacement(costs, p).ok() && FitsParameters(costs, p)) {
      t.model = std::min(t.model, ModelOptimum(costs, p, gap));
      absl::StatusOr<Evaluation> ev = Evaluate(costs, p, Objective::kLatency, config);
      if (ev.ok() && ev->fits_memory) t.simulated = std::min(t.simulated, ev->value);
    }
    int32_t i = 0;
    while (i < n && ++p.device[i] == num_devices) p.device[i++] = 0;
    if (i == n) break;
  }
  return t;
}

PlacementProblem Problem(const CostModel& costs, double gap) {
  PlacementProblem problem;
  problem.costs = &costs;
  problem.objective = Objective::kLatency;
  problem.simulator.op_gap = gap;
  return problem;
}

TEST(IlpLatencyBruteForce, ModelOptimumEqualsEnumerationOnRandomCases) {
  int compared = 0, simulated_best = 0, model_below = 0;
  for (uint64_t seed = 101; seed <= 150; ++seed) {
    const int ops = 4 + static_cast<int>(seed % 3);
    const int devices = ops == 6 ? 2 : 2 + static_cast<int>(seed % 2);
    const bool bandwidth = seed % 2 == 0;
    const double gap = seed % 5 == 0 ? 0.25 : 0.0;
    SCOPED_TRACE(absl::StrCat("seed ", seed, ", ", ops, " operators, ", devices, " devices",
                              bandwidth ? ", bandwidth transfers" : "", gap > 0 ? ", gap 0.25" : ""));
    const RandomCase c = MakeRandomCase(seed, ops, devices, /*with_cpu=*/false, bandwidth, /*memory_limits=*/false);
    const CostModel costs = Costs(c.graph, c.topology);
    const Truth truth = Enumerate(costs, gap);
    ASSERT_LT(truth.model, kInf);
    const PlacementProblem problem = Problem(costs, gap);
    absl::StatusOr<LatencyIlpSolution> s = SolveLatencyIlp(problem, Budget{});
    ASSERT_TRUE(s.ok()) << s.status();
    EXPECT_TRUE(s->proven_optimal) << s->summary;
    EXPECT_NEAR(s->model_value, truth.model, 1e-6 * std::max(1.0, truth.model)) << s->summary;
    EXPECT_LE(s->bound, truth.model + 1e-6);

    absl::StatusOr<PlacerResult> r = PlaceLatencyIlp(problem, Budget{});
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_TRUE(ValidatePlacement(costs, r->placement).ok());
    EXPECT_GE(r->evaluation.value, truth.simulated - 1e-9);  // nothing beats the best placement
    EXPECT_LE(r->best_bound, truth.simulated + 1e-6) << absl::StrJoin(r->notes, "\n");  // the bound holds
    if (r->evaluation.value <= truth.simulated + 1e-9) ++simulated_best;
    if (truth.model < truth.simulated - 1e-9) ++model_below;
    ++compared;
  }
  std::printf(
      "compared %d cases: the placer's simulated latency was the best of all placements in %d; the model's optimum "
      "was below the simulator's best in %d (link queues, list scheduling)\n",
      compared, simulated_best, model_below);
  EXPECT_GE(compared, 50);
}

// A chain of operators with one output each, alternating kinds of speed, on two devices.
RandomCase Chain(uint64_t seed, int ops) {
  std::mt19937_64 rng(seed);
  auto quarter = [&](double lo, double hi) {
    return std::round(std::uniform_real_distribution<double>(lo, hi)(rng) * 4) / 4;
  };
  GraphBuilder b;
  for (int v = 0; v < ops; ++v) {
    OpSpec op;
    op.name = "op" + std::to_string(v);
    op.op_type = "test";
    op.measured_seconds = {{"a", quarter(0.5, 10)}, {"b", quarter(0.5, 10)}};
    op.outputs.push_back(OutputTensor{1000, quarter(0, 3)});
    b.AddOp(std::move(op));
    if (v > 0) b.AddEdge(v - 1, 0, v);
  }
  absl::StatusOr<Graph> g = std::move(b).Build();
  EXPECT_TRUE(g.ok()) << g.status();
  return RandomCase{*std::move(g), Cluster({{"a"}, {"b"}})};
}

TEST(IlpLatencyBruteForce, OnChainsTheSimulatedLatencyIsTheBestOfAllPlacements) {
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    const int ops = 4 + static_cast<int>(seed % 4);
    SCOPED_TRACE(absl::StrCat("seed ", seed, ", a chain of ", ops));
    const RandomCase c = Chain(seed, ops);
    const CostModel costs = Costs(c.graph, c.topology);
    const Truth truth = Enumerate(costs, 0.0);
    EXPECT_NEAR(truth.model, truth.simulated, 1e-9);
    absl::StatusOr<PlacerResult> r = RunPlacer("ilp_latency", costs, Objective::kLatency);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_NEAR(r->evaluation.value, truth.simulated, 1e-6 * std::max(1.0, truth.simulated))
        << absl::StrJoin(r->notes, "\n");
    EXPECT_TRUE(r->proven_optimal) << absl::StrJoin(r->notes, "\n");
  }
}

}  // namespace
}  // namespace placement::ilp::testing
