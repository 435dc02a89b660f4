#include "graph/graph_families.h"

#include <cstdlib>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "graph/canonical.h"

namespace placement {
namespace {

using ::testing::HasSubstr;

TEST(GraphFamilies, EveryFamilyIsDeterministicForASeedAndDiffersAcrossSeeds) {
  for (const std::string& family : GraphFamilies()) {
    SCOPED_TRACE(family);
    FamilyOptions o;
    o.approx_ops = 300;
    o.seed = 7;
    absl::StatusOr<Graph> a = GenerateFamily(family, o);
    absl::StatusOr<Graph> b = GenerateFamily(family, o);
    ASSERT_TRUE(a.ok()) << a.status();
    ASSERT_TRUE(b.ok()) << b.status();
    EXPECT_EQ(GraphHash(*a), GraphHash(*b));
    o.seed = 8;
    absl::StatusOr<Graph> c = GenerateFamily(family, o);
    ASSERT_TRUE(c.ok()) << c.status();
    EXPECT_NE(GraphHash(*a), GraphHash(*c));
  }
}

TEST(GraphFamilies, SizesFollowTheAskedCountFromTenToOneHundredThousand) {
  for (const std::string& family : GraphFamilies()) {
    for (int32_t n : {10, 1000, 100000}) {
      SCOPED_TRACE(family + " " + std::to_string(n));
      FamilyOptions o;
      o.approx_ops = n;
      absl::StatusOr<Graph> g = GenerateFamily(family, o);
      ASSERT_TRUE(g.ok()) << g.status();
      // Families grow by whole blocks or cells (at most ~30 operators), so small sizes are approximate.
      EXPECT_LE(std::abs(g->num_ops() - n), std::max(30, n / 20)) << g->num_ops();
      EXPECT_GE(g->num_edges(), g->num_ops() - 1);
    }
  }
}

TEST(GraphFamilies, OperatorsCarryRooflineCostsAndParameters) {
  FamilyOptions o;
  o.approx_ops = 200;
  absl::StatusOr<Graph> g = GenerateFamily("blocks", o);
  ASSERT_TRUE(g.ok());
  int64_t params = 0;
  double flops = 0;
  for (OpId v = 0; v < g->num_ops(); ++v) {
    params += g->param_bytes(v);
    flops += g->flops(v);
    EXPECT_TRUE(g->measured(v).empty());
    EXPECT_GT(g->bytes_accessed(v), 0) << g->name(v);
  }
  EXPECT_GT(params, 0);
  EXPECT_GT(flops, 1e9);
}

TEST(GraphFamilies, UnknownFamilyAndBadOptionsAreNamed) {
  FamilyOptions o;
  EXPECT_THAT(GenerateFamily("mesh", o).status().message(), HasSubstr("unknown graph family 'mesh'"));
  EXPECT_THAT(GenerateFamily("mesh", o).status().message(), HasSubstr("nas_cells"));
  o.approx_ops = 1;
  EXPECT_THAT(GenerateFamily("chain", o).status().message(), HasSubstr("approx_ops"));
  o.approx_ops = 100;
  o.batch = 0;
  EXPECT_THAT(GenerateFamily("chain", o).status().message(), HasSubstr("batch"));
}

}  // namespace
}  // namespace placement
