#include "graph/canonical.h"

#include <gtest/gtest.h>
#include <openssl/sha.h>

#include "absl/strings/escaping.h"

namespace placement {
namespace {

// A small graph, built with its operators and edges listed in the given order.
Graph Diamond(bool reversed, double cost_of_b = 2e9, int64_t edge_bytes = -1) {
  std::vector<OpSpec> ops;
  for (const char* name : {"a", "b", "c", "d"}) {
    OpSpec op;
    op.name = name;
    op.op_type = "Conv";
    op.flops = std::string(name) == "b" ? cost_of_b : 1e9;
    op.measured_seconds = {{"H100", 1e-3}, {"A100", 2e-3}};
    if (reversed) std::swap(op.measured_seconds[0], op.measured_seconds[1]);
    op.outputs.push_back(OutputTensor{4096, -1});
    ops.push_back(op);
  }
  std::vector<std::tuple<const char*, const char*, int64_t>> edges = {
      {"a", "b", -1}, {"a", "c", -1}, {"b", "d", edge_bytes}, {"c", "d", -1}};
  GraphBuilder builder;
  if (reversed) {
    for (auto it = ops.rbegin(); it != ops.rend(); ++it) builder.AddOp(*it);
    for (auto it = edges.rbegin(); it != edges.rend(); ++it)
      builder.AddEdge(std::get<0>(*it), 0, std::get<1>(*it), std::get<2>(*it));
  } else {
    for (const OpSpec& op : ops) builder.AddOp(op);
    for (const auto& [s, d, bytes] : edges) builder.AddEdge(s, 0, d, bytes);
  }
  absl::StatusOr<Graph> g = std::move(builder).Build();
  EXPECT_TRUE(g.ok()) << g.status();
  return *std::move(g);
}

TEST(GraphHash, SameGraphListedInAnotherOrderHashesTheSame) {
  const Graph forward = Diamond(false);
  const Graph backward = Diamond(true);
  EXPECT_EQ(CanonicalSerialization(forward), CanonicalSerialization(backward));
  EXPECT_EQ(GraphHash(forward), GraphHash(backward));
  EXPECT_EQ(GraphHash(forward).size(), 64u);  // SHA-256 in hex
}

TEST(GraphHash, OneChangedCostHashesDifferently) {
  EXPECT_NE(GraphHash(Diamond(false)), GraphHash(Diamond(false, 2.000001e9)));
}

TEST(GraphHash, ChangedEdgeBytesHashDifferently) {
  EXPECT_NE(GraphHash(Diamond(false)), GraphHash(Diamond(false, 2e9, 4097)));
}

TEST(GraphHash, ChangedStructureHashesDifferently) {
  GraphBuilder b1, b2;
  for (GraphBuilder* b : {&b1, &b2}) {
    for (const char* name : {"x", "y", "z"}) {
      OpSpec op;
      op.name = name;
      op.outputs.push_back(OutputTensor{8, -1});
      b->AddOp(op);
    }
  }
  b1.AddEdge("x", 0, "y");
  b1.AddEdge("y", 0, "z");
  b2.AddEdge("x", 0, "y");
  b2.AddEdge("x", 0, "z");
  EXPECT_NE(GraphHash(*std::move(b1).Build()), GraphHash(*std::move(b2).Build()));
}

TEST(GraphHash, StreamingHashMatchesHashOfCanonicalBytesAcrossBlocks) {
  // Enough operators that the writer flushes several 64 KiB blocks.
  GraphBuilder b;
  for (int i = 0; i < 5000; ++i) {
    OpSpec op;
    op.name = "op" + std::to_string(i);
    op.op_type = "Add";
    op.flops = i;
    op.outputs.push_back(OutputTensor{i, -1});
    b.AddOp(op);
    if (i > 0) b.AddEdge("op" + std::to_string(i - 1), 0, op.name);
  }
  const Graph g = *std::move(b).Build();
  const std::string bytes = CanonicalSerialization(g);
  EXPECT_GT(bytes.size(), 3u * 65536);
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), digest);
  EXPECT_EQ(GraphHash(g),
            absl::BytesToHexString(absl::string_view(reinterpret_cast<const char*>(digest), sizeof digest)));
  // Renaming one operator changes the hash.
  GraphBuilder b2;
  for (int i = 0; i < 5000; ++i) {
    OpSpec op;
    op.name = i == 4999 ? "last" : "op" + std::to_string(i);
    op.op_type = "Add";
    op.flops = i;
    op.outputs.push_back(OutputTensor{i, -1});
    b2.AddOp(op);
    if (i > 0) b2.AddEdge("op" + std::to_string(i - 1), 0, op.name);
  }
  EXPECT_NE(GraphHash(g), GraphHash(*std::move(b2).Build()));
}

}  // namespace
}  // namespace placement
