#include "graph/proto/graph_proto.h"

#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "graph/canonical.h"

namespace placement {
namespace {

using ::testing::HasSubstr;

Graph EveryField() {
  GraphBuilder b;
  OpSpec a;
  a.name = "a";
  a.op_type = "Embedding";
  a.measured_seconds = {{"V100", 1.25e-3}, {"A100", 0.1 + 0.2}};
  a.flops = 3.5e9;
  a.bytes_accessed = 1e6 / 3;
  a.param_bytes = (int64_t{1} << 40) + 7;
  a.temp_bytes = 4096;
  a.data_bytes = 602112;
  a.shared_weights = true;
  a.window = 25;
  a.channels_last = true;
  a.outputs = {OutputTensor{100, -1}, OutputTensor{200, 2.5e-6}, OutputTensor{300, 0}};
  a.colocation_group = "embedding";
  a.pinned_device = "gpu1";
  b.AddOp(a);
  OpSpec c;
  c.name = "c";
  c.outputs = {OutputTensor{0, -1}};
  c.is_backward = true;
  c.colocation_group = "embedding";
  b.AddOp(c);
  OpSpec z;
  z.name = "z";
  b.AddOp(z);
  b.AddEdge("a", 1, "c");
  b.AddEdge("a", 0, "c", 77);
  b.AddEdge("a", 2, "z");
  b.AddEdge("c", 0, "z");
  absl::StatusOr<Graph> g = std::move(b).Build();
  EXPECT_TRUE(g.ok()) << g.status();
  return *std::move(g);
}

TEST(GraphProto, RoundTripKeepsEveryFieldAndTheHash) {
  const Graph g = EveryField();
  const placement::v1::Graph message = GraphToProto(g);
  ASSERT_EQ(message.operators_size(), 3);
  EXPECT_EQ(message.operators(0).name(), "a");
  EXPECT_FALSE(message.operators(0).outputs(0).has_transfer_seconds());
  EXPECT_TRUE(message.operators(0).outputs(2).has_transfer_seconds());  // a measured zero is still measured
  ASSERT_EQ(message.edges_size(), 4);

  // Through the wire format and back, as a request would come.
  placement::v1::Graph received;
  ASSERT_TRUE(received.ParseFromString(message.SerializeAsString()));
  absl::StatusOr<Graph> back = GraphFromProto(received);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(CanonicalSerialization(*back), CanonicalSerialization(g));
  EXPECT_EQ(GraphHash(*back), GraphHash(g));
  for (OpId u = 0; u < g.num_ops(); ++u) EXPECT_EQ(back->name(u), g.name(u));
  EXPECT_EQ(back->edge(0).bytes, g.edge(0).bytes);
  EXPECT_EQ(GraphToProto(*back).SerializeAsString(), message.SerializeAsString());
}

TEST(GraphProto, EdgeBytesDefaultToTheOutputs) {
  placement::v1::Graph message;
  auto* a = message.add_operators();
  a->set_name("a");
  a->add_outputs()->set_bytes(64);
  message.add_operators()->set_name("b");
  auto* e = message.add_edges();
  e->set_src("a");
  e->set_dst("b");
  absl::StatusOr<Graph> g = GraphFromProto(message);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->edge(0).bytes, 64);
  EXPECT_LT(g->tensor(0).transfer_seconds, 0);
}

TEST(GraphProto, ErrorsNameTheOperatorOrEdge) {
  placement::v1::Graph empty;
  EXPECT_THAT(GraphFromProto(empty).status().message(), HasSubstr("no operators"));

  placement::v1::Graph message;
  auto* a = message.add_operators();
  a->set_name("a");
  a->add_outputs()->set_bytes(64);
  message.add_operators()->set_name("b");
  auto* e = message.add_edges();
  e->set_src("a");
  e->set_dst("b");

  placement::v1::Graph bad = message;
  bad.mutable_edges(0)->set_bytes(-1);
  EXPECT_THAT(GraphFromProto(bad).status().message(), HasSubstr("edges[0] ('a' -> 'b'): bytes is negative"));
  bad = message;
  bad.mutable_operators(0)->mutable_outputs(0)->set_transfer_seconds(-2);
  EXPECT_THAT(GraphFromProto(bad).status().message(),
              HasSubstr("operators[0] ('a'): outputs[0].transfer_seconds is negative"));
  bad = message;
  bad.mutable_edges(0)->set_dst("nope");
  EXPECT_THAT(GraphFromProto(bad).status().message(), HasSubstr("unknown operator 'nope'"));
  bad = message;
  bad.mutable_edges(0)->set_src("");
  EXPECT_THAT(GraphFromProto(bad).status().message(), HasSubstr("edges[0] has an empty src"));
  bad = message;
  bad.mutable_operators(1)->set_param_bytes(-3);
  EXPECT_THAT(GraphFromProto(bad).status().message(), HasSubstr("operator 'b': param_bytes is negative"));
  bad = message;
  bad.mutable_operators(1)->set_name("a");
  EXPECT_THAT(GraphFromProto(bad).status().message(), HasSubstr("duplicate operator name 'a'"));
  bad = message;
  bad.mutable_operators(0)->add_measured()->set_seconds(1);
  EXPECT_THAT(GraphFromProto(bad).status().message(), HasSubstr("measured time with an empty device kind"));
}

}  // namespace
}  // namespace placement
