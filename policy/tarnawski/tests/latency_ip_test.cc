// ilp_tarnawski: the program against brute force on small random inputs, its warm start, its bound and the
// placers built on it.
#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "policy/tarnawski/instance.h"
#include "policy/tarnawski/ip_program.h"
#include "policy/tarnawski/latency_ip.h"
#include "policy/tarnawski/search.h"
#include "policy/tarnawski/tests/tarnawski_test_util.h"

namespace placement::tarnawski::testing {
namespace {

using ::testing::HasSubstr;

constexpr double kInf = std::numeric_limits<double>::infinity();

// A random DAG of n nodes (edges only forward), two accelerators that cannot hold it all, one CPU.
std::string RandomInput(uint64_t seed, int n) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> fpga(0.5, 3), slow(3, 10), cost(0, 2), size(50, 150);
  std::vector<NodeSpec> nodes;
  double total = 0;
  for (int i = 0; i < n; ++i) {
    nodes.push_back({i, fpga(rng), 0, size(rng)});
    nodes.back().cpu = nodes.back().fpga * slow(rng);
    total += nodes.back().size;
  }
  std::vector<EdgeSpec> edges;
  for (int j = 1; j < n; ++j) {
    const int parent = static_cast<int>(rng() % j);  // connected
    for (int i = 0; i < j; ++i) {
      if (i == parent || rng() % 4 == 0) edges.push_back({i, j, 0});
    }
  }
  std::vector<double> out_cost(n);
  for (double& c : out_cost) c = cost(rng);
  for (EdgeSpec& e : edges) e.cost = out_cost[e.src];
  return Input(nodes, edges, 2, total * 0.6);
}

TEST(TarnawskiIp, ContiguousProgramFindsTheBruteForceOptimumWithoutAWarmStart) {
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    SCOPED_TRACE(seed);
    std::unique_ptr<Loaded> loaded = LoadInstance(RandomInput(seed, 7));
    ASSERT_NE(loaded, nullptr);
    const Instance& in = *loaded->instance;
    const double best = BestSplitByBruteForce(in, /*contiguous_only=*/true);
    const IpSolution solved = SolveLatencyIp(in, 1, nullptr, Budget::For(absl::Seconds(60)));
    ASSERT_TRUE(solved.proven_optimal) << solved.summary;
    EXPECT_NEAR(solved.value, best, 1e-6 * best);
    EXPECT_NEAR(solved.bound, best, 1e-6 * best);
    SplitScorer scorer(in);
    EXPECT_NEAR(scorer.Latency(solved.split), best, 1e-6 * best);  // the program's value is the model's
    EXPECT_TRUE(scorer.Contiguous());
  }
}

TEST(TarnawskiIp, TwoSubgraphsBoundTheModelAndItsSplitIsAllowed) {
  for (uint64_t seed = 11; seed <= 13; ++seed) {
    SCOPED_TRACE(seed);
    std::unique_ptr<Loaded> loaded = LoadInstance(RandomInput(seed, 6));
    ASSERT_NE(loaded, nullptr);
    const Instance& in = *loaded->instance;
    const double contiguous = BestSplitByBruteForce(in, true), any = BestSplitByBruteForce(in, false);
    const IpSolution solved = SolveLatencyIp(in, 2, nullptr, Budget::For(absl::Seconds(60)));
    ASSERT_TRUE(solved.proven_optimal) << solved.summary;
    EXPECT_LE(solved.value, contiguous * (1 + 1e-9));  // one subgraph per accelerator is among its splits
    SplitScorer scorer(in);
    const double scored = scorer.Latency(solved.split);
    EXPECT_LT(scored, kInf);
    EXPECT_GE(scored, any * (1 - 1e-9));
  }
}

TEST(TarnawskiIp, TheWarmStartOfAnySearchedSplitSatisfiesTheProgram) {
  for (uint64_t seed = 21; seed <= 26; ++seed) {
    SCOPED_TRACE(seed);
    std::unique_ptr<Loaded> loaded = LoadInstance(RandomInput(seed, 9));
    ASSERT_NE(loaded, nullptr);
    const Instance& in = *loaded->instance;
    absl::StatusOr<std::vector<DeviceId>> greedy = StartSplit(loaded->Latency(), in);
    ASSERT_TRUE(greedy.ok()) << greedy.status();
    SearchOptions options;
    options.seed = seed;
    const std::vector<DeviceId> split = SearchSplit(in, *greedy, options, Budget::For(absl::Seconds(5))).split;
    SplitScorer scorer(in);
    const double value = scorer.Latency(split);
    for (int32_t q : {1, 2}) {
      LatencyProgram program(in, scorer.model(), q, value * 1.5, 0);
      std::vector<DeviceId> canonical = program.MoveFreeUnitsToCpu(split);
      ilp::Canonicalize(program.classes(), in.num_units(), canonical);
      const double canonical_value = scorer.Latency(canonical);
      EXPECT_LE(canonical_value, value * (1 + 1e-12));
      const std::vector<double> start = program.StartVector(canonical, scorer.model(), canonical_value);
      EXPECT_TRUE(program.milp().Satisfies(start)) << "q = " << q;
      EXPECT_NEAR(program.milp().Objective(start) / program.scale(), canonical_value, 1e-9 * value);
    }
  }
}

TEST(TarnawskiIp, PlacerProvesTheOptimumOfASmallInputAndNamesItsBound) {
  std::unique_ptr<Loaded> loaded = Load(RandomInput(3, 7));
  ASSERT_NE(loaded, nullptr);
  absl::StatusOr<PlacerResult> r = RunPlacer("ilp_tarnawski", loaded->Latency(), Budget::For(absl::Seconds(30)));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->proven_optimal);
  EXPECT_NEAR(r->best_bound, r->evaluation.value, 1e-6 * r->evaluation.value);
  EXPECT_THAT(absl::StrJoin(r->notes, "\n"), HasSubstr("over every contiguous split"));
  absl::StatusOr<PlacerResult> greedy = RunPlacer("tarnawski_greedy", loaded->Latency());
  ASSERT_TRUE(greedy.ok());
  EXPECT_LE(r->evaluation.value, greedy->evaluation.value);
}

TEST(TarnawskiIp, NoCpuAndTooLittleMemoryIsAFailedPrecondition) {
  // Three nodes of 200 bytes, two accelerators of 250, no CPU: the program is infeasible.
  std::unique_ptr<Loaded> loaded =
      Load(Input({{1, 1, 10, 200}, {2, 1, 10, 200}, {3, 1, 10, 200}}, {{1, 2, 1}, {2, 3, 1}}, 2, 250, 0));
  ASSERT_NE(loaded, nullptr);
  absl::StatusOr<PlacerResult> r = RunPlacer("ilp_tarnawski", loaded->Latency(), Budget::For(absl::Seconds(10)));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(r.status().message(), HasSubstr("accelerator 'acc0'"));
}

}  // namespace
}  // namespace placement::tarnawski::testing
