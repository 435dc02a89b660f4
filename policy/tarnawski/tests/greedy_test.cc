// tarnawski_greedy: hand-checked splits, the published figures of the shared inputs, and memory errors.
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "policy/tarnawski/tests/tarnawski_test_util.h"
#include "tests/support/latency_inputs.h"

namespace placement::tarnawski::testing {
namespace {

using ::testing::HasSubstr;

// 1 -> {2, 3} -> 4; every node 1 on an accelerator, 10 on the CPU, 100 bytes; cost(u) = u.
std::string Diamond(int k, double memory, int cpus = 1) {
  return Input({{1, 1, 10, 100}, {2, 1, 10, 100}, {3, 1, 10, 100}, {4, 1, 10, 100}},
               {{1, 2, 1}, {1, 3, 1}, {2, 4, 2}, {3, 4, 3}}, k, memory, cpus);
}

TEST(TarnawskiGreedy, FillsAcceleratorsInDepthFirstOrder) {
  std::unique_ptr<Loaded> in = Load(Diamond(2, 250));
  ASSERT_NE(in, nullptr);
  absl::StatusOr<PlacerResult> r = RunPlacer("tarnawski_greedy", in->Latency());
  ASSERT_TRUE(r.ok()) << r.status();
  // Depth first: 1, then 3 (pushed last), then 2, then 4. Two nodes per accelerator: acc0 = {1, 3}, acc1 = {2, 4}.
  EXPECT_EQ(DeviceOf(*in, *r, "1"), "acc0");
  EXPECT_EQ(DeviceOf(*in, *r, "3"), "acc0");
  EXPECT_EQ(DeviceOf(*in, *r, "2"), "acc1");
  EXPECT_EQ(DeviceOf(*in, *r, "4"), "acc1");
  // acc0: 2 compute + cost(1) 1 + cost(3) 3 out = 6; acc1: 6 + 4 in + 2 = 12.
  EXPECT_DOUBLE_EQ(r->evaluation.value, 12.0);
  EXPECT_EQ(r->algorithm, "tarnawski_greedy");
}

TEST(TarnawskiGreedy, WhatNoAcceleratorTakesGoesToTheCpu) {
  std::unique_ptr<Loaded> in = Load(Diamond(1, 250));
  ASSERT_NE(in, nullptr);
  absl::StatusOr<PlacerResult> r = RunPlacer("tarnawski_greedy", in->Latency());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(DeviceOf(*in, *r, "2"), "cpu0");
  EXPECT_EQ(DeviceOf(*in, *r, "4"), "cpu0");
  // acc0 {1, 3}: 6; 2 on the CPU: 6 + 10 = 16; 4: 26.
  EXPECT_DOUBLE_EQ(r->evaluation.value, 26.0);
}

TEST(TarnawskiGreedy, ColourClassesOnACycleStayTogether) {
  // 1 and 3 share a colour and 2 lies between them: {1, 2, 3} is one block of 300 bytes, too big for an
  // accelerator of 250, so it goes to the CPU and 4 opens acc0.
  std::unique_ptr<Loaded> in = Load(Input({{1, 1, 10, 100, 7}, {2, 1, 10, 100}, {3, 1, 10, 100, 7}, {4, 1, 10, 100}},
                                          {{1, 2, 1}, {2, 3, 2}, {3, 4, 3}}, 2, 250));
  ASSERT_NE(in, nullptr);
  absl::StatusOr<PlacerResult> r = RunPlacer("tarnawski_greedy", in->Latency());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(DeviceOf(*in, *r, "1"), "cpu0");
  EXPECT_EQ(DeviceOf(*in, *r, "2"), "cpu0");
  EXPECT_EQ(DeviceOf(*in, *r, "4"), "acc0");
  EXPECT_DOUBLE_EQ(r->evaluation.value, 30.0 + 3.0 + 1.0);
}

TEST(TarnawskiGreedy, WithoutCpusAMemoryShortfallNamesTheAcceleratorsAndBytes) {
  // Three nodes of 200 bytes, two accelerators of 250 and no CPU: the third has nowhere to go.
  std::unique_ptr<Loaded> in =
      Load(Input({{1, 1, 10, 200}, {2, 1, 10, 200}, {3, 1, 10, 200}}, {{1, 2, 1}, {2, 3, 1}}, 2, 250, 0));
  ASSERT_NE(in, nullptr);
  absl::StatusOr<PlacerResult> r = RunPlacer("tarnawski_greedy", in->Latency());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(r.status().message(), HasSubstr("accelerator 'acc1'"));
  EXPECT_THAT(r.status().message(), HasSubstr("200"));

  in = Load(Input({{1, 1, 10, 300}}, {}, 2, 250, 0));
  ASSERT_NE(in, nullptr);
  r = RunPlacer("tarnawski_greedy", in->Latency());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(r.status().message(), HasSubstr("operator '1' needs 300"));
  EXPECT_THAT(r.status().message(), HasSubstr("accelerator 'acc0'"));
}

TEST(TarnawskiGreedy, RefusesOtherObjectivesAndCostModels) {
  std::unique_ptr<Loaded> in = Load(Diamond(2, 250));
  ASSERT_NE(in, nullptr);
  PlacementProblem p = in->Latency();
  p.cost_model = CostModelKind::kDefault;
  absl::StatusOr<PlacerResult> r = RunPlacer("tarnawski_greedy", p);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("tarnawski"));
}

TEST(TarnawskiGreedy, ReproducesThePublishedFiguresOfTheSharedInputs) {
  const std::vector<test_support::LatencyInput> inputs = test_support::TarnawskiLatencyInputs();
  if (inputs.empty()) GTEST_SKIP() << "shared inputs not found under ../shared/bench/tarnawski; skipping";
  int checked = 0;
  for (const test_support::LatencyInput& input : inputs) {
    SCOPED_TRACE(input.name);
    std::unique_ptr<Loaded> in = Load(input.json);
    ASSERT_NE(in, nullptr);
    absl::StatusOr<PlacerResult> r = RunPlacer("tarnawski_greedy", in->Latency());
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_TRUE(r->evaluation.fits_memory);
    for (const LatencyBlock& b : r->evaluation.blocks) EXPECT_EQ(b.piece, 1);  // contiguous
    if (input.published_greedy < 0) continue;
    EXPECT_NEAR(r->evaluation.value, input.published_greedy, 0.05);
    ++checked;
  }
  EXPECT_EQ(checked, 4);
}

}  // namespace
}  // namespace placement::tarnawski::testing
