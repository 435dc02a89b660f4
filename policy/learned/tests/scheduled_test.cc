#include "policy/learned/scheduled.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>

#include "graph/graph_families.h"
#include "policy/learned/tests/test_graphs.h"
#include "policy/placer_families.h"

namespace placement::learned {
namespace {

struct LayeredCase {
  explicit LayeredCase(const std::string& topology) : f(*GenerateFamily("layered", Options()), topology) {
    problem.costs = f.costs.get();
    groups = *Coarsen(*f.costs);
    scores.groups = groups.num_groups;
    scores.devices = f.topo.num_devices();
    scores.logits.assign(static_cast<size_t>(scores.groups) * scores.devices, 0.0f);
    scale = ScheduleTimeScale(groups, scores.devices);
  }
  static FamilyOptions Options() {
    FamilyOptions o;
    o.approx_ops = 200;
    return o;
  }
  absl::StatusOr<PlacerResult> Decode(double weight, std::mt19937_64* rng = nullptr, ScheduledTrace* trace = nullptr) {
    absl::StatusOr<heuristics::HeftWithCandidates> heft = heuristics::HeftWithCandidates::Prepare(problem, Budget{});
    if (!heft.ok()) return heft.status();
    return heft->PlaceChosen(ScheduledChooser(scores, groups, weight, scale, rng, trace), "scheduled", Budget{});
  }
  Fixture f;
  PlacementProblem problem;
  Coarsening groups;
  PolicyScores scores;
  double scale = 1;
};

TEST(ScheduledDecoding, FlatLogitsGiveHeftsPlacement) {
  LayeredCase s("2xH100+2xT4");
  absl::StatusOr<PlacerResult> heft = (*DefaultPlacerRegistry().Find("heft"))->Place(s.problem, Budget{});
  ASSERT_TRUE(heft.ok()) << heft.status();
  for (double weight : {0.1, 2.0, 50.0}) {
    absl::StatusOr<PlacerResult> r = s.Decode(weight);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->placement.device, heft->placement.device) << "weight " << weight;
  }
}

// A device the network prefers by more than the delay it costs wins; by less, the earliest finish does.
TEST(ScheduledDecoding, LogitsTradeAgainstDelays) {
  LayeredCase s("4xV100");
  for (int32_t g = 0; g < s.scores.groups; ++g) s.scores.logits[static_cast<size_t>(g) * s.scores.devices + 3] = 40;
  absl::StatusOr<PlacerResult> strong = s.Decode(1e-3);
  ASSERT_TRUE(strong.ok()) << strong.status();
  EXPECT_THAT(strong->placement.device, ::testing::Each(3));
  absl::StatusOr<PlacerResult> heft = (*DefaultPlacerRegistry().Find("heft"))->Place(s.problem, Budget{});
  ASSERT_TRUE(heft.ok()) << heft.status();
  // A delay of a mean group's time costs 1e6 here: no preference of 40 outweighs any real delay.
  absl::StatusOr<PlacerResult> weak = s.Decode(1e6);
  ASSERT_TRUE(weak.ok()) << weak.status();
  EXPECT_GT(std::count(weak->placement.device.begin(), weak->placement.device.end(), 0), 0);
}

// The trace has a row per choice: the device taken was offered, the earliest finish has no penalty, devices not
// offered carry the marker; the same seed gives the same decoding.
TEST(ScheduledDecoding, SampledDecodingRecordsEveryChoice) {
  LayeredCase s("2x2xV100");
  std::mt19937_64 rng(7), again(7);
  ScheduledTrace trace;
  absl::StatusOr<PlacerResult> r = s.Decode(2.0, &rng, &trace);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(ValidatePlacement(*s.f.costs, r->placement).ok());
  const size_t choices = trace.group.size();
  ASSERT_GT(choices, 0u);
  ASSERT_EQ(trace.choice.size(), choices);
  ASSERT_EQ(trace.penalty.size(), choices * s.scores.devices);
  for (size_t i = 0; i < choices; ++i) {
    const float* row = &trace.penalty[i * s.scores.devices];
    EXPECT_EQ(*std::min_element(row, row + s.scores.devices), 0.0f) << "choice " << i;
    EXPECT_LT(row[trace.choice[i]], ScheduledTrace::kNotOffered) << "choice " << i;
    EXPECT_GE(trace.group[i], 0);
    EXPECT_LT(trace.group[i], s.groups.num_groups);
  }
  absl::StatusOr<PlacerResult> same = s.Decode(2.0, &again, nullptr);
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(same->placement.device, r->placement.device);
}

}  // namespace
}  // namespace placement::learned
