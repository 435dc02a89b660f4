#include "policy/learned/imitation.h"

#include <gtest/gtest.h>

#include "policy/learned/dataset.h"

namespace placement::learned {
namespace {

std::vector<const Instance*> Pointers(const std::vector<std::unique_ptr<Instance>>& set) {
  std::vector<const Instance*> out;
  for (const auto& x : set) out.push_back(x.get());
  return out;
}

absl::StatusOr<std::vector<std::unique_ptr<Instance>>> Toy(const std::string& topology) {
  DatasetOptions data;
  data.families = {"layered"};
  data.sizes = {20, 40};
  data.seeds_per_size = 2;
  data.training_graphs = false;
  data.topologies = {topology};
  return MakeDataset(data);
}

// Identical devices are renamed in order of first use; the simulated step time does not change.
TEST(PolicyImitation, IdenticalDevicesRenamedInOrderOfFirstUse) {
  auto set = Toy("4xV100");
  ASSERT_TRUE(set.ok()) << set.status();
  const Instance& x = *set->front();
  std::vector<int32_t> all_on_last(x.input.num_groups, 3);
  EXPECT_EQ(CanonicalDeviceNames(x, all_on_last), std::vector<int32_t>(x.input.num_groups, 0));

  // Two devices used, the later one first: after renaming the first group is on device 0.
  std::vector<int32_t> split(x.input.num_groups);
  for (int32_t g = 0; g < x.input.num_groups; ++g) split[g] = g % 2 == 0 ? 2 : 1;
  const std::vector<int32_t> renamed = CanonicalDeviceNames(x, split);
  EXPECT_EQ(renamed[x.groups.order.front()], 0);
  EXPECT_NEAR(PlacementCost(x, renamed, 2), PlacementCost(x, split, 2), 1e-9);
}

// Devices of different kinds are never exchanged.
TEST(PolicyImitation, DevicesOfDifferentKindsKeepTheirNames) {
  auto set = Toy("V100+T4");
  ASSERT_TRUE(set.ok()) << set.status();
  const Instance& x = *set->front();
  std::vector<int32_t> on_t4(x.input.num_groups, 1);
  EXPECT_EQ(CanonicalDeviceNames(x, on_t4), on_t4);
}

// A short imitation run on heft's answers lowers the cross-entropy, and the demonstrations fit the groups.
TEST(PolicyImitation, ShortRunLowersTheCrossEntropyOnAToyFamily) {
  auto set = Toy("V100+T4");
  ASSERT_TRUE(set.ok()) << set.status();
  const std::vector<const Instance*> train = Pointers(*set);
  TeacherOptions teacher;
  teacher.placer = "heft";
  auto demos = MakeDemonstrations(train, teacher);
  ASSERT_TRUE(demos.ok()) << demos.status();
  ASSERT_EQ(demos->size(), train.size());
  for (size_t i = 0; i < train.size(); ++i) {
    EXPECT_EQ(static_cast<int32_t>((*demos)[i].group_device.size()), train[i]->input.num_groups);
    EXPECT_GE((*demos)[i].ratio, 1.0 - 1e-9);
  }
  auto policy = LearnedPolicy::Create(NetworkOptions{32, 2}, 3);
  ImitationOptions options;
  options.iterations = 80;
  options.eval_every = 10;
  options.graphs_per_batch = 2;
  options.learning_rate = 1e-2;
  double best = 0;
  auto curve = Imitate(*policy, train, *demos, train, options, &best);
  ASSERT_TRUE(curve.ok()) << curve.status();
  ASSERT_GE(curve->size(), 9u);
  // curve[0] is before any step (no loss yet); compare the first window with the last.
  EXPECT_LT(curve->back().loss, (*curve)[1].loss) << "first " << (*curve)[1].loss << " last " << curve->back().loss;
  EXPECT_LE(best, curve->front().greedy_ratio);
}

TEST(PolicyImitation, RefusesAnUnknownTeacherAndMismatchedDemonstrations) {
  auto set = Toy("2xV100");
  ASSERT_TRUE(set.ok()) << set.status();
  const std::vector<const Instance*> train = Pointers(*set);
  TeacherOptions teacher;
  teacher.placer = "no_such_placer";
  EXPECT_EQ(MakeDemonstrations(train, teacher).status().code(), absl::StatusCode::kNotFound);

  auto policy = LearnedPolicy::Create(NetworkOptions{16, 1}, 1);
  double best = 0;
  std::vector<Demonstration> wrong(train.size());  // empty placements
  EXPECT_EQ(Imitate(*policy, train, wrong, train, ImitationOptions{}, &best).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Imitate(*policy, train, {}, train, ImitationOptions{}, &best).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace placement::learned
