#include "graph/precision.h"

#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "graph/tests/graph_test_util.h"
#include "graph/training.h"

namespace placement {
namespace {

OpSpec Op(std::string name, std::string type, int64_t param_bytes, int64_t output_bytes) {
  return testing::TypedOp(std::move(name), std::move(type), param_bytes, {output_bytes});
}

// fc1 -> relu -> layer_norm -> fc2 -> softmax, float32 as exported.
Graph Mlp() {
  GraphBuilder b;
  b.AddOp(Op("fc1", "Gemm", 4000, 1000));
  b.AddOp(Op("relu", "Relu", 0, 1000));
  b.AddOp(Op("ln", "LayerNormalization", 80, 1000));
  b.AddOp(Op("fc2", "Gemm", 4000, 400));
  b.AddOp(Op("softmax", "Softmax", 0, 400));
  testing::AddEdges(b, {{"fc1", "relu"}, {"relu", "ln"}, {"ln", "fc2"}, {"fc2", "softmax"}});
  return testing::BuildOrFail(std::move(b));
}

int64_t OutputBytes(const Graph& g, absl::string_view op) { return g.tensor(g.first_output(g.FindOp(op))).bytes; }

TEST(Precision, NamesParseAndUnknownOnesAreListed) {
  EXPECT_EQ(*ParsePrecision("AMP_BF16"), Precision::kAmpBf16);
  EXPECT_EQ(*ParsePrecision("tf32"), Precision::kFp32);
  EXPECT_EQ(*ParsePrecision(""), Precision::kFp32);
  const absl::Status bad = ParsePrecision("int4").status();
  EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.message().find("amp_bf16"), std::string::npos);
  EXPECT_EQ(PrecisionName(Precision::kFp16), "fp16");
}

TEST(Precision, AutocastHalvesWhatRunsIn16BitsAndPromotesTheRest) {
  const Graph g = Mlp();
  absl::StatusOr<Graph> amp = ApplyPrecision(g, Precision::kAmpBf16, /*inference=*/false);
  ASSERT_TRUE(amp.ok()) << amp.status();
  EXPECT_EQ(OutputBytes(*amp, "fc1"), 500);       // a linear layer answers in 16 bits
  EXPECT_EQ(OutputBytes(*amp, "relu"), 500);      // ... and what reads it runs in its precision
  EXPECT_EQ(OutputBytes(*amp, "ln"), 1000);       // layer norm is on autocast's float32 list
  EXPECT_EQ(OutputBytes(*amp, "softmax"), 400);   // so is softmax
  EXPECT_EQ(amp->param_bytes(amp->FindOp("fc1")), 4000);  // weights stay float32
  EXPECT_EQ(amp->edge(amp->out_begin(amp->FindOp("fc1"))).bytes, 500);  // edges carry the tensor's bytes
  absl::StatusOr<Graph> inference = ApplyPrecision(g, Precision::kAmpBf16, /*inference=*/true);
  // The float32 weights and the 16-bit copy autocast caches until its region ends.
  EXPECT_EQ(inference->param_bytes(inference->FindOp("fc2")), 4000 + 2000);
  EXPECT_EQ(inference->param_bytes(inference->FindOp("ln")), g.param_bytes(g.FindOp("ln")));  // not cast
  EXPECT_EQ(inference->temp_bytes(inference->FindOp("fc2")), 0);
}

TEST(Precision, ConvertedModelHalvesWeightsAndTensors) {
  absl::StatusOr<Graph> half = ApplyPrecision(Mlp(), Precision::kBf16, /*inference=*/false);
  ASSERT_TRUE(half.ok()) << half.status();
  EXPECT_EQ(half->total_param_bytes(), (4000 + 80 + 4000) / 2);
  EXPECT_EQ(OutputBytes(*half, "ln"), 500);
  EXPECT_EQ(OutputBytes(*half, "softmax"), 200);
}

TEST(Precision, AutocastTrainingKeepsCastCopiesNotFloat32Inputs) {
  absl::StatusOr<Graph> amp = ApplyPrecision(Mlp(), Precision::kAmpBf16, /*inference=*/false);
  ASSERT_TRUE(amp.ok());
  TrainingOptions options;
  options.precision = Precision::kAmpBf16;
  absl::StatusOr<Graph> step = BuildTrainingGraph(*amp, options);
  ASSERT_TRUE(step.ok()) << step.status();
  // fc2 keeps a 16-bit cast of the layer norm's float32 output (500) and of its weights (2000), as one more output
  // read by its backward; it does not keep the float32 output itself.
  const OpId fc2 = step->FindOp("fc2");
  ASSERT_EQ(step->num_outputs(fc2), 2);
  EXPECT_EQ(step->tensor(step->first_output(fc2) + 1).bytes, 500 + 2000);
  for (const Edge& e : step->out_edges(step->FindOp("ln"))) {
    EXPECT_NE(step->name(e.dst), "fc2/wgrad") << "the float32 output is not what fc2 keeps";
  }
  EXPECT_EQ(TrainingGraphSizeOf(*amp, options).edges, step->num_edges());
}

}  // namespace
}  // namespace placement
