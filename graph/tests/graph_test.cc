#include "graph/graph.h"

#include <cmath>
#include <limits>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace placement {
namespace {

using ::testing::HasSubstr;

OpSpec Op(std::string name, double flops = 1e9, int num_outputs = 1) {
  OpSpec op;
  op.name = std::move(name);
  op.op_type = "MatMul";
  op.flops = flops;
  op.bytes_accessed = 1e6;
  for (int i = 0; i < num_outputs; ++i) op.outputs.push_back(OutputTensor{1000, -1});
  return op;
}

absl::Status BuildError(GraphBuilder b) {
  absl::StatusOr<Graph> g = std::move(b).Build();
  EXPECT_FALSE(g.ok());
  return g.status();
}

TEST(Graph, BuildsCsrAdjacencyAndTopologicalOrder) {
  GraphBuilder b;
  b.AddOp(Op("c"));
  b.AddOp(Op("a", 1e9, 2));
  b.AddOp(Op("b"));
  b.AddEdge("a", 1, "c");
  b.AddEdge("a", 0, "b");
  b.AddEdge("b", 0, "c", 77);
  absl::StatusOr<Graph> g = std::move(b).Build();
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->num_ops(), 3);
  EXPECT_EQ(g->num_edges(), 3);
  EXPECT_EQ(g->num_tensors(), 4);
  const OpId a = g->FindOp("a"), bb = g->FindOp("b"), c = g->FindOp("c");
  ASSERT_EQ(g->out_edges(a).size(), 2u);
  EXPECT_EQ(g->out_edges(a)[0].dst, bb);  // sorted by output index
  EXPECT_EQ(g->out_edges(a)[1].dst, c);
  EXPECT_EQ(g->out_edges(a)[1].bytes, 1000);  // defaults to the output's bytes
  EXPECT_EQ(g->in_degree(c), 2);
  EXPECT_EQ(g->edge(g->in_edges(c)[1]).bytes, 77);
  ASSERT_EQ(g->topo_order().size(), 3u);
  EXPECT_EQ(g->topo_order()[0], a);
  EXPECT_EQ(g->topo_order()[1], bb);
  EXPECT_EQ(g->topo_order()[2], c);
  EXPECT_EQ(g->topo_rank(c), 2);
  EXPECT_EQ(g->FindOp("missing"), kNone);
  EXPECT_EQ(g->edge_tensor(g->out_begin(a) + 1), g->first_output(a) + 1);
}

TEST(Graph, InternsKindsTypesGroupsAndPins) {
  GraphBuilder b;
  OpSpec x = Op("x");
  x.measured_seconds = {{"H100", 1e-3}, {"A100", 2e-3}};
  x.colocation_group = "layer1";
  x.pinned_device = "gpu0";
  x.is_backward = true;
  OpSpec y = Op("y");
  y.measured_seconds = {{"A100", 3e-3}};
  y.colocation_group = "layer1";
  b.AddOp(x);
  b.AddOp(y);
  absl::StatusOr<Graph> g = std::move(b).Build();
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->device_kinds().size(), 2u);
  EXPECT_EQ(g->measured(1)[0].kind, g->measured(0)[1].kind);
  EXPECT_EQ(g->colocation_group(0), g->colocation_group(1));
  EXPECT_EQ(g->pinned_devices()[g->pinned(0)], "gpu0");
  EXPECT_EQ(g->pinned(1), kNone);
  EXPECT_TRUE(g->is_backward(0));
  EXPECT_FALSE(g->is_backward(1));
}

TEST(GraphValidation, EmptyGraph) { EXPECT_THAT(BuildError(GraphBuilder()).message(), HasSubstr("no operators")); }

TEST(GraphValidation, CycleNamesTheOperatorsOnIt) {
  GraphBuilder b;
  for (const char* n : {"in", "p", "q", "r", "out"}) b.AddOp(Op(n));
  b.AddEdge("in", 0, "p");
  b.AddEdge("p", 0, "q");
  b.AddEdge("q", 0, "r");
  b.AddEdge("r", 0, "p");
  b.AddEdge("r", 0, "out");
  absl::Status s = BuildError(std::move(b));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("cycle"));
  EXPECT_THAT(s.message(), HasSubstr("p -> q -> r -> p"));
  EXPECT_THAT(s.message(), ::testing::Not(HasSubstr("in")));
}

TEST(GraphValidation, SelfLoop) {
  GraphBuilder b;
  b.AddOp(Op("a"));
  b.AddEdge("a", 0, "a");
  EXPECT_THAT(BuildError(std::move(b)).message(), HasSubstr("'a' has an edge to itself"));
}

TEST(GraphValidation, DanglingEdgeByName) {
  GraphBuilder b;
  b.AddOp(Op("a"));
  b.AddEdge("a", 0, "ghost");
  EXPECT_THAT(BuildError(std::move(b)).message(), HasSubstr("unknown operator 'ghost'"));
}

TEST(GraphValidation, DanglingEdgeById) {
  GraphBuilder b;
  b.AddOp(Op("a"));
  b.AddEdge(OpId{0}, 0, OpId{5});
  EXPECT_THAT(BuildError(std::move(b)).message(), HasSubstr("operator id 5, which does not exist"));
}

TEST(GraphValidation, EdgeFromMissingOutput) {
  GraphBuilder b;
  b.AddOp(Op("a"));
  b.AddOp(Op("b"));
  b.AddEdge("a", 3, "b");
  EXPECT_THAT(BuildError(std::move(b)).message(), HasSubstr("uses output 3 but 'a' has 1 output(s)"));
}

TEST(GraphValidation, DuplicateEdge) {
  GraphBuilder b;
  b.AddOp(Op("a"));
  b.AddOp(Op("b"));
  b.AddEdge("a", 0, "b");
  b.AddEdge("a", 0, "b");
  EXPECT_THAT(BuildError(std::move(b)).message(), HasSubstr("duplicate edge 'a':0 -> 'b'"));
}

TEST(GraphValidation, DuplicateName) {
  GraphBuilder b;
  b.AddOp(Op("a"));
  b.AddOp(Op("a"));
  EXPECT_THAT(BuildError(std::move(b)).message(), HasSubstr("duplicate operator name 'a'"));
}

TEST(GraphValidation, EmptyName) {
  GraphBuilder b;
  b.AddOp(Op(""));
  EXPECT_THAT(BuildError(std::move(b)).message(), HasSubstr("empty name"));
}

TEST(GraphValidation, NegativeNanAndInfiniteNumbers) {
  {
    GraphBuilder b;
    b.AddOp(Op("neg", -1));
    EXPECT_THAT(BuildError(std::move(b)).message(), HasSubstr("'neg': flops is negative"));
  }
  {
    GraphBuilder b;
    b.AddOp(Op("nan", std::nan("")));
    EXPECT_THAT(BuildError(std::move(b)).message(), HasSubstr("'nan': flops is NaN"));
  }
  {
    GraphBuilder b;
    OpSpec op = Op("inf");
    op.measured_seconds = {{"H100", std::numeric_limits<double>::infinity()}};
    b.AddOp(op);
    EXPECT_THAT(BuildError(std::move(b)).message(), HasSubstr("'inf': measured time on H100 is infinite"));
  }
  {
    GraphBuilder b;
    OpSpec op = Op("mem");
    op.param_bytes = -5;
    b.AddOp(op);
    EXPECT_THAT(BuildError(std::move(b)).message(), HasSubstr("'mem': param_bytes is negative"));
  }
  {
    GraphBuilder b;
    OpSpec op = Op("out");
    op.outputs[0].bytes = -1;
    b.AddOp(op);
    EXPECT_THAT(BuildError(std::move(b)).message(), HasSubstr("'out': output 0 bytes is negative"));
  }
  {
    GraphBuilder b;
    OpSpec op = Op("xfer");
    op.outputs[0].transfer_seconds = std::nan("");
    b.AddOp(op);
    EXPECT_THAT(BuildError(std::move(b)).message(), HasSubstr("'xfer': output 0 transfer time is not finite"));
  }
  {
    GraphBuilder b;
    OpSpec op = Op("edge");
    b.AddOp(op);
    b.AddOp(Op("sink"));
    b.AddEdge("edge", 0, "sink", -7);  // negative means "take the output's bytes", not an error
    EXPECT_TRUE(std::move(b).Build().ok());
  }
}

TEST(GraphValidation, TwoMeasuredTimesForOneKind) {
  GraphBuilder b;
  OpSpec op = Op("a");
  op.measured_seconds = {{"H100", 1}, {"H100", 2}};
  b.AddOp(op);
  EXPECT_THAT(BuildError(std::move(b)).message(), HasSubstr("two measured times for device kind 'H100'"));
}

}  // namespace
}  // namespace placement
