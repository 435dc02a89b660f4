// Every heuristic placer on the inputs published with Tarnawski et al. (NeurIPS 2020), on their own clusters
// (k accelerators with their memory limit and one CPU), under THROUGHPUT and STEP_TIME. Prints the max-load of
// each placer next to the published optimum of contiguous splits.
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "graph/tarnawski.h"
#include "policy/heuristics/tests/heuristics_test_util.h"

namespace placement::heuristics::testing {
namespace {

namespace fs = std::filesystem;

const fs::path kRoot = fs::path(PLACEMENT_SHARED_DIR) / "bench" / "tarnawski";

struct Input {
  std::string path;
  std::string k;
  std::string dp_optimal;
};

std::vector<Input> Inputs() {
  std::vector<Input> inputs;
  for (absl::string_view line : absl::StrSplit(ReadFile(kRoot / "reference.tsv"), '\n')) {
    if (line.empty() || line[0] == '#' || absl::StartsWith(line, "input")) continue;
    std::vector<std::string> f = absl::StrSplit(line, '\t');
    if (f.size() >= 3) inputs.push_back({f[0], f[1], f[2]});
  }
  return inputs;
}

TEST(HeuristicsOnTarnawskiInputs, EveryPlacerIsValidAndFitsUnderBothObjectives) {
  if (!fs::exists(kRoot / "reference.tsv")) GTEST_SKIP() << "shared inputs not found at " << kRoot << "; skipping";
  const std::vector<Input> inputs = Inputs();
  ASSERT_EQ(inputs.size(), 9u);
  std::string table = absl::StrFormat("%-42s %3s %8s", "input (THROUGHPUT max-load, ms wall)", "k", "dp_opt");
  for (const std::string& placer : PlacerNames()) absl::StrAppendFormat(&table, " %16s", placer);
  table += "\n";
  for (const Input& input : inputs) {
    SCOPED_TRACE(input.path);
    absl::StatusOr<Problem> p = ParseTarnawskiGraph(ReadFile(kRoot / input.path));
    ASSERT_TRUE(p.ok()) << p.status();
    ASSERT_TRUE(p->topology.has_value());
    const CostModel costs = Costs(p->graph, *p->topology);
    absl::StrAppendFormat(&table, "%-42s %3s %8s", input.path.substr(input.path.find('/') + 1), input.k, input.dp_optimal);
    for (const std::string& placer : PlacerNames()) {
      const absl::Time start = absl::Now();
      const PlacerResult r = RunAndCheck(placer, costs, Objective::kThroughput);
      const double ms = absl::ToDoubleMilliseconds(absl::Now() - start);
      absl::StrAppendFormat(&table, " %9.2f %6.1f", r.evaluation.value, ms);
      RunAndCheck(placer, costs, Objective::kStepTime);
    }
    table += "\n";
  }
  std::printf("%s", table.c_str());
}

}  // namespace
}  // namespace placement::heuristics::testing
