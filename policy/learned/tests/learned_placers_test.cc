#include "policy/learned/learned_placers.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "absl/strings/str_join.h"
#include "graph/graph_families.h"
#include "graph/onnx/onnx_import.h"
#include "graph/topology.h"
#include "graph/topology_json.h"
#include "graph/training.h"
#include "policy/auto/auto_placer.h"
#include "policy/learned/tests/test_graphs.h"
#include "policy/placer_families.h"

namespace placement::learned {
namespace {

namespace fs = std::filesystem;

Fixture Layered(int ops) {
  FamilyOptions o;
  o.approx_ops = ops;
  return Fixture(*GenerateFamily("layered", o), "4xV100");
}

TEST(LearnedPlacers, RegisteredBesideTheClassicalFamiliesAndPlaceValidly) {
  auto registry = MakeRegistryWithPolicy(LearnedPolicy::Create(NetworkOptions{}, 1));
  Fixture f = Layered(300);
  PlacementProblem problem;
  problem.costs = f.costs.get();
  for (const char* name : {"policy", "policy_iterative", "policy_search"}) {
    absl::StatusOr<const Placer*> placer = registry->Find(name);
    ASSERT_TRUE(placer.ok()) << placer.status();
    absl::StatusOr<PlacerResult> r = (*placer)->Place(problem, Budget::For(absl::Seconds(1.5)));
    ASSERT_TRUE(r.ok()) << name << ": " << r.status();
    EXPECT_TRUE(ValidatePlacement(*f.costs, r->placement).ok()) << name;
    EXPECT_TRUE(r->evaluation.fits_memory) << name;
    EXPECT_EQ(r->algorithm, name);
    ASSERT_FALSE(r->notes.empty());
    EXPECT_NE(r->notes.front().find("untrained"), std::string::npos) << r->notes.front();
  }
  EXPECT_TRUE(registry->Find("heft").ok());
  EXPECT_FALSE(DefaultPlacerRegistry().Find("policy").ok());  // the classical registry stays as it was
}

TEST(LearnedPlacers, IterativeIsNeverWorseThanSingleShot) {
  auto registry = MakeRegistryWithPolicy(LearnedPolicy::Create(NetworkOptions{}, 2));
  Fixture f = Layered(400);
  PlacementProblem problem;
  problem.costs = f.costs.get();
  const PlacerResult one = *(*registry->Find("policy"))->Place(problem, Budget{});
  const PlacerResult it = *(*registry->Find("policy_iterative"))->Place(problem, Budget{});
  EXPECT_LE(it.evaluation.value, one.evaluation.value * (1 + 1e-12));
}

TEST(LearnedPlacers, GuidedAndScheduledDecodingsOnlyEverImproveTheSingleShotAnswer) {
  auto policy = LearnedPolicy::Create(NetworkOptions{}, 3);
  LearnedPlacerOptions alone;
  alone.guided_thresholds.clear();
  alone.scheduled_weights.clear();
  LearnedPlacerOptions sampled;
  sampled.guided_samples = 8;
  sampled.scheduled_samples = 4;
  auto with = MakeRegistryWithPolicy(policy, sampled);
  auto without = MakeRegistryWithPolicy(policy, alone);
  Fixture f = Layered(600);
  PlacementProblem problem;
  problem.costs = f.costs.get();
  const PlacerResult guided = *(*with->Find("policy"))->Place(problem, Budget{});
  const PlacerResult network = *(*without->Find("policy"))->Place(problem, Budget{});
  EXPECT_TRUE(ValidatePlacement(*f.costs, guided.placement).ok());
  EXPECT_LE(guided.evaluation.value, network.evaluation.value * (1 + 1e-12));
  const std::string notes = absl::StrJoin(guided.notes, "\n");
  EXPECT_NE(notes.find("and 4 guided decodings (and 8 sampled), 5 scheduled (and 4 sampled): "), std::string::npos)
      << notes;
  EXPECT_NE(absl::StrJoin(network.notes, "\n").find("and 0 guided decodings: "), std::string::npos);
}

// Memory so tight that one device cannot hold the graph: guided decodings that do not fit are dropped, the
// answer fits (repaired when every decoding overflowed), and nothing fails.
TEST(LearnedPlacers, PolicyAnswerFitsWhenMemoryIsTight) {
  FamilyOptions o;
  o.approx_ops = 300;
  Graph g = *GenerateFamily("layered", o);
  const Topology four = *ParseTopologyShorthand("4xV100");
  PlacementProblem problem;
  // Capacity between a third and a half of the parameters: no single device holds them, four do.
  const Topology tight = *WithMemoryCapacity(four, g.total_param_bytes() * 4 / 10);
  absl::StatusOr<CostModel> costs = CostModel::Create(g, tight);
  ASSERT_TRUE(costs.ok()) << costs.status();
  problem.costs = &*costs;
  auto registry = MakeRegistryWithPolicy(LearnedPolicy::Create(NetworkOptions{}, 4));
  ASSERT_EQ((*registry->Find("single_device"))->Place(problem, Budget{}).status().code(),
            absl::StatusCode::kFailedPrecondition);  // really tight
  absl::StatusOr<PlacerResult> r = (*registry->Find("policy"))->Place(problem, Budget::For(absl::Seconds(20)));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->evaluation.fits_memory);
  EXPECT_TRUE(ValidatePlacement(*costs, r->placement).ok());
}

TEST(LearnedPlacers, AutoRunsThePolicyWhenTheRegistryHasIt) {
  auto registry = MakeRegistryWithPolicy(LearnedPolicy::Create(NetworkOptions{}, 1));
  Fixture f = Layered(150);
  PlacementProblem problem;
  problem.costs = f.costs.get();
  std::vector<portfolio::PortfolioRun> runs;
  portfolio::AutoOptions options;
  options.registry = registry.get();
  absl::StatusOr<PlacerResult> r = portfolio::RunAuto(problem, Budget::For(absl::Seconds(2)), options, &runs);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_FALSE(runs.empty());
  EXPECT_EQ(runs.front().placer, "policy");
  EXPECT_TRUE(runs.front().status.ok()) << runs.front().status;
  // The registry's own "auto" is bound to it, so it sees the policy too.
  absl::StatusOr<PlacerResult> via_registry = (*registry->Find("auto"))->Place(problem, Budget::For(absl::Seconds(2)));
  ASSERT_TRUE(via_registry.ok()) << via_registry.status();
  EXPECT_NE(absl::StrJoin(via_registry->notes, "\n").find("policy"), std::string::npos);
}

// The shipped weights load and place every corpus model, as an inference graph and as a training step.
TEST(ShippedPolicy, LoadsAndPlacesEveryCorpusModelValidly) {
  const fs::path weights = fs::path(PLACEMENT_SOURCE_DIR) / "models" / "placement_policy.pt";
  absl::StatusOr<std::shared_ptr<const LearnedPolicy>> policy = LearnedPolicy::Load(weights.string(), "cpu");
  ASSERT_TRUE(policy.ok()) << policy.status();
  EXPECT_EQ((*policy)->version().rfind("gnn-", 0), 0u) << (*policy)->version();
  auto registry = MakeRegistryWithPolicy(*policy);
  const Placer* placer = *registry->Find("policy");
  int models = 0;
  for (const auto& e : fs::directory_iterator(fs::path(PLACEMENT_SOURCE_DIR) / "tests" / "data" / "corpus")) {
    if (e.path().extension() != ".onnx") continue;
    OnnxImportOptions options;
    options.batch_size = 32;
    absl::StatusOr<OnnxImportResult> imported = ImportOnnxFile(e.path().string(), options);
    ASSERT_TRUE(imported.ok()) << e.path() << ": " << imported.status();
    for (bool train : {false, true}) {
      Graph g = train ? *BuildTrainingGraph(imported->problem.graph) : imported->problem.graph;
      Fixture f(std::move(g), "4xV100");
      PlacementProblem problem;
      problem.costs = f.costs.get();
      absl::StatusOr<PlacerResult> r = placer->Place(problem, Budget::For(absl::Seconds(30)));
      ASSERT_TRUE(r.ok()) << e.path() << ": " << r.status();
      EXPECT_TRUE(ValidatePlacement(*f.costs, r->placement).ok()) << e.path();
      EXPECT_TRUE(r->evaluation.fits_memory) << e.path();
      EXPECT_GE(r->evaluation.ratio, 1 - 1e-9) << e.path();
    }
    ++models;
  }
  EXPECT_EQ(models, 8);
}

}  // namespace
}  // namespace placement::learned
