#include "graph/precision.h"

#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "graph/tests/graph_test_util.h"
#include "graph/cost_model.h"
#include "graph/topology.h"
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

// A training step of g under bf16 autocast.
absl::StatusOr<Graph> AutocastStep(const Graph& g) {
  absl::StatusOr<Graph> amp = ApplyPrecision(g, Precision::kAmpBf16, /*inference=*/false);
  if (!amp.ok()) return amp.status();
  TrainingOptions options;
  options.precision = Precision::kAmpBf16;
  return BuildTrainingGraph(*amp, options);
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
  // A kernel answering in 16 bits reads 16-bit operands: its roofline's bytes halve; float32-list ones keep theirs.
  EXPECT_DOUBLE_EQ(amp->bytes_accessed(amp->FindOp("fc1")), g.bytes_accessed(g.FindOp("fc1")) / 2);
  EXPECT_DOUBLE_EQ(amp->bytes_accessed(amp->FindOp("relu")), g.bytes_accessed(g.FindOp("relu")) / 2);
  EXPECT_DOUBLE_EQ(amp->bytes_accessed(amp->FindOp("ln")), g.bytes_accessed(g.FindOp("ln")));
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
  absl::StatusOr<Graph> step = AutocastStep(Mlp());
  ASSERT_TRUE(step.ok()) << step.status();
  // fc2 keeps a 16-bit cast of the layer norm's float32 output (500) and of its weights (2000), as one more output
  // read by its backward; it does not keep the float32 output itself.
  const OpId fc2 = step->FindOp("fc2");
  ASSERT_EQ(step->num_outputs(fc2), 2);
  EXPECT_EQ(step->tensor(step->first_output(fc2) + 1).bytes, 500 + 2000);
  for (const Edge& e : step->out_edges(step->FindOp("ln"))) {
    EXPECT_NE(step->name(e.dst), "fc2/wgrad") << "the float32 output is not what fc2 keeps";
  }
  absl::StatusOr<Graph> amp = ApplyPrecision(Mlp(), Precision::kAmpBf16, /*inference=*/false);
  TrainingOptions options;
  options.precision = Precision::kAmpBf16;
  EXPECT_EQ(TrainingGraphSizeOf(*amp, options).edges, step->num_edges());
}

TEST(Precision, AutocastKeepsNoWeightCopyWhereTheActivationNeedsNoGradient) {
  absl::StatusOr<Graph> step = AutocastStep(Mlp());
  ASSERT_TRUE(step.ok()) << step.status();
  // fc1 reads the data: its backward computes the weight gradient, from its input, and never reads its weights.
  EXPECT_EQ(step->num_outputs(step->FindOp("fc1")), 1);
  EXPECT_EQ(step->tensor(step->first_output(step->FindOp("fc2")) + 1).bytes, 500 + 2000);
}

TEST(Precision, AutocastCastsTheDataAFirstConvolutionReadsAndKeepsTheCast) {
  GraphBuilder b;
  OpSpec conv = Op("conv", "Conv", 4000, 2000);
  conv.data_bytes = 600;  // the images, float32, which no edge brings
  b.AddOp(conv);
  b.AddOp(Op("relu", "Relu", 0, 2000));
  testing::AddEdges(b, {{"conv", "relu"}});
  const Graph g = testing::BuildOrFail(std::move(b));
  absl::StatusOr<Graph> amp = ApplyPrecision(g, Precision::kAmpBf16, /*inference=*/false);
  ASSERT_TRUE(amp.ok()) << amp.status();
  const OpId c = amp->FindOp("conv");
  // Two casts before it: its weights and the data, 1.5 bytes moved per float32 byte; the data needs no gradient,
  // so only the weights' cast runs back.
  EXPECT_EQ(amp->extra_kernels(c).kernels, 2);
  EXPECT_DOUBLE_EQ(amp->extra_kernels(c).bytes, 1.5 * (4000 + 600));
  EXPECT_EQ(amp->extra_kernels_back(c).kernels, 1);
  TrainingOptions options;
  options.precision = Precision::kAmpBf16;
  absl::StatusOr<Graph> step = BuildTrainingGraph(*amp, options);
  ASSERT_TRUE(step.ok()) << step.status();
  // Kept for the weights' gradient: the 16-bit cast of the data; not the weights' copy, which only the data's
  // gradient would read.
  const OpId kept = step->FindOp("conv");
  ASSERT_EQ(step->num_outputs(kept), 2);
  EXPECT_EQ(step->tensor(step->first_output(kept) + 1).bytes, 300);
}

// conv -> max pool (64 float32 outputs) -> fc.
Graph PoolNet() {
  GraphBuilder b;
  b.AddOp(Op("conv", "Conv", 4000, 1024));
  b.AddOp(Op("pool", "MaxPool", 0, 256));
  b.AddOp(Op("fc", "Gemm", 4000, 40));
  testing::AddEdges(b, {{"conv", "pool"}, {"pool", "fc"}});
  return testing::BuildOrFail(std::move(b));
}

TEST(Precision, A16BitStepKeepsMaxPoolingsInt64IndicesWhole) {
  for (Precision p : {Precision::kAmpBf16, Precision::kBf16}) {
    absl::StatusOr<Graph> half = ApplyPrecision(PoolNet(), p, /*inference=*/false);
    ASSERT_TRUE(half.ok()) << half.status();
    TrainingOptions options;
    options.precision = p;
    absl::StatusOr<Graph> step = BuildTrainingGraph(*half, options);
    ASSERT_TRUE(step.ok()) << step.status();
    const OpId pool = step->FindOp("pool");
    EXPECT_EQ(OutputBytes(*step, "pool"), 128) << PrecisionName(p);  // 64 elements of 2 bytes
    ASSERT_EQ(step->num_outputs(pool), 2) << PrecisionName(p);
    EXPECT_EQ(step->tensor(step->first_output(pool) + 1).bytes, 64 * 8) << PrecisionName(p);  // int64 indices
  }
}

// Autocast casts a lower-precision operator's weights and float32 inputs down and a float32-list operator's 16-bit
// inputs up, each cast reading one width and writing the other (1.5 bytes per float32 byte); fp32 runs none.
TEST(Precision, AutocastRunsTheCastsPyTorchRunsBeforeEachOperator) {
  const Graph g = Mlp();
  absl::StatusOr<Graph> amp = ApplyPrecision(g, Precision::kAmpBf16, /*inference=*/true);
  ASSERT_TRUE(amp.ok()) << amp.status();
  const auto casts = [&](absl::string_view op) { return amp->extra_kernels(amp->FindOp(op)); };
  EXPECT_EQ(casts("fc1").kernels, 1);  // its weights; it reads no float32 activation
  EXPECT_DOUBLE_EQ(casts("fc1").bytes, 1.5 * 4000);
  EXPECT_EQ(casts("relu").kernels, 0);  // promotes inside its kernel
  EXPECT_EQ(casts("ln").kernels, 1);    // the 16-bit ReLU output, up to float32
  EXPECT_DOUBLE_EQ(casts("ln").bytes, 1.5 * 1000);
  EXPECT_EQ(casts("fc2").kernels, 2);  // its weights and the layer norm's float32 output
  EXPECT_DOUBLE_EQ(casts("fc2").bytes, 1.5 * 4000 + 1.5 * 1000);
  EXPECT_EQ(casts("softmax").kernels, 1);
  absl::StatusOr<Graph> fp32 = ApplyPrecision(g, Precision::kFp32, /*inference=*/true);
  absl::StatusOr<Graph> bf16 = ApplyPrecision(g, Precision::kBf16, /*inference=*/true);
  for (OpId u = 0; u < g.num_ops(); ++u) {
    EXPECT_EQ(fp32->extra_kernels(u).kernels, 0);
    EXPECT_EQ(bf16->extra_kernels(u).kernels, 0) << "a converted model casts nothing";
  }
}

// In a training step each cast of something that requires a gradient is run back by autograd, in the backward of
// the operator it fed; the cost model issues every cast from the host and runs its bytes on the device.
TEST(Precision, ATrainingStepRunsTheCastsBackAndTheHostIssuesThem) {
  absl::StatusOr<Graph> step = AutocastStep(Mlp());
  ASSERT_TRUE(step.ok()) << step.status();
  const OpId fc2 = step->FindOp("fc2"), fc2_grad = step->FindOp("fc2/grad");
  EXPECT_EQ(step->extra_kernels(fc2).kernels, 2);
  EXPECT_EQ(step->extra_kernels_back(fc2).kernels, 0) << "given to its input gradient";
  EXPECT_EQ(step->extra_kernels(fc2_grad).kernels, 2);
  EXPECT_EQ(step->extra_kernels(step->FindOp("fc2/wgrad")).kernels, 0);

  Device d;
  d.name = "gpu0";
  d.kind = "gpu";
  d.peak_flops = 1e12;
  d.memory_bandwidth = 1e9;
  d.launch_overhead = 1e-5;
  d.host_op_overhead = 4e-5;
  d.host_backward_op_overhead = 9e-5;
  absl::StatusOr<Topology> topology = BuildMatrix("one", {d}, {{0}}, {{0}});
  ASSERT_TRUE(topology.ok()) << topology.status();
  absl::StatusOr<CostModel> with_casts = CostModel::Create(*step, *topology);
  absl::StatusOr<Graph> plain = RebuildGraph(*step, [](OpId, OpSpec& op) { op.extra_kernels = {}; });
  absl::StatusOr<CostModel> without = CostModel::Create(*plain, *topology);
  ASSERT_TRUE(with_casts.ok() && without.ok());
  EXPECT_DOUBLE_EQ(with_casts->host_time(fc2, 0), without->host_time(fc2, 0) + 2 * d.launch_overhead);
  EXPECT_DOUBLE_EQ(with_casts->host_time(fc2_grad, 0), without->host_time(fc2_grad, 0) + 2 * d.launch_overhead);
  // On the device a cast is its bytes at the memory bandwidth; the host stream carries its launch.
  EXPECT_NEAR(with_casts->op_time(fc2, 0) - without->op_time(fc2, 0), 7500 / 1e9, 1e-12);
}

}  // namespace
}  // namespace placement
