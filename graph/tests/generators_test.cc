// The synthetic graphs the simulator's tests and benchmark are built on.
#include "graph/generators.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace placement {
namespace {

using ::testing::HasSubstr;

TEST(Generators, LayeredRandomDagIsTheSameForTheSameSeed) {
  LayeredDagOptions o;
  o.num_ops = 500;
  o.num_colocation_groups = 3;
  o.seed = 11;
  absl::StatusOr<Graph> a = LayeredRandomDag(o);
  absl::StatusOr<Graph> b = LayeredRandomDag(o);
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  ASSERT_EQ(a->num_edges(), b->num_edges());
  ASSERT_EQ(a->num_tensors(), b->num_tensors());
  for (OpId v = 0; v < a->num_ops(); ++v) {
    EXPECT_EQ(a->flops(v), b->flops(v));
    EXPECT_EQ(a->param_bytes(v), b->param_bytes(v));
    EXPECT_EQ(a->colocation_group(v), b->colocation_group(v));
  }
  for (EdgeId e = 0; e < a->num_edges(); ++e) {
    EXPECT_EQ(a->edge(e).src, b->edge(e).src);
    EXPECT_EQ(a->edge(e).dst, b->edge(e).dst);
    EXPECT_EQ(a->edge(e).bytes, b->edge(e).bytes);
  }

  o.seed = 12;
  absl::StatusOr<Graph> c = LayeredRandomDag(o);
  ASSERT_TRUE(c.ok()) << c.status();
  bool differs = c->num_edges() != a->num_edges();
  for (OpId v = 0; v < a->num_ops() && !differs; ++v) differs = a->flops(v) != c->flops(v);
  EXPECT_TRUE(differs);
}

TEST(Generators, LayeredRandomDagHasTheAskedShape) {
  LayeredDagOptions o;
  o.num_ops = 10000;
  o.average_fan_in = 1.5;
  absl::StatusOr<Graph> g = LayeredRandomDag(o);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->num_ops(), 10000);
  // Every operator past the first layer (100 wide) has 1.5 inputs on average, a few lost to duplicates.
  EXPECT_NEAR(g->num_edges() / 9900.0, 1.5, 0.05);
  int with_params = 0;
  for (OpId v = 0; v < g->num_ops(); ++v) {
    EXPECT_GE(g->flops(v), o.min_flops);
    EXPECT_LE(g->flops(v), o.max_flops * (1 + 1e-12));
    with_params += g->param_bytes(v) > 0;
    if (v >= 100) {
      EXPECT_GE(g->in_degree(v), 1);
    }
  }
  EXPECT_NEAR(with_params / 10000.0, o.param_fraction, 0.03);
}

TEST(Generators, LayeredRandomDagNamesTheBadOption) {
  LayeredDagOptions o;
  o.num_ops = 0;
  EXPECT_THAT(LayeredRandomDag(o).status().message(), HasSubstr("num_ops"));
  o = {};
  o.average_fan_in = 0.5;
  EXPECT_THAT(LayeredRandomDag(o).status().message(), HasSubstr("average_fan_in"));
  o = {};
  o.min_flops = 10;
  o.max_flops = 1;
  EXPECT_THAT(LayeredRandomDag(o).status().message(), HasSubstr("flops"));
  o = {};
  o.skip_probability = 2;
  EXPECT_THAT(LayeredRandomDag(o).status().message(), HasSubstr("skip_probability"));
}

}  // namespace
}  // namespace placement
