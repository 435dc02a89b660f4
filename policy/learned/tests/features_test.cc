#include "policy/learned/features.h"

#include <gtest/gtest.h>

#include "graph/graph_families.h"
#include "policy/learned/coarsen.h"
#include "policy/learned/tests/test_graphs.h"

namespace placement::learned {
namespace {

TEST(PolicyFeatures, ShapesAndValuesForASmallGraph) {
  Fixture f(Diamond(), "2xV100");
  absl::StatusOr<Coarsening> c = Coarsen(*f.costs);
  ASSERT_TRUE(c.ok()) << c.status();
  // No chain to fuse: a has two consumers and c two producers.
  ASSERT_EQ(c->num_groups, 4);
  const PolicyInput in = BuildPolicyInput(*f.costs, *c);
  EXPECT_EQ(in.num_groups, 4);
  EXPECT_EQ(in.num_devices, 2);
  EXPECT_EQ(in.group.size(), 4u * kGroupFeatures);
  EXPECT_EQ(in.device.size(), 2u * kDeviceFeatures);
  EXPECT_EQ(in.pair.size(), 4u * 2 * kPairFeatures);
  EXPECT_EQ(in.edge_src.size(), 4u);
  EXPECT_EQ(in.incident_begin.back(), 8);
  for (int64_t b : in.type_bucket) {
    EXPECT_GE(b, 0);
    EXPECT_LT(b, kTypeBuckets);
  }
  for (float v : in.group) EXPECT_TRUE(std::isfinite(v));
  // Depth: a is a source (0), c the deepest (1).
  const int32_t ga = c->group_of_op[f.graph.FindOp("a")], gc = c->group_of_op[f.graph.FindOp("c")];
  EXPECT_EQ(in.group[ga * kGroupFeatures + 5], 0.0f);
  EXPECT_EQ(in.group[gc * kGroupFeatures + 5], 1.0f);
  // Identical devices: the same compute time (pair feature 0 is 0, both are of the fastest kind), different
  // positions.
  for (int32_t g = 0; g < 4; ++g) {
    for (int d = 0; d < 2; ++d) {
      EXPECT_EQ(in.pair[(g * 2 + d) * kPairFeatures + 0], 0.0f);
      EXPECT_EQ(in.pair[(g * 2 + d) * kPairFeatures + 1], 1.0f);
    }
  }
  EXPECT_NE(in.device[0 * kDeviceFeatures + 6], in.device[1 * kDeviceFeatures + 6]);
}

TEST(PolicyFeatures, SlowerDeviceKindShowsInThePairFeatures) {
  Fixture f(Diamond(), "V100+T4");
  const Coarsening c = *Coarsen(*f.costs);
  const PolicyInput in = BuildPolicyInput(*f.costs, c);
  const DeviceId t4 = f.topo.FindDevice("gpu1");
  ASSERT_NE(t4, -1);
  EXPECT_EQ(f.topo.device(t4).kind, "T4");
  for (int32_t g = 0; g < in.num_groups; ++g) {
    EXPECT_GT(in.pair[(g * 2 + t4) * kPairFeatures + 0], 0.0f) << "group " << g;
    EXPECT_EQ(in.pair[(g * 2 + t4) * kPairFeatures + 1], 0.0f);
  }
}

TEST(PolicyFeatures, PinnedOperatorAllowsOnlyItsDevice) {
  Fixture f(Diamond("gpu1"), "2xV100");
  const Coarsening c = *Coarsen(*f.costs);
  const int32_t gd = c.group_of_op[f.graph.FindOp("d")];
  EXPECT_EQ(c.pinned[gd], 1);
  EXPECT_EQ(c.allowed[gd * 2 + 0], 0);
  EXPECT_EQ(c.allowed[gd * 2 + 1], 1);
}

TEST(PolicyCoarsening, FusesChainsUnderTheWorkCap) {
  FamilyOptions o;
  o.approx_ops = 100;
  Fixture f(*GenerateFamily("chain", o), "2xV100");
  const Coarsening c = *Coarsen(*f.costs);
  EXPECT_LT(c.num_groups, f.graph.num_ops() / 2);
  EXPECT_GE(c.num_groups, 8);  // each group at most a quarter of a device's ideal share
  const Placement p = c.Expand(std::vector<DeviceId>(c.num_groups, 1));
  for (DeviceId d : p.device) EXPECT_EQ(d, 1);
}

TEST(PolicyCoarsening, LargeGraphBecomesAtMostAboutMaxGroups) {
  FamilyOptions o;
  o.approx_ops = 20000;
  Fixture f(*GenerateFamily("layered", o), "8xV100");
  CoarseningOptions options;
  options.max_groups = 1000;
  const Coarsening c = *Coarsen(*f.costs, options);
  EXPECT_LE(c.num_groups, 1100);
  EXPECT_EQ(c.group_begin.back(), f.graph.num_ops());
  for (OpId op = 0; op < f.graph.num_ops(); ++op) {
    ASSERT_GE(c.group_of_op[op], 0);
    ASSERT_LT(c.group_of_op[op], c.num_groups);
  }
}

}  // namespace
}  // namespace placement::learned
