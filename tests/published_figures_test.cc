// The throughput model reproduces the figures published with the Tarnawski inputs: the max-load of every
// human-expert split and of everything on one accelerator (../shared/bench/tarnawski/reference.tsv).
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "graph/tarnawski.h"
#include "simulator/objectives.h"
#include "tests/support/shared_inputs.h"

namespace placement {
namespace {

namespace fs = std::filesystem;

const fs::path kRoot = test_support::TarnawskiDir();
using test_support::ReadFileToString;

// Published figures are rounded to two decimals.
constexpr double kRounding = 0.005 + 1e-9;

// The one-device figure is a load, not a feasible answer: resnet50 does not fit one accelerator.
double MaxLoad(const Problem& p, const Placement& placement, bool must_fit) {
  absl::StatusOr<CostModel> costs = CostModel::Create(p.graph, *p.topology);
  EXPECT_TRUE(costs.ok()) << costs.status();
  absl::StatusOr<Evaluation> e = Evaluate(*costs, placement, Objective::kThroughput);
  EXPECT_TRUE(e.ok()) << e.status();
  if (must_fit) {
    EXPECT_TRUE(e->fits_memory);
  }
  EXPECT_LE(e->bound.value, e->value + 1e-9);
  return e->value;
}

TEST(PublishedFigures, OneDeviceAndExpertMaxLoadsMatchReference) {
  if (!fs::exists(kRoot / "reference.tsv")) GTEST_SKIP() << "shared inputs not found at " << kRoot << "; skipping";
  const std::vector<test_support::TarnawskiReference> rows = test_support::ReadTarnawskiReference();
  ASSERT_EQ(rows.size(), 9u);
  int experts = 0;
  for (const test_support::TarnawskiReference& row : rows) {
    SCOPED_TRACE(row.input);
    absl::StatusOr<Problem> p = ParseTarnawskiGraph(ReadFileToString(kRoot / row.input));
    ASSERT_TRUE(p.ok()) << p.status();
    ASSERT_EQ(p->topology->num_devices(), row.k + 1);  // k accelerators and one CPU

    Placement all_on_one;
    all_on_one.device.assign(p->graph.num_ops(), 0);
    EXPECT_NEAR(MaxLoad(*p, all_on_one, /*must_fit=*/false), row.one_device, kRounding);

    if (row.expert < 0) continue;
    // Training inputs reuse the inference split for their forward nodes.
    std::string model = fs::path(row.input).stem().string();
    const std::string inference = model.substr(0, model.rfind('_')) + "_inference";
    fs::path split = kRoot / "human-experts" / (model + "_expert.json");
    if (!fs::exists(split)) split = kRoot / "human-experts" / (inference + "_expert.json");
    ASSERT_TRUE(fs::exists(split)) << split;
    absl::StatusOr<Placement> placement = ParseTarnawskiSplit(ReadFileToString(split), p->graph, *p->topology);
    ASSERT_TRUE(placement.ok()) << placement.status();
    EXPECT_NEAR(MaxLoad(*p, *placement, /*must_fit=*/true), row.expert, kRounding);
    ++experts;
  }
  EXPECT_EQ(experts, 7);
}

}  // namespace
}  // namespace placement
