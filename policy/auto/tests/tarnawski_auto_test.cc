// AUTO under the tarnawski cost model: its plan, and on the shared latency inputs an answer at or below the
// published figure of Tarnawski et al.'s greedy baseline, scored by their model.
#include <memory>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_join.h"
#include "graph/tarnawski.h"
#include "policy/auto/auto_placer.h"
#include "policy/auto/portfolio.h"
#include "policy/placer_families.h"
#include "policy/tarnawski/tests/tarnawski_test_util.h"
#include "tests/support/latency_inputs.h"

namespace placement::portfolio {
namespace {

using tarnawski::testing::Load;
using tarnawski::testing::Loaded;
using ::testing::HasSubstr;
using ::testing::StartsWith;

AutoOptions Everything() {
  AutoOptions o;
  o.registry = &DefaultPlacerRegistry();
  return o;
}

std::unique_ptr<Loaded> Shared(const std::string& name, double* published) {
  for (const test_support::LatencyInput& in : test_support::TarnawskiLatencyInputs()) {
    if (in.name != name) continue;
    *published = in.published_greedy;
    return Load(in.json);
  }
  return nullptr;
}

TEST(AutoTarnawski, PlansTheirGreedyThenSearchAndProgramsBySize) {
  double published = 0;
  std::unique_ptr<Loaded> gnmt = Shared("LayerGraphs/gnmt_inference", &published);
  if (gnmt == nullptr) GTEST_SKIP() << "shared inputs not found under ../shared/bench/tarnawski; skipping";
  const Plan plan = PlanPortfolio(gnmt->Latency(), DefaultPlacerRegistry());
  std::vector<std::string> names;
  for (const Candidate& c : plan.run) names.push_back(c.name);
  EXPECT_THAT(names, ::testing::ElementsAre("tarnawski_greedy", "tarnawski_search", "ilp_tarnawski"));
  EXPECT_TRUE(plan.run[1].from_best);
  EXPECT_EQ(plan.search_placer, "tarnawski_search");
  EXPECT_TRUE(plan.search);
  EXPECT_THAT(absl::StrJoin(plan.skipped, "\n"), HasSubstr("ilp_tarnawski_nc: skipped, 96 operators > 60"));
  // The default cost model never plans them.
  PlacementProblem simulated = gnmt->Latency();
  simulated.cost_model = CostModelKind::kDefault;
  for (const Candidate& c : PlanPortfolio(simulated, DefaultPlacerRegistry()).run) {
    EXPECT_THAT(c.name, ::testing::Not(HasSubstr("tarnawski")));
  }
}

TEST(AutoTarnawski, BeatsOrMatchesThePublishedGreedyScoredByTheirModel) {
  for (const std::string name : {"LayerGraphs/bert24_inference", "LayerGraphs/gnmt_inference"}) {
    SCOPED_TRACE(name);
    double published = 0;
    std::unique_ptr<Loaded> in = Shared(name, &published);
    if (in == nullptr) GTEST_SKIP() << "shared inputs not found under ../shared/bench/tarnawski; skipping";
    absl::StatusOr<PlacerResult> r = RunAuto(in->Latency(), Budget::For(absl::Seconds(4)), Everything());
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_THAT(r->algorithm, StartsWith("auto:"));
    EXPECT_TRUE(r->evaluation.fits_memory);
    EXPECT_LE(r->evaluation.value, published + 0.05);
    if (name == "LayerGraphs/gnmt_inference") EXPECT_LT(r->evaluation.value, published * 0.9);
    absl::StatusOr<Evaluation> again =
        Evaluate(*in->costs, r->placement, Objective::kLatency, {}, CostModelKind::kTarnawski);
    ASSERT_TRUE(again.ok()) << again.status();
    EXPECT_EQ(again->value, r->evaluation.value);
    // Global bounds only: the program's bound holds over contiguous splits, not over every split.
    EXPECT_LE(r->best_bound, r->evaluation.value);
  }
}

TEST(AutoTarnawski, RefusesAnObjectiveTheCostModelDoesNotScore) {
  double published = 0;
  std::unique_ptr<Loaded> in = Shared("LayerGraphs/bert24_inference", &published);
  if (in == nullptr) GTEST_SKIP() << "shared inputs not found under ../shared/bench/tarnawski; skipping";
  PlacementProblem p = in->Latency();
  p.objective = Objective::kThroughput;
  absl::StatusOr<PlacerResult> r = RunAuto(p, Budget::For(absl::Seconds(1)), Everything());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("latency"));
}

TEST(AutoTarnawski, NoSplitThatFitsIsAFailedPreconditionNamingTheAcceleratorsAndBytes) {
  // Three layers of 200 bytes, two accelerators of 250 and no CPU core.
  std::unique_ptr<Loaded> in = Load(R"({"maxSizePerFPGA": 250, "maxFPGAs": 2, "maxCPUs": 0, "nodes": [
      {"id": 1, "supportedOnFpga": 1, "cpuLatency": 10, "fpgaLatency": 1, "size": 200},
      {"id": 2, "supportedOnFpga": 1, "cpuLatency": 10, "fpgaLatency": 1, "size": 200},
      {"id": 3, "supportedOnFpga": 1, "cpuLatency": 10, "fpgaLatency": 1, "size": 200}],
    "edges": [{"sourceId": 1, "destId": 2, "cost": 1}, {"sourceId": 2, "destId": 3, "cost": 1}]})");
  ASSERT_NE(in, nullptr);
  absl::StatusOr<PlacerResult> r = RunAuto(in->Latency(), Budget::For(absl::Seconds(5)), Everything());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(r.status().message(), HasSubstr("accelerator 'acc0'"));
  EXPECT_THAT(r.status().message(), HasSubstr("200 B"));
}

}  // namespace
}  // namespace placement::portfolio
