#include "policy/auto/auto_placer.h"

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "graph/graph_families.h"
#include "graph/tarnawski.h"
#include "policy/auto/portfolio.h"
#include "policy/exact/exact_placers.h"
#include "policy/heuristics/heuristic_placers.h"
#include "policy/placer_families.h"
#include "policy/registry.h"
#include "policy/search/local_search.h"
#include "policy/search/search_placers.h"
#include "policy/search/tests/search_test_util.h"
#include "tests/support/shared_inputs.h"

namespace placement::portfolio {
namespace {

using search::testing::Instance;
using search::testing::MakeInstance;
using search::testing::Shorthand;
using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr Objective kObjectives[] = {Objective::kStepTime, Objective::kThroughput, Objective::kLatency};

// AUTO over every family, as the default registry holds them.
AutoOptions Everything() {
  AutoOptions o;
  o.registry = &DefaultPlacerRegistry();
  return o;
}

Graph Family(const std::string& name, int32_t ops, uint64_t seed) {
  FamilyOptions o;
  o.approx_ops = ops;
  o.seed = seed;
  absl::StatusOr<Graph> g = GenerateFamily(name, o);
  EXPECT_TRUE(g.ok()) << g.status();
  return *std::move(g);
}

// Checks AUTO's answer against every placer it ran (from its own report) and against the deterministic heuristics
// run on their own: none may beat it.
void ExpectNoWorseThanEachPlacer(const Instance& x, Objective objective, absl::Duration budget,
                                 const AutoOptions& options = Everything()) {
  std::vector<PortfolioRun> runs;
  absl::StatusOr<PlacerResult> r = RunAuto(x.Problem(objective), Budget::For(budget), options, &runs);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(r->algorithm, StartsWith("auto:"));
  EXPECT_TRUE(r->evaluation.fits_memory);
  EXPECT_TRUE(ValidatePlacement(*x.costs, r->placement).ok());
  EXPECT_FALSE(runs.empty());
  for (const PortfolioRun& run : runs) {
    if (run.status.ok() && run.fits_memory) {
      EXPECT_LE(r->evaluation.value, run.value) << run.placer;
    }
  }
  const PlacerRegistry& registry = *options.registry;
  for (const char* name : {"heft", "m_topo", "m_etf", "critical_path", "single_device"}) {
    absl::StatusOr<const Placer*> p = registry.Find(name);
    if (!p.ok()) continue;
    absl::StatusOr<PlacerResult> alone = (*p)->Place(x.Problem(objective), Budget{});
    if (alone.ok() && alone->evaluation.fits_memory) {
      EXPECT_LE(r->evaluation.value, alone->evaluation.value) << name;
    }
  }
}

TEST(Auto, NoWorseThanAnyPlacerItRanOnEveryFamilyAndObjective) {
  for (const std::string& family : GraphFamilies()) {
    auto x = MakeInstance(Family(family, 40, 3), Shorthand("4xV100"));
    for (Objective objective : kObjectives) {
      SCOPED_TRACE(family + " / " + std::string(ObjectiveName(objective)));
      ExpectNoWorseThanEachPlacer(*x, objective, absl::Milliseconds(400));
    }
  }
}

// The registry without the CBC-based placers, whose time on the larger shared inputs is hard to bound.
const PlacerRegistry& WithoutIlp() {
  static const PlacerRegistry* r = [] {
    auto* registry = new PlacerRegistry;
    RegisterHeuristicPlacers(*registry);
    RegisterExactPlacers(*registry);
    RegisterSearchPlacers(*registry);
    return registry;
  }();
  return *r;
}

TEST(Auto, NoWorseThanAnyPlacerItRanOnTheSharedTarnawskiInputs) {
  const std::filesystem::path root = test_support::TarnawskiDir() / "throughput-inputs";
  if (!std::filesystem::exists(root)) GTEST_SKIP() << "shared inputs not found at " << root << "; skipping";
  AutoOptions options;
  options.registry = &WithoutIlp();
  for (const char* input : {"LayerGraphs/bert24_training.json", "LayerGraphs/gnmt_training.json",
                            "LayerGraphs/resnet50_inference.json", "OperatorGraphs/bert_l-3_inference.json"}) {
    SCOPED_TRACE(input);
    absl::StatusOr<Problem> p = ParseTarnawskiGraph(test_support::ReadFileToString(root / input));
    ASSERT_TRUE(p.ok()) << p.status();
    auto x = MakeInstance(std::move(p->graph), *std::move(p->topology));
    ExpectNoWorseThanEachPlacer(*x, Objective::kThroughput, absl::Milliseconds(500), options);
  }
}

TEST(Auto, NotesListWhatRanAndTheWinner) {
  auto x = MakeInstance(search::testing::Layered(80, 2), Shorthand("4xV100"));
  absl::StatusOr<PlacerResult> r =
      RunAuto(x->Problem(Objective::kStepTime), Budget::For(absl::Milliseconds(300)), Everything());
  ASSERT_TRUE(r.ok()) << r.status();
  const std::string notes = absl::StrJoin(r->notes, "\n");
  EXPECT_THAT(notes, HasSubstr("heft: "));
  EXPECT_THAT(notes, HasSubstr("local_search: "));
  EXPECT_THAT(notes, HasSubstr("winner: " + r->algorithm.substr(5)));
  EXPECT_LE(r->best_bound, r->evaluation.value);
}

TEST(Auto, StreamsOnlyAnswersBetterThanAnyBeforeUnderItsOwnName) {
  auto x = MakeInstance(search::testing::Layered(200, 8), Shorthand("4xV100"));
  std::vector<std::pair<std::string, double>> seen;
  const std::function<void(const PlacerResult&)> listener = [&](const PlacerResult& r) {
    seen.emplace_back(r.algorithm, r.evaluation.value);
  };
  Budget budget = Budget::For(absl::Milliseconds(500));
  budget.on_improved = &listener;
  absl::StatusOr<PlacerResult> r = RunAuto(x->Problem(Objective::kThroughput), budget, Everything());
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_FALSE(seen.empty());
  for (size_t i = 0; i < seen.size(); ++i) {
    EXPECT_THAT(seen[i].first, StartsWith("auto:"));
    if (i > 0) {
      EXPECT_LT(seen[i].second, seen[i - 1].second);
    }
  }
  EXPECT_EQ(seen.back().second, r->evaluation.value);
}

// Two stand-ins under names AUTO knows, both answering with everything on device 0.
class Fixed : public Placer {
 public:
  explicit Fixed(std::string name) : name_(std::move(name)) {}
  absl::string_view name() const override { return name_; }
  absl::string_view description() const override { return "everything on the first device"; }
  std::vector<Objective> objectives() const override { return {Objective::kStepTime}; }
  absl::StatusOr<PlacerResult> Place(const PlacementProblem& problem, const Budget&) const override {
    return ScorePlacement(problem, Placement{std::vector<DeviceId>(problem.graph().num_ops(), 0)}, name_);
  }

 private:
  std::string name_;
};

TEST(Auto, EqualAnswersGoToTheSmallerName) {
  PlacerRegistry registry;
  registry.Register(std::make_unique<Fixed>("single_device"));
  registry.Register(std::make_unique<Fixed>("m_topo"));
  AutoOptions options;
  options.registry = &registry;
  auto x = MakeInstance(search::testing::Layered(30, 1), Shorthand("2xV100"));
  absl::StatusOr<PlacerResult> r = RunAuto(x->Problem(Objective::kStepTime), Budget{}, options);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->algorithm, "auto:m_topo");
}

TEST(Auto, SameProblemAndMoveLimitGiveTheSameAnswer) {
  PlacerRegistry registry;
  RegisterHeuristicPlacers(registry);
  search::LocalSearchOptions search;
  search.max_moves = 400;
  search.registry = &registry;
  registry.Register(search::MakeLocalSearchPlacer(search));
  AutoOptions options;
  options.registry = &registry;
  auto x = MakeInstance(search::testing::Layered(120, 6, 3), Shorthand("4xV100"));
  for (Objective objective : kObjectives) {
    absl::StatusOr<PlacerResult> a = RunAuto(x->Problem(objective), Budget{}, options);
    absl::StatusOr<PlacerResult> b = RunAuto(x->Problem(objective), Budget{}, options);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(a->algorithm, b->algorithm);
    EXPECT_EQ(a->placement.device, b->placement.device);
  }
}

TEST(Auto, NothingFitsIsFailedPrecondition) {
  const Graph g = search::testing::Layered(60, 4);
  auto x = MakeInstance(g, search::testing::WithMemory(Shorthand("2xV100"), g.total_param_bytes() / 4));
  for (Objective objective : kObjectives) {
    SCOPED_TRACE(ObjectiveName(objective));
    absl::StatusOr<PlacerResult> r = RunAuto(x->Problem(objective), Budget::For(absl::Seconds(2)), Everything());
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition) << r.status();
  }
}

TEST(Auto, WithoutARegistryIsInvalidArgument) {
  auto x = MakeInstance(search::testing::Layered(30, 1), Shorthand("2xV100"));
  absl::StatusOr<PlacerResult> r = RunAuto(x->Problem(Objective::kStepTime), Budget{}, AutoOptions{});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("registry"));
}

TEST(Auto, AnExpiredDeadlineIsDeadlineExceeded) {
  auto x = MakeInstance(search::testing::Layered(60, 4), Shorthand("2xV100"));
  absl::StatusOr<PlacerResult> r =
      RunAuto(x->Problem(Objective::kStepTime), Budget::For(absl::Nanoseconds(1)), Everything());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDeadlineExceeded);
}

TEST(Auto, FinishesCloseToItsDeadline) {
  auto x = MakeInstance(search::testing::Layered(1500, 4), Shorthand("8xV100"));
  const absl::Time begin = absl::Now();
  absl::StatusOr<PlacerResult> r =
      RunAuto(x->Problem(Objective::kStepTime), Budget::For(absl::Milliseconds(600)), Everything());
  ASSERT_TRUE(r.ok()) << r.status();
  // Generous for a loaded host: what matters is that the portfolio ends with its budget, not seconds later.
  EXPECT_LT(absl::Now() - begin, 4 * absl::Milliseconds(600) + absl::Seconds(2));
}

TEST(Portfolio, PlansBySizeAndObjective) {
  const PlacerRegistry& registry = DefaultPlacerRegistry();
  auto small = MakeInstance(search::testing::Layered(100, 1), Shorthand("4xV100"));
  Plan p = PlanPortfolio(small->Problem(Objective::kThroughput), registry);
  auto has = [](const Plan& plan, const std::string& name) {
    for (const Candidate& c : plan.run) {
      if (c.name == name) return true;
    }
    return false;
  };
  EXPECT_TRUE(p.search);
  if (registry.Find("pipeline_dp").ok()) {
    EXPECT_TRUE(has(p, "pipeline_dp"));
  }
  EXPECT_TRUE(has(p, "m_topo"));
  p = PlanPortfolio(small->Problem(Objective::kStepTime), registry);
  EXPECT_FALSE(has(p, "pipeline_dp"));  // a throughput method
  EXPECT_FALSE(has(p, "scotch"));       // small graph: list schedulers do as well
  EXPECT_TRUE(has(p, "heft"));
  auto large = MakeInstance(search::testing::Layered(kMinOpsPartitioners, 1), Shorthand("4xV100"));
  p = PlanPortfolio(large->Problem(Objective::kStepTime), registry);
  if (registry.Find("scotch").ok()) {
    EXPECT_TRUE(has(p, "scotch"));
  }
  if (registry.Find("ilp_latency").ok()) {
    EXPECT_FALSE(has(p, "ilp_latency"));
    EXPECT_THAT(absl::StrJoin(p.skipped, "\n"), HasSubstr("ilp_latency: skipped"));
  }
}

}  // namespace
}  // namespace placement::portfolio
