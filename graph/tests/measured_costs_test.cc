// Measured costs merged onto a graph: the two file forms, their errors by line and key, what the merge counts,
// and the "*" kind that applies a time to every device kind.
#include "graph/measured_costs.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "graph/cost_model.h"
#include "graph/topology_json.h"

namespace placement {
namespace {

using ::testing::HasSubstr;

// a (1 GFLOP) -> b (3 GFLOP) -> c (no FLOPs).
Graph Chain() {
  GraphBuilder builder;
  for (auto [name, flops] : {std::pair{"a", 1e9}, std::pair{"b", 3e9}, std::pair{"c", 0.0}}) {
    OpSpec op;
    op.name = name;
    op.op_type = "MatMul";
    op.flops = flops;
    op.bytes_accessed = 1e6;
    op.outputs.push_back(OutputTensor{.bytes = 4096});
    builder.AddOp(op);
  }
  builder.AddEdge("a", 0, "b");
  builder.AddEdge("b", 0, "c");
  absl::StatusOr<Graph> g = std::move(builder).Build();
  EXPECT_TRUE(g.ok()) << g.status();
  return *std::move(g);
}

TEST(MeasuredCosts, JsonAndCsvSayTheSame) {
  absl::StatusOr<MeasuredCosts> json = ParseMeasuredCosts(R"({"a": {"A100": 0.002, "*": "3ms"}, "ghost": {"*": 1}})");
  absl::StatusOr<MeasuredCosts> csv =
      ParseMeasuredCosts("operator,device_kind,seconds\n# profiled on one A100\na,A100,0.002\na,*,3ms\nghost,*,1\n");
  ASSERT_TRUE(json.ok()) << json.status();
  ASSERT_TRUE(csv.ok()) << csv.status();
  EXPECT_EQ(json->times, csv->times);
  ASSERT_EQ(json->times.at("a").size(), 2u);
  EXPECT_DOUBLE_EQ(json->times.at("a")[1].second, 0.003);
}

TEST(MeasuredCosts, MalformedFilesNameTheLineOrKey) {
  const std::pair<const char*, const char*> cases[] = {
      {"a,A100\n", "line 1: expected operator,device_kind,seconds"},
      {"a,A100,1\nb,A100,soon\n", "line 2:"},
      {"a,A100,1\na,A100,2\n", "line 2: operator 'a' has a time for 'A100' already"},
      {"a,A100,-1\n", "line 1: the time must be finite and not negative"},
      {R"({"a": {"A100": true}})", "key 'a' / 'A100'"},
      {R"({"a": 3})", "key 'a': an operator maps device kinds to times"},
      {R"({"a": {"A100": 1, "A100": 2}})", "the key 'A100' appears twice"},
      {R"({"a": {"A100": 1})", "the costs file is not valid JSON"},
      {"# nothing\n", "lists no operator"},
  };
  for (const auto& [text, message] : cases) {
    absl::StatusOr<MeasuredCosts> parsed = ParseMeasuredCosts(text);
    ASSERT_FALSE(parsed.ok()) << text;
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(parsed.status().message()), HasSubstr(message)) << text;
  }
}

TEST(MeasuredCosts, MergeCountsWhatWasMeasuredAndAnyKindAppliesEverywhere) {
  const Graph g = Chain();
  absl::StatusOr<MeasuredCosts> costs = ParseMeasuredCosts(R"({"b": {"*": 0.004, "V100": 0.009}, "ghost": {"*": 1}})");
  ASSERT_TRUE(costs.ok());
  CostSources sources;
  absl::StatusOr<Graph> merged = ApplyMeasuredCosts(g, *costs, &sources);
  ASSERT_TRUE(merged.ok()) << merged.status();
  EXPECT_EQ(sources.measured_ops, 1);
  EXPECT_EQ(sources.modelled_ops, 2);
  EXPECT_DOUBLE_EQ(sources.measured_flops_share, 0.75);
  ASSERT_EQ(sources.warnings.size(), 1u);
  EXPECT_THAT(sources.warnings[0], HasSubstr("1 operator of the costs file the graph does not have (first: 'ghost')"));
  absl::StatusOr<Topology> topology = ParseTopologyShorthand("1xA100+1xV100");
  ASSERT_TRUE(topology.ok()) << topology.status();
  absl::StatusOr<CostModel> model = CostModel::Create(*merged, *topology);
  ASSERT_TRUE(model.ok()) << model.status();
  const OpId b = merged->FindOp("b");
  for (DeviceId d = 0; d < topology->num_devices(); ++d) {
    // "*" on the A100, V100's own figure on the V100.
    EXPECT_DOUBLE_EQ(model->op_time(b, d), topology->device(d).kind == "V100" ? 0.009 : 0.004);
  }
  // The other operators keep the model's estimate, on both kinds.
  const OpId a = merged->FindOp("a");
  for (DeviceId d = 0; d < topology->num_devices(); ++d) EXPECT_LT(model->op_time(a, d), 1.0);
}

}  // namespace
}  // namespace placement
