// The throughput model reproduces the figures published with the Tarnawski inputs: the max-load of every
// human-expert split and of everything on one accelerator (../shared/bench/tarnawski/reference.tsv).
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "graph/tarnawski.h"
#include "simulator/objectives.h"

namespace placement {
namespace {

namespace fs = std::filesystem;

const fs::path kRoot = fs::path(PLACEMENT_SHARED_DIR) / "bench" / "tarnawski";

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct Row {
  std::string input;
  int k = 0;
  double expert = -1;  // -1: not published
  double one_device = -1;
};

std::vector<Row> ReadReference() {
  std::vector<Row> rows;
  std::ifstream in(kRoot / "reference.tsv");
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#' || line.rfind("input", 0) == 0) continue;
    std::vector<std::string> f = absl::StrSplit(line, '\t');
    Row r;
    r.input = f.at(0);
    EXPECT_TRUE(absl::SimpleAtoi(f.at(1), &r.k));
    if (!f.at(5).empty()) {
      EXPECT_TRUE(absl::SimpleAtod(f.at(5), &r.expert));
    }
    EXPECT_TRUE(absl::SimpleAtod(f.at(7), &r.one_device));
    rows.push_back(r);
  }
  return rows;
}

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
  const std::vector<Row> rows = ReadReference();
  ASSERT_EQ(rows.size(), 9u);
  int experts = 0;
  for (const Row& row : rows) {
    SCOPED_TRACE(row.input);
    absl::StatusOr<Problem> p = ParseTarnawskiGraph(ReadFile(kRoot / row.input));
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
    absl::StatusOr<Placement> placement = ParseTarnawskiSplit(ReadFile(split), p->graph, *p->topology);
    ASSERT_TRUE(placement.ok()) << placement.status();
    EXPECT_NEAR(MaxLoad(*p, *placement, /*must_fit=*/true), row.expert, kRounding);
    ++experts;
  }
  EXPECT_EQ(experts, 7);
}

}  // namespace
}  // namespace placement
