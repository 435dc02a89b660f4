// policy_finetune: never worse than the single shot, never a change to the served weights; AUTO runs it in the
// time its searches leave and is then never worse than without it; the trainer's stop flag and best sample.
#include "policy/learned/finetune_placer.h"

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "absl/strings/str_join.h"
#include "graph/canonical.h"
#include "graph/graph_families.h"
#include "graph/training.h"
#include "policy/learned/learned_placers.h"
#include "policy/learned/tests/test_graphs.h"
#include "policy/learned/trainer.h"

namespace placement::learned {
namespace {

const std::string kShipped = std::string(PLACEMENT_SOURCE_DIR) + "/models/placement_policy.pt";

Fixture Layered(int ops, uint64_t seed, bool training) {
  FamilyOptions o;
  o.approx_ops = ops;
  o.seed = seed;
  Graph g = *GenerateFamily("layered", o);
  return Fixture(training ? *BuildTrainingGraph(g) : std::move(g), "4xV100");
}

std::string FileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(PolicyFinetune, NeverChangesTheServedWeightsAndNeverLosesToTheSingleShot) {
  auto policy = LearnedPolicy::Load(kShipped, "cpu");
  ASSERT_TRUE(policy.ok()) << policy.status();
  const std::string version = (*policy)->version();
  const std::string file_before = Sha256Hex(FileBytes(kShipped));
  auto registry = MakeRegistryWithPolicy(*policy);
  Fixture f = Layered(80, 3, /*training=*/true);
  absl::StatusOr<PolicyAnswer> scores_before = RunPolicy(**policy, *f.costs);
  ASSERT_TRUE(scores_before.ok());
  PlacementProblem problem;
  problem.costs = f.costs.get();
  const absl::StatusOr<PlacerResult> single = (*registry->Find("policy"))->Place(problem, Budget{});
  ASSERT_TRUE(single.ok()) << single.status();

  const absl::StatusOr<PlacerResult> tuned =
      (*registry->Find("policy_finetune"))->Place(problem, Budget::For(absl::Seconds(3)));
  ASSERT_TRUE(tuned.ok()) << tuned.status();
  EXPECT_EQ(tuned->algorithm, "policy_finetune");
  EXPECT_TRUE(ValidatePlacement(*f.costs, tuned->placement).ok());
  EXPECT_LE(tuned->evaluation.value, single->evaluation.value * (1 + 1e-12));
  bool said = false;
  for (const std::string& n : tuned->notes) said = said || n.find("fine-tuned a copy of policy " + version) == 0;
  EXPECT_TRUE(said) << "the notes say what was tuned";

  // The served weights are as they were: the same scores, the same single-shot answer, the same file, the same name.
  absl::StatusOr<PolicyAnswer> scores_after = RunPolicy(**policy, *f.costs);
  ASSERT_TRUE(scores_after.ok());
  EXPECT_EQ(scores_after->scores.logits, scores_before->scores.logits);
  EXPECT_EQ((*registry->Find("policy"))->Place(problem, Budget{})->placement.device, single->placement.device);
  EXPECT_EQ((*policy)->version(), version);
  EXPECT_EQ(Sha256Hex(FileBytes(kShipped)), file_before);
}

TEST(PolicyFinetune, WithNoTimeLeftAnswersWithTheSingleShot) {
  auto policy = LearnedPolicy::Load(kShipped, "cpu");
  ASSERT_TRUE(policy.ok());
  auto registry = MakeRegistryWithPolicy(*policy);
  Fixture f = Layered(60, 1, false);
  PlacementProblem problem;
  problem.costs = f.costs.get();
  // A budget spent before it starts, for both: the single shot's own refinements stop at the deadline too, so
  // only an expired budget gives both the same, whatever the load on the machine.
  const absl::StatusOr<PlacerResult> single =
      (*registry->Find("policy"))->Place(problem, Budget::For(absl::Nanoseconds(1)));
  const absl::StatusOr<PlacerResult> tuned =
      (*registry->Find("policy_finetune"))->Place(problem, Budget::For(absl::Nanoseconds(1)));
  ASSERT_TRUE(tuned.ok() || tuned.status().code() == absl::StatusCode::kDeadlineExceeded) << tuned.status();
  if (tuned.ok()) {
    ASSERT_TRUE(single.ok()) << single.status();
    EXPECT_EQ(tuned->evaluation.value, single->evaluation.value);
    EXPECT_NE(tuned->notes.back().find("no time left"), std::string::npos);
  }
}

TEST(PolicyFinetune, AutoRunsItInTheTimeItsSearchesLeaveAndIsNeverWorseForIt) {
  auto policy = LearnedPolicy::Load(kShipped, "cpu");
  ASSERT_TRUE(policy.ok());
  auto with = MakeRegistryWithPolicy(*policy);
  LearnedPlacerOptions no_finetune;
  no_finetune.register_finetune = false;
  auto without = MakeRegistryWithPolicy(*policy, no_finetune);
  // Small enough for every search to settle well before the deadline, large enough for AUTO to skip the ILP.
  Fixture f = Layered(40, 2, /*training=*/true);
  PlacementProblem problem;
  problem.costs = f.costs.get();
  const absl::StatusOr<PlacerResult> a = (*with->Find("auto"))->Place(problem, Budget::For(absl::Seconds(5)));
  const absl::StatusOr<PlacerResult> b = (*without->Find("auto"))->Place(problem, Budget::For(absl::Seconds(5)));
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_LE(a->evaluation.value, b->evaluation.value * (1 + 1e-12));
  bool ran = false, gain = false;
  for (const std::string& n : a->notes) {
    ran = ran || (n.rfind("policy_finetune: ", 0) == 0 && n.find("not run") == std::string::npos);
    gain = gain || n.rfind("policy_finetune gained", 0) == 0;
  }
  EXPECT_TRUE(ran);
  EXPECT_TRUE(gain) << "the notes say what it gained: " << absl::StrJoin(a->notes, "\n");
  for (const std::string& n : b->notes) EXPECT_EQ(n.find("policy_finetune"), std::string::npos) << n;
}

TEST(PolicyTrainer, StopFlagEndsTheRunAndTheBestSampleIsKept) {
  Fixture f = Layered(40, 5, false);
  absl::StatusOr<std::unique_ptr<Instance>> x = InstanceOfProblem("x", *f.costs, Objective::kStepTime, {}, {});
  ASSERT_TRUE(x.ok());
  auto policy = LearnedPolicy::Create(NetworkOptions{16, 1}, 1);
  std::atomic<bool> stop{false};
  BestSample best;
  TrainerOptions options;
  options.iterations = 1000;
  options.eval_every = 1000;
  options.scheduled_share = 1;
  options.stop = &stop;
  options.best_sample = &best;
  int64_t seen = 0;
  options.on_iteration = [&](const TrainerProgress& p) {
    seen = p.iteration;
    if (p.iteration == 5) stop.store(true);
  };
  const std::vector<const Instance*> train = {x->get()};
  absl::StatusOr<std::vector<CurvePoint>> curve = Train(*policy, train, train, options);
  ASSERT_TRUE(curve.ok()) << curve.status();
  EXPECT_EQ(seen, 5);
  EXPECT_EQ(curve->back().iteration, 5);
  ASSERT_FALSE(best.placement.device.empty());
  EXPECT_TRUE(ValidatePlacement(*f.costs, best.placement).ok());
  absl::StatusOr<Evaluation> e = Evaluate(*f.costs, best.placement, Objective::kStepTime);
  ASSERT_TRUE(e.ok());
  EXPECT_NEAR(e->value / (*x)->bound + (e->fits_memory ? 0 : options.oom_penalty), best.cost, 1e-9);
}

}  // namespace
}  // namespace placement::learned
