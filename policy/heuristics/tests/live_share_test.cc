// The placers' memory estimate for STEP_TIME and LATENCY: buffers charged at the share live at once, with the
// none-freed bound as the fallback when the simulation finds the estimate's answer out of memory.
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "policy/heuristics/placement_state.h"
#include "policy/heuristics/tests/heuristics_test_util.h"

namespace placement::heuristics::testing {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kGiB = int64_t{1} << 30;

// op0 -> op1 -> ... -> op(n-1), each writing `bytes`: one device running it holds two outputs at once.
Graph Chain(int n, int64_t bytes) {
  GraphBuilder b;
  for (int i = 0; i < n; ++i) b.AddOp(Op("op" + std::to_string(i), {{"gpu", 1e-3}}, 0, bytes));
  for (int i = 0; i + 1 < n; ++i) b.AddEdge(i, 0, i + 1);
  return Build(std::move(b));
}

PlacementProblem StepTimeProblem(const CostModel& costs) {
  PlacementProblem problem;
  problem.costs = &costs;
  problem.objective = Objective::kStepTime;
  return problem;
}

TEST(LiveShare, AChainHoldsTwoOfItsOutputsAtOnce) {
  EXPECT_DOUBLE_EQ(LiveShareInOrder(Chain(8, kGiB)), 2.0 / 8.0);
  EXPECT_DOUBLE_EQ(LiveShareInOrder(Chain(1, kGiB)), 1.0);
  EXPECT_DOUBLE_EQ(LiveShareInOrder(Chain(3, 0)), 1.0);  // no buffers: nothing to scale
}

TEST(LiveShare, AForwardOutputKeptForItsBackwardStaysLive) {
  // a -> b -> b/grad -> a/grad, and a's output read again by a/grad: a's output lives over the whole step.
  GraphBuilder b;
  for (const char* name : {"a", "b", "b/grad", "a/grad"}) b.AddOp(Op(name, {{"gpu", 1e-3}}, 0, kGiB));
  b.AddEdge(0, 0, 1);
  b.AddEdge(1, 0, 2);
  b.AddEdge(2, 0, 3);
  b.AddEdge(0, 0, 3);
  // At b/grad: a's output, b's (its input) and b/grad's own; a/grad then frees them all but its own.
  EXPECT_DOUBLE_EQ(LiveShareInOrder(Build(std::move(b))), 3.0 / 4.0);
}

TEST(LiveShare, EveryPlacerFitsAChainThatNoneFreedWouldRefuse) {
  const Graph g = Chain(8, kGiB);
  const Topology topo = Cluster({{"gpu", 4 * kGiB}, {"gpu", 4 * kGiB}});
  const CostModel costs = Costs(g, topo);
  absl::StatusOr<UnitIndex> units = UnitIndex::Build(costs);
  ASSERT_TRUE(units.ok()) << units.status();
  // As if none were freed the chain needs 8 GiB before any copy between the devices: more than they hold.
  EXPECT_EQ(MemoryLedger(costs, *units, MemoryModel::kAllocations).total_fixed(), 8 * kGiB);
  const MemoryLedger live(costs, *units, MemoryModel::kLiveShare);
  EXPECT_EQ(live.total_fixed(), 2 * kGiB);
  EXPECT_THAT(live.Totals(), HasSubstr("the 25.0% of scratch and outputs live at once"));
  for (const std::string& placer : PlacerNames()) {
    const PlacerResult r = RunAndCheck(placer, costs, Objective::kStepTime);
    for (const DeviceScore& d : r.evaluation.devices) EXPECT_LE(d.peak_memory, 4 * kGiB) << placer;
  }
}

TEST(LiveShare, AnEstimateOutOfMemoryWhenScoredIsPlacedAgainWithEveryBufferCharged) {
  // a0 -> a1 -> sink <- b1 <- b0, 1 GiB outputs: one device holds three of them at once, whatever it runs first.
  GraphBuilder b;
  for (const char* name : {"a0", "a1", "b0", "b1"}) b.AddOp(Op(name, {{"gpu", 1e-3}}, 0, kGiB));
  b.AddOp(Op("sink", {{"gpu", 1e-3}}));
  b.AddEdge(0, 0, 1);
  b.AddEdge(2, 0, 3);
  b.AddEdge(1, 0, 4);
  b.AddEdge(3, 0, 4);
  const Graph g = Build(std::move(b));
  const Topology topo = Cluster({{"gpu", 5 * kGiB / 2}, {"gpu", 5 * kGiB / 2}});
  const CostModel costs = Costs(g, topo);
  absl::StatusOr<UnitIndex> units = UnitIndex::Build(costs);
  ASSERT_TRUE(units.ok()) << units.status();
  const PlacementProblem problem = StepTimeProblem(costs);
  std::vector<MemoryModel> asked;
  // The placements stand in for a placer's: under the estimate everything on dev0 (3 GiB of its 2.5), under the
  // bound each chain on its own device.
  const std::vector<DeviceId> split = {0, 0, 1, 1, 0};
  absl::StatusOr<PlacerResult> r = PlaceWithMemoryFallback(problem, Budget{}, [&](MemoryModel memory) {
    asked.push_back(memory);
    MemoryLedger ledger(costs, *units, memory);
    for (OpId v = 0; v < g.num_ops(); ++v) ledger.Place(units->unit_of(v), memory == MemoryModel::kLiveShare ? 0 : split[v]);
    return FinishPlacement(problem, ledger, "test");
  });
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(asked, ::testing::ElementsAre(MemoryModel::kLiveShare, MemoryModel::kAllocations));
  EXPECT_TRUE(r->evaluation.fits_memory);
  EXPECT_EQ(r->placement.device, split);
  EXPECT_THAT(r->notes, ::testing::Contains(HasSubstr("dev0 peaks at 3 GiB but has 2.5 GiB")));
}

TEST(LiveShare, ARefusalThatIsNotTheSimulationsIsNotRetried) {
  const Graph g = Chain(4, kGiB);
  const Topology topo = Cluster({{"gpu", kGiB / 2}});
  const CostModel costs = Costs(g, topo);
  int calls = 0;
  absl::StatusOr<PlacerResult> r = PlaceWithMemoryFallback(StepTimeProblem(costs), Budget{}, [&](MemoryModel) {
    ++calls;
    return absl::StatusOr<PlacerResult>(absl::FailedPreconditionError("operator 'op0' needs 1 GiB"));
  });
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace placement::heuristics::testing
