#include "policy/search/throughput_state.h"

#include <random>

#include <gtest/gtest.h>

#include "graph/seeded_random.h"
#include "policy/search/search_units.h"
#include "policy/search/tests/search_test_util.h"
#include "simulator/objectives.h"

namespace placement::search {
namespace {

using testing::Layered;
using testing::MakeInstance;
using testing::Shorthand;

void ExpectLoadsMatch(const CostModel& costs, const ThroughputState& state, int step) {
  const std::vector<double> full = DeviceLoads(costs, state.placement());
  ASSERT_EQ(full.size(), state.loads().size());
  for (size_t d = 0; d < full.size(); ++d) {
    EXPECT_NEAR(state.loads()[d], full[d], 1e-9 * std::max(1.0, full[d])) << "device " << d << " after move " << step;
  }
}

TEST(ThroughputState, IncrementalLoadsEqualAFullRecomputationAfterEveryMove) {
  auto x = MakeInstance(Layered(300, 7, /*colocation_groups=*/5), Shorthand("4xV100+1xCPU"));
  absl::StatusOr<SearchUnits> units = SearchUnits::Build(*x->costs);
  ASSERT_TRUE(units.ok()) << units.status();
  Placement start = testing::AllOn(x->graph, 0);
  ThroughputState state(*x->costs, *units, start);
  ExpectLoadsMatch(*x->costs, state, -1);
  std::mt19937_64 rng(3);
  for (int step = 0; step < 2000; ++step) {
    const int32_t u = static_cast<int32_t>(seeded::UniformBelow(rng, units->num_units()));
    const auto allowed = units->allowed_devices(u);
    const DeviceId d = allowed[seeded::UniformBelow(rng, allowed.size())];
    const bool keep = seeded::Chance(rng, 0.5);
    const std::vector<double> before(state.loads().begin(), state.loads().end());
    state.BeginTry();
    state.MoveUnit(u, d);
    if (keep) {
      state.Commit();
    } else {
      state.Rollback();
      // A rolled-back try leaves the loads exactly as they were.
      for (size_t i = 0; i < before.size(); ++i) ASSERT_EQ(state.loads()[i], before[i]);
    }
    ExpectLoadsMatch(*x->costs, state, step);
    if (::testing::Test::HasFailure()) return;
  }
}

TEST(ThroughputState, HeldBytesFollowTheMoves) {
  auto x = MakeInstance(Layered(100, 2), Shorthand("2xV100"));
  absl::StatusOr<SearchUnits> units = SearchUnits::Build(*x->costs);
  ASSERT_TRUE(units.ok());
  ThroughputState state(*x->costs, *units, testing::AllOn(x->graph, 0));
  EXPECT_EQ(state.held_bytes(0), x->graph.total_param_bytes());
  state.MoveUnit(0, 1);
  EXPECT_EQ(state.held_bytes(1), units->param_bytes(0));
  EXPECT_EQ(state.held_bytes(0) + state.held_bytes(1), x->graph.total_param_bytes());
}

}  // namespace
}  // namespace placement::search
