#include "graph/graph_families.h"

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

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

// Producers of op's inputs, in edge order.
std::vector<OpId> Inputs(const Graph& g, OpId op) {
  std::vector<OpId> in;
  for (EdgeId e : g.in_edges(op)) in.push_back(g.edge(e).src);
  return in;
}

TEST(GraphFamilies, BranchesMergeOneToFourParallelBranchesBeforeEachResidualAdd) {
  for (uint64_t seed : {1, 2, 3, 4}) {
    FamilyOptions o;
    o.approx_ops = 400;
    o.seed = seed;
    absl::StatusOr<Graph> g = GenerateFamily("branches", o);
    ASSERT_TRUE(g.ok()) << g.status();
    int32_t adds = 0, merges = 0, widest = 0;
    for (OpId v = 0; v < g->num_ops(); ++v) {
      const std::string type(g->op_type(v));
      if (type == "Add") {
        // The stream and the block's merged branches.
        ++adds;
        EXPECT_EQ(g->in_degree(v), 2) << g->name(v);
      } else if (type == "Sum" || type == "Concat") {
        ++merges;
        EXPECT_GE(g->in_degree(v), 2) << g->name(v);
        EXPECT_LE(g->in_degree(v), 4) << g->name(v);
        widest = std::max(widest, g->in_degree(v));
        // Every branch starts at the block's normalization: the merged ends share one ancestor at most three
        // layers up, which a branch of one to three layers (with activations between) reaches.
        for (OpId end : Inputs(*g, v)) {
          OpId up = end;
          for (int32_t step = 0; step < 5 && g->op_type(up) != "BatchNormalization"; ++step) up = Inputs(*g, up).at(0);
          EXPECT_EQ(g->op_type(up), "BatchNormalization") << g->name(end);
        }
      }
    }
    EXPECT_GT(adds, 10);
    EXPECT_GT(merges, 0);
    EXPECT_GE(widest, 3) << "seed " << seed;
  }
}

TEST(GraphFamilies, UNetSkipsJoinEachLevelDownToTheSameLevelUp) {
  FamilyOptions o;
  o.approx_ops = 500;
  absl::StatusOr<Graph> g = GenerateFamily("unet", o);
  ASSERT_TRUE(g.ok()) << g.status();
  std::vector<OpId> concats, pools;
  for (OpId v = 0; v < g->num_ops(); ++v) {
    if (g->op_type(v) == "Concat") concats.push_back(v);
    if (g->op_type(v) == "MaxPool") pools.push_back(v);
  }
  ASSERT_EQ(concats.size(), 4u);
  ASSERT_EQ(pools.size(), 4u);
  for (size_t i = 0; i < concats.size(); ++i) {
    const std::vector<OpId> in = Inputs(*g, concats[i]);
    ASSERT_EQ(in.size(), 2u);
    // The first concatenation (the deepest level) takes the skip from just before the last pool, the last one
    // the skip from just before the first: skips nest, the outermost spanning the graph.
    EXPECT_EQ(Inputs(*g, pools[pools.size() - 1 - i]).at(0), in[0]) << g->name(concats[i]);
    // Skip and upsampled tensors have the same shape, so the same bytes.
    const int64_t skip = g->tensor(g->first_output(in[0])).bytes, up = g->tensor(g->first_output(in[1])).bytes;
    EXPECT_EQ(skip, up) << g->name(concats[i]);
    EXPECT_EQ(g->tensor(g->first_output(concats[i])).bytes, skip + up);
  }
  EXPECT_LT(g->topo_rank(Inputs(*g, concats.back())[0]), g->num_ops() / 8);
  EXPECT_GT(g->topo_rank(concats.back()), g->num_ops() * 7 / 8);
}

}  // namespace
}  // namespace placement
