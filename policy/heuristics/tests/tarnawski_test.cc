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
#include "tests/support/shared_inputs.h"

namespace placement::heuristics::testing {
namespace {

namespace fs = std::filesystem;

const fs::path kRoot = test_support::TarnawskiDir();

TEST(HeuristicsOnTarnawskiInputs, EveryPlacerIsValidAndFitsUnderBothObjectives) {
  if (!fs::exists(kRoot / "reference.tsv")) GTEST_SKIP() << "shared inputs not found at " << kRoot << "; skipping";
  const std::vector<test_support::TarnawskiReference> inputs = test_support::ReadTarnawskiReference();
  ASSERT_EQ(inputs.size(), 9u);
  std::string table = absl::StrFormat("%-42s %3s %8s", "input (THROUGHPUT max-load, ms wall)", "k", "dp_opt");
  for (const std::string& placer : PlacerNames()) absl::StrAppendFormat(&table, " %16s", placer);
  table += "\n";
  for (const test_support::TarnawskiReference& input : inputs) {
    SCOPED_TRACE(input.input);
    absl::StatusOr<Problem> p = ParseTarnawskiGraph(test_support::ReadFileToString(kRoot / input.input));
    ASSERT_TRUE(p.ok()) << p.status();
    ASSERT_TRUE(p->topology.has_value());
    const CostModel costs = Costs(p->graph, *p->topology);
    absl::StrAppendFormat(&table, "%-42s %3d %8.2f", input.input.substr(input.input.find('/') + 1), input.k,
                          input.dp_optimal);
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
