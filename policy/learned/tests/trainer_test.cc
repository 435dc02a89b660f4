#include "policy/learned/trainer.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "policy/learned/dataset.h"

namespace placement::learned {
namespace {

// A toy family: small layered graphs on one fast and one slow device, where a random placement is poor and
// the answer is easy to learn.
std::vector<std::unique_ptr<Instance>> ToyFamily() {
  DatasetOptions data;
  data.families = {"layered"};
  data.sizes = {20, 40};
  data.seeds_per_size = 2;
  data.training_graphs = false;
  data.topologies = {"V100+T4"};
  auto set = MakeDataset(data);
  EXPECT_TRUE(set.ok()) << set.status();
  return set.ok() ? *std::move(set) : std::vector<std::unique_ptr<Instance>>{};
}

// A run of a few seconds on it.
TrainerOptions ShortRun() {
  TrainerOptions options;
  options.iterations = 40;
  options.eval_every = 40;
  options.graphs_per_batch = 2;
  options.samples_per_graph = 6;
  options.learning_rate = 1e-2;
  return options;
}

// A few seconds of training must lower the greedy cost.
TEST(PolicyTrainer, ShortRunLowersTheCostOnAToyFamily) {
  const auto set = ToyFamily();
  ASSERT_FALSE(set.empty());
  std::vector<const Instance*> train;
  for (const auto& x : set) train.push_back(x.get());

  auto policy = LearnedPolicy::Create(NetworkOptions{32, 2}, 3);
  auto curve = Train(*policy, train, train, ShortRun());
  ASSERT_TRUE(curve.ok()) << curve.status();
  ASSERT_GE(curve->size(), 2u);
  EXPECT_LT(curve->back().greedy_ratio, curve->front().greedy_ratio)
      << "before " << curve->front().greedy_ratio << " after " << curve->back().greedy_ratio;
}

// Guide training: the network learns which devices to leave open to HEFT. On the toy family above, a few seconds
// of it must lower the validation ratio (per graph the better of greedy and the guided decoding at the
// threshold), and the curve must report that ratio from its first point.
TEST(PolicyTrainer, GuideTrainingLowersTheGuidedCostOnAToyFamily) {
  const auto set = ToyFamily();
  ASSERT_FALSE(set.empty());
  std::vector<const Instance*> train;
  for (const auto& x : set) train.push_back(x.get());

  auto policy = LearnedPolicy::Create(NetworkOptions{32, 2}, 3);
  TrainerOptions options = ShortRun();
  options.guide_share = 1;
  options.guide_threshold = 0.5;
  const double before = GreedyRatio(*policy, train, options.oom_penalty, options.guide_threshold);
  EXPECT_LE(before, GreedyRatio(*policy, train, options.oom_penalty)) << "the guided decoding only adds a choice";
  auto curve = Train(*policy, train, train, options);
  ASSERT_TRUE(curve.ok()) << curve.status();
  ASSERT_GE(curve->size(), 2u);
  EXPECT_DOUBLE_EQ(curve->front().greedy_ratio, before);
  EXPECT_LT(curve->back().greedy_ratio, before) << "before " << before << " after " << curve->back().greedy_ratio;
}

// Scheduled training: the network learns where HEFT's earliest finish should yield to its scores. The curve
// reports the better of greedy and the scheduled decoding from its first point, and a few seconds lower it.
TEST(PolicyTrainer, ScheduledTrainingLowersTheScheduledCostOnAToyFamily) {
  const auto set = ToyFamily();
  ASSERT_FALSE(set.empty());
  std::vector<const Instance*> train;
  for (const auto& x : set) train.push_back(x.get());

  auto policy = LearnedPolicy::Create(NetworkOptions{32, 2}, 3);
  TrainerOptions options = ShortRun();
  options.scheduled_share = 1;
  options.schedule_weight = 0.5;
  const double before = GreedyRatio(*policy, train, options.oom_penalty, 0, options.schedule_weight);
  EXPECT_LE(before, GreedyRatio(*policy, train, options.oom_penalty)) << "the scheduled decoding only adds a choice";
  auto curve = Train(*policy, train, train, options);
  ASSERT_TRUE(curve.ok()) << curve.status();
  ASSERT_GE(curve->size(), 2u);
  EXPECT_DOUBLE_EQ(curve->front().greedy_ratio, before);
  EXPECT_LT(curve->back().greedy_ratio, before) << "before " << before << " after " << curve->back().greedy_ratio;
}

TEST(PolicyTrainer, RefusesOneSampleAndNoData) {
  auto policy = LearnedPolicy::Create(NetworkOptions{16, 1}, 1);
  TrainerOptions options;
  EXPECT_EQ(Train(*policy, {}, {}, options).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace placement::learned
