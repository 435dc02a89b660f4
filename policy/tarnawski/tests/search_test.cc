// tarnawski_search and the interval split it starts from: hand-checked cuts, brute force on chains, and the
// invariants of every split the search returns.
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "policy/tarnawski/greedy.h"
#include "policy/tarnawski/instance.h"
#include "policy/tarnawski/interval_split.h"
#include "policy/tarnawski/search.h"
#include "policy/tarnawski/tests/tarnawski_test_util.h"

namespace placement::tarnawski::testing {
namespace {

// 1 -> 2 -> 3 -> 4, 1 on an accelerator and 10 on the CPU each, 100 bytes; three accelerators of 250 bytes.
// Node 2's output costs 10 to move, the others 0.1.
std::string ExpensiveMiddle() {
  return Input({{1, 1, 10, 100}, {2, 1, 10, 100}, {3, 1, 10, 100}, {4, 1, 10, 100}},
               {{1, 2, 0.1}, {2, 3, 10}, {3, 4, 0.1}}, 3, 250);
}

TEST(TarnawskiSearch, MovesTheCutOffTheExpensiveTensor) {
  std::unique_ptr<Loaded> in = Load(ExpensiveMiddle());
  ASSERT_NE(in, nullptr);
  absl::StatusOr<PlacerResult> greedy = RunPlacer("tarnawski_greedy", in->Latency());
  ASSERT_TRUE(greedy.ok()) << greedy.status();
  // Greedy: {1, 2} then {3, 4}: 2 + 10 out, then 10 in + 2 = 24.
  EXPECT_DOUBLE_EQ(greedy->evaluation.value, 24.0);
  absl::StatusOr<PlacerResult> searched = RunPlacer("tarnawski_search", in->Latency(), Budget::For(absl::Seconds(10)));
  ASSERT_TRUE(searched.ok()) << searched.status();
  // {1}, {2, 3}, {4}: 1 + 0.1, then 0.1 + 2 + 0.1, then 0.1 + 1 = 4.4.
  EXPECT_NEAR(searched->evaluation.value, 4.4, 1e-12);
  EXPECT_EQ(DeviceOf(*in, *searched, "2"), DeviceOf(*in, *searched, "3"));
  EXPECT_NE(DeviceOf(*in, *searched, "1"), DeviceOf(*in, *searched, "2"));
}

// A chain of n nodes with random times, sizes and costs; two accelerators and a CPU.
std::string RandomChain(uint64_t seed, int n) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> fpga(0.5, 3), cost(0, 3), size(50, 150);
  std::vector<NodeSpec> nodes;
  std::vector<EdgeSpec> edges;
  double total = 0;
  for (int i = 0; i < n; ++i) {
    const double f = fpga(rng);
    nodes.push_back({i, f, f * (i % 3 == 0 ? 1.2 : 6), size(rng)});
    total += nodes.back().size;
    if (i > 0) edges.push_back({i - 1, i, cost(rng)});
  }
  return Input(nodes, edges, 2, total * 0.45);
}

TEST(TarnawskiIntervalSplit, IsOptimalAmongContiguousSplitsOfAChain) {
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    SCOPED_TRACE(seed);
    std::unique_ptr<Loaded> loaded = LoadInstance(RandomChain(seed, 8));
    ASSERT_NE(loaded, nullptr);
    const Instance& in = *loaded->instance;
    SplitScorer scorer(in);
    const std::vector<DeviceId> split = IntervalSplit(in, OrderedBlocks(in), scorer.model());
    ASSERT_FALSE(split.empty());
    EXPECT_TRUE(in.FitsMemory(split));
    EXPECT_NEAR(scorer.Latency(split), BestSplitByBruteForce(in, /*contiguous_only=*/true), 1e-9);
  }
}

// A random DAG with colour classes, as the operator graphs have (weights coloured with their consumer).
std::string RandomDag(uint64_t seed, int n) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> fpga(0.1, 3), cost(0, 2), size(10, 150);
  std::vector<NodeSpec> nodes;
  std::vector<EdgeSpec> edges;
  std::vector<double> out_cost(n);
  double total = 0;
  for (int i = 0; i < n; ++i) {
    const double f = fpga(rng);
    nodes.push_back({i, f, f * 8, size(rng), i % 5 == 0 && i + 1 < n ? i : -1});
    if (i % 5 == 1) nodes.back().color = i - 1;  // colocated with the node before
    total += nodes.back().size;
    out_cost[i] = cost(rng);
  }
  for (int j = 1; j < n; ++j) {
    for (int i = std::max(0, j - 4); i < j; ++i) {
      if (i == j - 1 || rng() % 3 == 0) edges.push_back({i, j, out_cost[i]});
    }
  }
  return Input(nodes, edges, 4, total * 0.3);
}

TEST(TarnawskiSearch, EverySplitItReturnsIsContiguousFitsAndIsNoWorseThanItsStart) {
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    SCOPED_TRACE(seed);
    std::unique_ptr<Loaded> loaded = LoadInstance(RandomDag(seed, 60));
    ASSERT_NE(loaded, nullptr);
    const Instance& in = *loaded->instance;
    absl::StatusOr<std::vector<DeviceId>> greedy = GreedySplit(in);
    ASSERT_TRUE(greedy.ok()) << greedy.status();
    SplitScorer scorer(in);
    const double start = scorer.Latency(*greedy);
    SearchOptions options;
    options.seed = seed;
    const SearchOutcome found = SearchSplit(in, *greedy, options, Budget::For(absl::Seconds(20)));
    EXPECT_TRUE(IsContiguousSplit(in, scorer, found.split));
    EXPECT_DOUBLE_EQ(scorer.Latency(found.split), found.latency);
    EXPECT_LE(found.latency, start);
    EXPECT_TRUE(found.converged);
  }
}

TEST(TarnawskiSearch, StartsFromAGivenSplitAndIsDeterministicForASeed) {
  std::unique_ptr<Loaded> loaded = Load(RandomDag(7, 40));
  ASSERT_NE(loaded, nullptr);
  PlacementProblem problem = loaded->Latency();
  problem.seed = 3;
  absl::StatusOr<PlacerResult> first = RunPlacer("tarnawski_search", problem);
  absl::StatusOr<PlacerResult> second = RunPlacer("tarnawski_search", problem);
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_EQ(first->placement.device, second->placement.device);
  problem.start = &first->placement;
  absl::StatusOr<PlacerResult> again = RunPlacer("tarnawski_search", problem);
  ASSERT_TRUE(again.ok());
  EXPECT_LE(again->evaluation.value, first->evaluation.value);
}

}  // namespace
}  // namespace placement::tarnawski::testing
