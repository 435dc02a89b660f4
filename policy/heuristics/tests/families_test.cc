// Every heuristic placer on the synthetic families, under both memory models, with pins, colocation groups,
// restricted device kinds and tight memory.
#include <algorithm>
#include <random>
#include <string>

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "graph/generators.h"
#include "graph/graph_families.h"
#include "graph/topology_json.h"
#include "policy/heuristics/placement_state.h"
#include "policy/heuristics/tests/heuristics_test_util.h"

namespace placement::heuristics::testing {
namespace {

Topology FourV100() {
  absl::StatusOr<Topology> t = ParseTopologyShorthand("4xV100");
  EXPECT_TRUE(t.ok()) << t.status();
  return *std::move(t);
}

TEST(HeuristicFamilies, EveryPlacerFitsEveryFamilyOnFourV100) {
  const Topology topo = FourV100();
  for (const std::string& family : GraphFamilies()) {
    FamilyOptions o;
    o.approx_ops = 500;
    o.seed = 3;
    absl::StatusOr<Graph> g = GenerateFamily(family, o);
    ASSERT_TRUE(g.ok()) << g.status();
    const CostModel costs = Costs(*g, topo);
    for (Objective objective : {Objective::kStepTime, Objective::kThroughput}) {
      for (const std::string& placer : PlacerNames()) {
        SCOPED_TRACE(family);
        RunAndCheck(placer, costs, objective);
      }
    }
  }
}

TEST(HeuristicFamilies, LatencyObjectiveOnAnInferenceGraph) {
  const Topology topo = FourV100();
  FamilyOptions o;
  o.approx_ops = 300;
  absl::StatusOr<Graph> g = GenerateFamily("nas_cells", o);
  ASSERT_TRUE(g.ok());
  const CostModel costs = Costs(*g, topo);
  for (const std::string& placer : PlacerNames()) RunAndCheck(placer, costs, Objective::kLatency);
}

// A layered graph whose operators are pinned (every 17th, to gpu<i % 4>) or grouped (groups of about six
// operators spread over the whole graph, some with a pinned member).
Graph PinnedAndGrouped(int32_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  GraphBuilder b;
  const int32_t width = 20;
  std::vector<std::string> group_pin(n / 6 + 1);
  for (int32_t i = 0; i < n; ++i) {
    OpSpec op;
    op.name = absl::StrCat("op", i);
    op.op_type = "matmul";
    op.flops = 1e9 * (1 + rng() % 100);
    op.bytes_accessed = 1e6 * (1 + rng() % 100);
    op.param_bytes = (rng() % 3 == 0) ? int64_t{1} << 24 : 0;
    op.temp_bytes = int64_t{1} << 20;
    op.outputs.push_back(OutputTensor{int64_t{1} << (18 + rng() % 6), -1});
    if (i % 5 == 0) {
      const int32_t grp = static_cast<int32_t>(rng() % group_pin.size());
      op.colocation_group = absl::StrCat("g", grp);
      if (i % 17 == 0 && group_pin[grp].empty()) group_pin[grp] = absl::StrCat("gpu", i % 4);
      op.pinned_device = group_pin[grp];
    } else if (i % 17 == 0) {
      op.pinned_device = absl::StrCat("gpu", i % 4);
    }
    b.AddOp(std::move(op));
    if (i >= width) {
      const int32_t layer_start = (i / width - 1) * width;
      b.AddEdge(layer_start + static_cast<int32_t>(rng() % width), 0, i);
      if (layer_start > 0 && rng() % 2 == 0) b.AddEdge(static_cast<int32_t>(rng() % layer_start), 0, i);
    }
  }
  return Build(std::move(b));
}

TEST(HeuristicFamilies, PinsAndColocationGroupsAreRespected) {
  const Topology topo = FourV100();
  const Graph g = PinnedAndGrouped(400, 5);
  ASSERT_GT(g.colocation_groups().size(), 10u);
  ASSERT_GT(g.pinned_devices().size(), 1u);
  const CostModel costs = Costs(g, topo);
  for (Objective objective : {Objective::kStepTime, Objective::kThroughput}) {
    for (const std::string& placer : PlacerNames()) {
      const PlacerResult r = RunAndCheck(placer, costs, objective);
      if (r.placement.device.empty()) continue;
      int32_t pinned = 0;
      for (OpId v = 0; v < g.num_ops(); ++v) {
        if (g.pinned(v) == kNone) continue;
        ++pinned;
        EXPECT_EQ(topo.device(r.placement.device[v]).name, g.pinned_devices()[g.pinned(v)])
            << placer << " " << g.name(v);
      }
      EXPECT_GT(pinned, 20);
    }
  }
}

TEST(HeuristicFamilies, OperatorsOnlySomeKindsCanRunStayOnThem) {
  // Two accelerators and a host CPU; every third operator has no CPU time, every seventh runs only on the CPU.
  const Topology topo = Cluster({{"gpu", 0}, {"gpu", 0}, {"cpu", 0}});
  GraphBuilder b;
  for (int32_t i = 0; i < 120; ++i) {
    std::vector<std::pair<std::string, double>> t;
    if (i % 7 != 0) t.emplace_back("gpu", 1e-3 * (1 + i % 5));
    if (i % 3 != 0 || i % 7 == 0) t.emplace_back("cpu", 1e-2 * (1 + i % 5));
    b.AddOp(Op(absl::StrCat("op", i), t, 1000, 1 << 20));
    if (i > 0) b.AddEdge(i - 1, 0, i);
    if (i > 5) b.AddEdge(i - 5, 0, i);
  }
  const Graph g = Build(std::move(b));
  const CostModel costs = Costs(g, topo);
  for (Objective objective : {Objective::kStepTime, Objective::kThroughput}) {
    for (const std::string& placer : PlacerNames()) RunAndCheck(placer, costs, objective);
  }
}

TEST(HeuristicFamilies, TightMemoryNeverOverflowsTheSimulator) {
  // Capacities a little above an even share of the pessimistic step-time estimate: placers either fit (and the
  // simulator agrees) or say what is missing.
  FamilyOptions o;
  o.approx_ops = 400;
  for (const std::string& family : {std::string("blocks"), std::string("layered")}) {
    absl::StatusOr<Graph> g = GenerateFamily(family, o);
    ASSERT_TRUE(g.ok());
    const Topology base = FourV100();
    for (Objective objective : {Objective::kStepTime, Objective::kThroughput}) {
      const CostModel probe_costs = Costs(*g, base);
      absl::StatusOr<UnitIndex> units = UnitIndex::Build(probe_costs);
      ASSERT_TRUE(units.ok());
      const MemoryLedger ledger(probe_costs, *units, MemoryModelFor(objective));
      int64_t worst = 0, largest = 0;
      for (int32_t u = 0; u < units->num_units(); ++u) {
        worst += ledger.upper(u);
        largest = std::max(largest, ledger.upper(u));
      }
      const Topology tight = WithMemory(base, std::max(largest, worst / 4 + worst / 5));
      const CostModel costs = Costs(*g, tight);
      int32_t fitted = 0;
      for (const std::string& placer : PlacerNames()) {
        SCOPED_TRACE(family + " " + placer + " " + std::string(ObjectiveName(objective)));
        absl::StatusOr<PlacerResult> r = RunPlacer(placer, costs, objective);
        if (!r.ok()) {
          EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition) << r.status();
          EXPECT_NE(r.status().message().find("needs"), std::string::npos) << r.status();
          continue;
        }
        ++fitted;
        EXPECT_TRUE(r->evaluation.fits_memory);

        EXPECT_TRUE(ValidatePlacement(costs, r->placement).ok());
      }
      // Only single_device cannot spread out.
      EXPECT_GE(fitted, static_cast<int32_t>(PlacerNames().size()) - 1);
    }
  }
}

}  // namespace
}  // namespace placement::heuristics::testing
