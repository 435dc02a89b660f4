// ilp_throughput against exhaustive enumeration: on small random cases (4 to 8 operators, 2 or 3 devices,
// memory limits, a CPU at times, colocation groups, pins, operators with two outputs) the placer's max-load,
// scored by Evaluate, equals the best max-load over every placement that is valid and fits, and the placer
// says it proved it; so does the MILP alone, without the warm start, and from a given start. Transfer times
// are measured per tensor, the case the model is exact for.
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "policy/ilp/tests/ilp_test_util.h"
#include "policy/ilp/throughput_ilp.h"
#include "simulator/objectives.h"

namespace placement::ilp::testing {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

struct Enumerated {
  double best = kInf;      // over valid placements that fit
  bool any_valid = false;  // some placement passes ValidatePlacement
  Placement argmin;
  int fitting = 0;
};

Enumerated Enumerate(const CostModel& costs) {
  const int32_t n = costs.graph().num_ops();
  const int32_t num_devices = costs.topology().num_devices();
  Enumerated out;
  Placement p;
  p.device.assign(n, 0);
  for (;;) {
    if (ValidatePlacement(costs, p).ok()) {
      out.any_valid = true;
      absl::StatusOr<Evaluation> ev = Evaluate(costs, p, Objective::kThroughput);
      if (ev.ok() && ev->fits_memory) {
        ++out.fitting;
        if (ev->value < out.best) {
          out.best = ev->value;
          out.argmin = p;
        }
      }
    }
    int32_t i = 0;
    while (i < n && ++p.device[i] == num_devices) p.device[i++] = 0;
    if (i == n) break;
  }
  return out;
}

TEST(IlpThroughputBruteForce, EqualsExhaustiveEnumerationOnRandomCases) {
  int compared = 0, infeasible = 0, warm = 0;
  for (uint64_t seed = 1; seed <= 64; ++seed) {
    const int ops = 4 + static_cast<int>(seed % 5);
    const int devices = 2 + static_cast<int>(seed % 2);
    const bool with_cpu = seed % 3 == 0;
    SCOPED_TRACE(
        absl::StrCat("seed ", seed, ", ", ops, " operators, ", devices, " devices", with_cpu ? " (one a CPU)" : ""));
    const RandomCase c = MakeRandomCase(seed, ops, devices, with_cpu);
    const CostModel costs = Costs(c.graph, c.topology);
    const Enumerated truth = Enumerate(costs);
    absl::StatusOr<PlacerResult> r = RunPlacer("ilp_throughput", costs, Objective::kThroughput);
    if (!truth.any_valid) {
      EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << r.status();
      continue;
    }
    if (truth.fitting == 0) {
      EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition) << r.status();
      ++infeasible;
      continue;
    }
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_TRUE(ValidatePlacement(costs, r->placement).ok());
    EXPECT_TRUE(r->evaluation.fits_memory);
    EXPECT_NEAR(r->evaluation.value, truth.best, 1e-6 * std::max(1.0, truth.best));
    EXPECT_TRUE(r->proven_optimal);
    EXPECT_NEAR(r->best_bound, truth.best, 1e-5 * std::max(1.0, truth.best));
    const std::string notes = absl::StrJoin(r->notes, "\n");
    if (absl::StrContains(notes, "local search")) {  // a warm start existed: CBC must have taken it
      EXPECT_FALSE(absl::StrContains(notes, "no warm start")) << notes;
      ++warm;
    }

    // The MILP alone: no start, no local search.
    PlacementProblem problem;
    problem.costs = &costs;
    problem.objective = Objective::kThroughput;
    absl::StatusOr<PlacerResult> cold =
        PlaceThroughputIlp(problem, Budget{}, ThroughputIlpOptions{.warm_start = false});
    ASSERT_TRUE(cold.ok()) << cold.status();
    EXPECT_NEAR(cold->evaluation.value, truth.best, 1e-6 * std::max(1.0, truth.best))
        << absl::StrJoin(cold->notes, "\n");
    EXPECT_TRUE(cold->proven_optimal);

    // From the optimum as the given start, the answer is the same.
    absl::StatusOr<PlacerResult> again =
        RunPlacer("ilp_throughput", costs, Objective::kThroughput, Budget{}, &truth.argmin);
    ASSERT_TRUE(again.ok()) << again.status();
    EXPECT_NEAR(again->evaluation.value, truth.best, 1e-6 * std::max(1.0, truth.best));
    ++compared;
  }
  std::printf("compared %d cases with the enumeration (%d with a warm start), %d without any placement that fits\n",
              compared, warm, infeasible);
  EXPECT_GE(compared, 50);
}

}  // namespace
}  // namespace placement::ilp::testing
