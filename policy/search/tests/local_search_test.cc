#include "policy/search/local_search.h"

#include <functional>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "policy/heuristics/tests/heuristics_test_util.h"
#include "policy/registry.h"
#include "policy/search/tests/search_test_util.h"

namespace placement::search {
namespace {

using testing::AllOn;
using ::testing::HasSubstr;
using testing::Layered;
using testing::MakeInstance;
using testing::Shorthand;

constexpr Objective kObjectives[] = {Objective::kStepTime, Objective::kThroughput, Objective::kLatency};

// The heuristics, among them heft and m_topo: local_search's start placers when a problem gives no start.
using heuristics::testing::Heuristics;

LocalSearchOptions WithStartPlacers() {
  LocalSearchOptions o;
  o.registry = &Heuristics();
  return o;
}

LocalSearchOptions Moves(int64_t max_moves) {
  LocalSearchOptions o = WithStartPlacers();
  o.max_moves = max_moves;
  o.max_stale_moves = -1;
  return o;
}

double ValueOf(const CostModel& costs, const Placement& p, Objective objective) {
  absl::StatusOr<Evaluation> e = Evaluate(costs, p, objective);
  EXPECT_TRUE(e.ok()) << e.status();
  return e.ok() ? e->value : 0;
}

TEST(LocalSearch, ImprovesEverythingOnOneDevice) {
  auto x = MakeInstance(Layered(200, 11), Shorthand("4xV100"));
  const Placement start = AllOn(x->graph, 0);
  for (Objective objective : kObjectives) {
    SCOPED_TRACE(ObjectiveName(objective));
    PlacementProblem problem = x->Problem(objective);
    problem.start = &start;
    absl::StatusOr<PlacerResult> r = RunLocalSearch(problem, Budget{}, Moves(3000));
    ASSERT_TRUE(r.ok()) << r.status();
    const double before = ValueOf(*x->costs, start, objective);
    EXPECT_LT(r->evaluation.value, 0.8 * before);
    EXPECT_TRUE(r->evaluation.fits_memory);
    EXPECT_EQ(r->algorithm, "local_search");
    EXPECT_TRUE(ValidatePlacement(*x->costs, r->placement).ok());
    EXPECT_THAT(absl::StrJoin(r->notes, "\n"), HasSubstr("moves tried"));
  }
}

TEST(LocalSearch, NeverWorseThanItsStart) {
  for (uint64_t seed : {1, 2, 3}) {
    auto x = MakeInstance(Layered(150, seed, /*colocation_groups=*/4), Shorthand("4xV100"));
    for (Objective objective : kObjectives) {
      SCOPED_TRACE(std::string(ObjectiveName(objective)) + " seed " + std::to_string(seed));
      // Starts of every quality: a good heuristic's answer and a round-robin spread.
      for (const char* name : {"heft", "m_topo", "round_robin"}) {
        absl::StatusOr<const Placer*> placer = Heuristics().Find(name);
        if (!placer.ok()) continue;
        absl::StatusOr<PlacerResult> start = (*placer)->Place(x->Problem(objective), Budget{});
        ASSERT_TRUE(start.ok()) << start.status();
        PlacementProblem problem = x->Problem(objective, seed);
        problem.start = &start->placement;
        absl::StatusOr<PlacerResult> r = RunLocalSearch(problem, Budget{}, Moves(500));
        ASSERT_TRUE(r.ok()) << r.status();
        EXPECT_LE(r->evaluation.value, start->evaluation.value) << name;
      }
    }
  }
}

TEST(LocalSearch, SameSeedAndMoveLimitGiveTheSameAnswer) {
  auto x = MakeInstance(Layered(200, 5, /*colocation_groups=*/3), Shorthand("4xV100"));
  for (Objective objective : kObjectives) {
    SCOPED_TRACE(ObjectiveName(objective));
    absl::StatusOr<PlacerResult> a = RunLocalSearch(x->Problem(objective, 42), Budget{}, Moves(1500));
    absl::StatusOr<PlacerResult> b = RunLocalSearch(x->Problem(objective, 42), Budget{}, Moves(1500));
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(a->placement.device, b->placement.device);
    EXPECT_EQ(a->evaluation.value, b->evaluation.value);
    EXPECT_EQ(a->notes, b->notes);
  }
}

TEST(LocalSearch, IncrementalLoadsMatchDeviceLoadsAfterEveryAcceptedMove) {
  auto x = MakeInstance(Layered(250, 9, /*colocation_groups=*/6), Shorthand("4xV100+1xCPU"));
  LocalSearchOptions o = Moves(20000);
  o.verify_incremental = true;  // the search fails with INTERNAL on the first difference
  const Placement start = AllOn(x->graph, 1);
  PlacementProblem problem = x->Problem(Objective::kThroughput);
  problem.start = &start;
  absl::StatusOr<PlacerResult> r = RunLocalSearch(problem, Budget{}, o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_LT(r->evaluation.value, ValueOf(*x->costs, start, Objective::kThroughput));
}

TEST(LocalSearch, RespectsPinsAndColocationGroups) {
  const Graph base = Layered(120, 4, /*colocation_groups=*/5);
  auto x = MakeInstance(testing::WithPins(base, {{0, "gpu3"}, {17, "gpu2"}, {60, "gpu3"}}), Shorthand("4xV100"));
  for (Objective objective : kObjectives) {
    SCOPED_TRACE(ObjectiveName(objective));
    absl::StatusOr<PlacerResult> r = RunLocalSearch(x->Problem(objective), Budget{}, Moves(2000));
    ASSERT_TRUE(r.ok()) << r.status();
    // ValidatePlacement checks pins and that every colocation group shares one device.
    EXPECT_TRUE(ValidatePlacement(*x->costs, r->placement).ok()) << ValidatePlacement(*x->costs, r->placement);
    EXPECT_EQ(r->placement.device[0], 3);
    EXPECT_EQ(r->placement.device[17], 2);
  }
}

TEST(LocalSearch, RepairsAStartThatDoesNotFitAndStaysWithinMemory) {
  const Graph g = Layered(200, 12);
  // Each device holds a bit more than a third of the parameters: one device alone cannot, four can.
  const int64_t per_device = g.total_param_bytes() * 4 / 10;
  auto x = MakeInstance(g, testing::WithMemory(Shorthand("4xV100"), per_device));
  const Placement start = AllOn(x->graph, 0);
  PlacementProblem problem = x->Problem(Objective::kThroughput);
  problem.start = &start;
  absl::StatusOr<PlacerResult> r = RunLocalSearch(problem, Budget{}, Moves(3000));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->evaluation.fits_memory);
  for (const DeviceScore& d : r->evaluation.devices) EXPECT_LE(d.peak_memory, per_device);
  EXPECT_THAT(absl::StrJoin(r->notes, "\n"), HasSubstr("repaired"));
}

TEST(LocalSearch, StepTimeRepairUsesTheSimulatedPeak) {
  const Graph g = Layered(150, 13);
  auto unlimited = MakeInstance(g, Shorthand("4xV100"));
  absl::StatusOr<Evaluation> one = Evaluate(*unlimited->costs, AllOn(g, 0), Objective::kStepTime);
  ASSERT_TRUE(one.ok());
  const int64_t per_device = one->devices[0].peak_memory * 6 / 10;  // all on one device overflows
  auto x = MakeInstance(g, testing::WithMemory(Shorthand("4xV100"), per_device));
  const Placement start = AllOn(x->graph, 0);
  PlacementProblem problem = x->Problem(Objective::kStepTime);
  problem.start = &start;
  absl::StatusOr<PlacerResult> r = RunLocalSearch(problem, Budget{}, Moves(500));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->evaluation.fits_memory);
}

TEST(LocalSearch, ARepairThatCannotFitIsFailedPreconditionNamingTheShortfall) {
  const Graph g = Layered(100, 3);
  auto x = MakeInstance(g, testing::WithMemory(Shorthand("2xV100"), g.total_param_bytes() / 3));
  const Placement start = AllOn(x->graph, 0);
  PlacementProblem problem = x->Problem(Objective::kThroughput);
  problem.start = &start;
  absl::StatusOr<PlacerResult> r = RunLocalSearch(problem, Budget{}, Moves(100));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(r.status().message(), HasSubstr("gpu"));
  EXPECT_THAT(r.status().message(), HasSubstr("over its"));
}

TEST(LocalSearch, ReturnsTheBestFoundWhenTheDeadlineExpires) {
  auto x = MakeInstance(Layered(2000, 8), Shorthand("8xV100"));
  for (Objective objective : {Objective::kStepTime, Objective::kThroughput}) {
    SCOPED_TRACE(ObjectiveName(objective));
    LocalSearchOptions o = WithStartPlacers();
    o.max_stale_moves = -1;  // only the deadline stops it
    const absl::Duration deadline = absl::Milliseconds(300);
    const absl::Time begin = absl::Now();
    absl::StatusOr<PlacerResult> r = RunLocalSearch(x->Problem(objective), Budget::For(deadline), o);
    const absl::Duration took = absl::Now() - begin;
    ASSERT_TRUE(r.ok()) << r.status();
    // It stops for the deadline (nothing else would stop it), not at the millisecond: generous for a loaded host.
    EXPECT_LT(took, 4 * deadline + absl::Seconds(2));
    EXPECT_THAT(absl::StrJoin(r->notes, "\n"), HasSubstr("stopped: deadline"));
  }
}

TEST(LocalSearch, BadInputsAreNamed) {
  auto x = MakeInstance(Layered(50, 1), Shorthand("2xV100"));
  EXPECT_EQ(RunLocalSearch(x->Problem(Objective::kStepTime), Budget{absl::InfinitePast(), nullptr}).status().code(),
            absl::StatusCode::kDeadlineExceeded);
  const Placement bad{std::vector<DeviceId>(x->graph.num_ops(), 7)};
  PlacementProblem problem = x->Problem(Objective::kStepTime);
  problem.start = &bad;
  absl::StatusOr<PlacerResult> r = RunLocalSearch(problem, Budget{});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("start placement"));
}

TEST(LocalSearch, WithoutARegistryAProblemMustGiveItsStart) {
  auto x = MakeInstance(Layered(50, 1), Shorthand("2xV100"));
  absl::StatusOr<PlacerResult> r = RunLocalSearch(x->Problem(Objective::kStepTime), Budget{});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("no registry"));
  LocalSearchOptions greedy = Moves(100);
  greedy.registry = nullptr;
  greedy.start_placers.clear();  // nothing to look up: the greedy fill starts
  r = RunLocalSearch(x->Problem(Objective::kStepTime), Budget{}, greedy);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(absl::StrJoin(r->notes, "\n"), HasSubstr("start: greedy"));
}

TEST(LocalSearch, StreamsImprovingAnswersToTheBudgetsListener) {
  auto x = MakeInstance(Layered(300, 21), Shorthand("4xV100"));
  const Placement start = AllOn(x->graph, 0);
  PlacementProblem problem = x->Problem(Objective::kStepTime);
  problem.start = &start;
  std::vector<double> seen;
  const std::function<void(const PlacerResult&)> listener = [&](const PlacerResult& r) {
    EXPECT_EQ(r.algorithm, "local_search");
    EXPECT_TRUE(r.evaluation.fits_memory);
    seen.push_back(r.evaluation.value);
  };
  Budget budget = Budget::For(absl::Milliseconds(400));
  budget.on_improved = &listener;
  LocalSearchOptions o = WithStartPlacers();
  o.max_stale_moves = -1;
  absl::StatusOr<PlacerResult> r = RunLocalSearch(problem, budget, o);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_FALSE(seen.empty());
  EXPECT_DOUBLE_EQ(seen.front(), ValueOf(*x->costs, start, Objective::kStepTime));  // the start comes first
  for (size_t i = 1; i < seen.size(); ++i) EXPECT_LT(seen[i], seen[i - 1]);
  EXPECT_LE(r->evaluation.value, seen.back());
}

}  // namespace
}  // namespace placement::search
