// Operator classes and the per-class efficiencies of a device: how operators are classed, how a topology file
// carries the efficiencies, and that the cost model divides each roofline by its class's share.
#include "graph/op_class.h"

#include <string>
#include <utility>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "graph/cost_model.h"
#include "graph/topology_json.h"
#include "graph/training.h"

namespace placement {
namespace {

using ::testing::HasSubstr;

// A 3x3 convolution over 64 channels and a 3x3 depthwise one, each writing 1 MB, then a Relu.
Graph Convolutions() {
  GraphBuilder builder;
  auto add = [&](const char* name, const char* type, double flops) {
    OpSpec op;
    op.name = name;
    op.op_type = type;
    op.flops = flops;
    op.bytes_accessed = 2e6;
    op.outputs.push_back(OutputTensor{.bytes = 1000000});
    builder.AddOp(op);
  };
  add("dense", "Conv", 288e6);
  add("depthwise", "Conv", 4.5e6);
  add("relu", "Relu", 0.25e6);
  builder.AddEdge("dense", 0, "depthwise");
  builder.AddEdge("depthwise", 0, "relu");
  absl::StatusOr<Graph> g = std::move(builder).Build();
  EXPECT_TRUE(g.ok()) << g.status();
  return *std::move(g);
}

TEST(OpClass, TypesAndTheirBackwardOperatorsShareAClass) {
  EXPECT_EQ(ClassOfType("MatMul"), OpClass::kGemm);
  EXPECT_EQ(ClassOfType("ConvGrad"), OpClass::kConv);
  EXPECT_EQ(ClassOfType("ConvWeightGrad"), OpClass::kConv);
  EXPECT_EQ(ClassOfType("BatchNormalization"), OpClass::kNormalization);
  EXPECT_EQ(ClassOfType("GlobalAveragePool"), OpClass::kNormalization);
  EXPECT_EQ(ClassOfType("MaxPoolGrad"), OpClass::kPooling);
  EXPECT_EQ(ClassOfType("Reshape"), OpClass::kView);
  EXPECT_EQ(ClassOfType("Concat"), OpClass::kDataMovement);
  EXPECT_EQ(ClassOfType("ApplyAdam"), OpClass::kOptimizer);
  EXPECT_EQ(ClassOfType("SomethingNew"), OpClass::kElementwise);
  EXPECT_TRUE(IsBackwardType("ReluGrad"));
  EXPECT_FALSE(IsBackwardType("ApplyAdam"));
  for (int c = 0; c < kNumOpClasses; ++c) {
    EXPECT_EQ(OpClassFromName(OpClassName(static_cast<OpClass>(c))), static_cast<OpClass>(c));
  }
  EXPECT_FALSE(OpClassFromName("fancy").has_value());
}

TEST(OpClass, TranscendentalActivationsAndConcatenationGradientsHaveTheirOwnClass) {
  EXPECT_EQ(ClassOfType("Sigmoid"), OpClass::kTranscendental);
  EXPECT_EQ(ClassOfType("Gelu"), OpClass::kTranscendental);
  EXPECT_EQ(ClassOfType("TanhGrad"), OpClass::kTranscendental);
  EXPECT_EQ(ClassOfType("HardSwish"), OpClass::kElementwise);  // no exponential
  EXPECT_EQ(ClassOfType("ConcatGrad"), OpClass::kView);        // slices of the output's gradient
  EXPECT_EQ(BackwardFamily(OpClass::kThinConv), OpClass::kConv);
  EXPECT_EQ(BackwardFamily(OpClass::kThinGemm), OpClass::kGemm);
  EXPECT_EQ(BackwardFamily(OpClass::kTranscendental), OpClass::kTranscendental);
}

TEST(OpClass, AutogradFunctionsOfATraceMapToTheFamiliesOfTheirOperators) {
  EXPECT_EQ(FamilyOfAutogradFunction("ConvolutionBackward0"), OpClass::kConv);
  EXPECT_EQ(FamilyOfAutogradFunction("CudnnConvolutionBackward0"), OpClass::kConv);
  EXPECT_EQ(FamilyOfAutogradFunction("AddmmBackward0"), OpClass::kGemm);
  EXPECT_EQ(FamilyOfAutogradFunction("BmmBackward0"), OpClass::kGemm);
  EXPECT_EQ(FamilyOfAutogradFunction("NativeBatchNormBackward0"), OpClass::kNormalization);
  EXPECT_EQ(FamilyOfAutogradFunction("LogSoftmaxBackward0"), OpClass::kNormalization);
  EXPECT_EQ(FamilyOfAutogradFunction("MaxPool2DWithIndicesBackward0"), OpClass::kPooling);
  EXPECT_EQ(FamilyOfAutogradFunction("ReluBackward0"), OpClass::kElementwise);
  EXPECT_EQ(FamilyOfAutogradFunction("HardtanhBackward0"), OpClass::kElementwise);
  EXPECT_EQ(FamilyOfAutogradFunction("SiluBackward0"), OpClass::kTranscendental);
  EXPECT_EQ(FamilyOfAutogradFunction("ExpandBackward0"), OpClass::kView);  // not "Exp"
  EXPECT_EQ(FamilyOfAutogradFunction("CatBackward0"), OpClass::kView);
  EXPECT_EQ(FamilyOfAutogradFunction("PermuteBackward0"), OpClass::kDataMovement);
  EXPECT_EQ(FamilyOfAutogradFunction("torch::autograd::AccumulateGrad"), OpClass::kOptimizer);
}

TEST(OpClass, ADepthwiseConvolutionIsThin) {
  const Graph g = Convolutions();
  EXPECT_EQ(ClassOf(g, g.FindOp("dense")), OpClass::kConv);
  EXPECT_EQ(ClassOf(g, g.FindOp("depthwise")), OpClass::kThinConv);
  EXPECT_EQ(ClassOf(g, g.FindOp("relu")), OpClass::kElementwise);
}

// The same depthwise convolution with a 5x5 window: thin, but wide, and its backward operators with it; the dense
// convolution stays dense whatever its window.
TEST(OpClass, AThinConvolutionWithAWindowPast3x3IsWideAndItsBackwardToo) {
  EXPECT_EQ(RefineByIntensity(OpClass::kConv, 4.5e6, 2e6, 9), OpClass::kThinConv);
  EXPECT_EQ(RefineByIntensity(OpClass::kConv, 4.5e6, 2e6, 25), OpClass::kWideThinConv);
  EXPECT_EQ(RefineByIntensity(OpClass::kConv, 288e6, 2e6, 25), OpClass::kConv);
  // A class refined before, read back from a measurements file.
  EXPECT_EQ(RefineByIntensity(OpClass::kThinConv, 4.5e6, 2e6, 49), OpClass::kWideThinConv);
  EXPECT_EQ(RefineByIntensity(OpClass::kConv, 4.5e6, 2e6), OpClass::kThinConv);  // window unknown: as a 3x3 one
  EXPECT_EQ(BackwardFamily(OpClass::kWideThinConv), OpClass::kWideThinConv);
  absl::StatusOr<Graph> g = RebuildGraph(Convolutions(), [](OpId, OpSpec& op) {
    if (op.name == "dense") op.param_bytes = 9 * 4 * 64 * 64;  // weights: what it writes needs a gradient
    if (op.name != "depthwise") return;
    op.window = 25;
    op.param_bytes = 25 * 4 * 64;  // its weights: a weight-gradient operator too
  });
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(ClassOf(*g, g->FindOp("depthwise")), OpClass::kWideThinConv);
  absl::StatusOr<Graph> step = BuildTrainingGraph(*g);
  ASSERT_TRUE(step.ok()) << step.status();
  for (const char* name : {"depthwise", "depthwise/grad", "depthwise/wgrad"}) {
    const OpId op = step->FindOp(name);
    ASSERT_NE(op, kNone) << name;
    EXPECT_EQ(ClassOf(*step, op), OpClass::kWideThinConv) << name;
  }
}

// A thin convolution on channels-last data, whatever its window, is a class of its own, and its backward
// operators with it; a dense convolution stays dense on any layout.
TEST(OpClass, AThinConvolutionOnChannelsLastDataIsAClassOfItsOwn) {
  EXPECT_EQ(RefineByIntensity(OpClass::kConv, 4.5e6, 2e6, 49, true), OpClass::kChannelsLastThinConv);
  EXPECT_EQ(RefineByIntensity(OpClass::kConv, 4.5e6, 2e6, 9, true), OpClass::kChannelsLastThinConv);
  EXPECT_EQ(RefineByIntensity(OpClass::kConv, 288e6, 2e6, 49, true), OpClass::kConv);
  EXPECT_EQ(RefineByIntensity(OpClass::kElementwise, 1e6, 2e6, 0, true), OpClass::kElementwise);
  EXPECT_EQ(RefineByIntensity(OpClass::kChannelsLastThinConv, 4.5e6, 2e6, 49), OpClass::kChannelsLastThinConv);
  EXPECT_EQ(OpClassFromName("channels_last_thin_conv"), OpClass::kChannelsLastThinConv);
  absl::StatusOr<Graph> g = RebuildGraph(Convolutions(), [](OpId, OpSpec& op) {
    op.channels_last = true;
    if (op.name == "dense") op.param_bytes = 9 * 4 * 64 * 64;  // weights: what it writes needs a gradient
    if (op.name == "depthwise") op.param_bytes = 9 * 4 * 64;  // its weights: a weight-gradient operator too
  });
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(ClassOf(*g, g->FindOp("dense")), OpClass::kConv);
  absl::StatusOr<Graph> step = BuildTrainingGraph(*g);
  ASSERT_TRUE(step.ok()) << step.status();
  for (const char* name : {"depthwise", "depthwise/grad", "depthwise/wgrad"}) {
    const OpId op = step->FindOp(name);
    ASSERT_NE(op, kNone) << name;
    EXPECT_EQ(ClassOf(*step, op), OpClass::kChannelsLastThinConv) << name;
  }
}

// Eager PyTorch runs a model outside training in eval mode: its batch normalizations apply their running statistics,
// one pass over the data, a class of its own; in a training step they compute the batch's, a normalization. A
// topology file without the class gives it the normalizations' factor.
TEST(OpClass, ABatchNormalizationOutsideATrainingStepIsAClassOfItsOwn) {
  GraphBuilder builder;
  for (const char* type : {"Conv", "BatchNormalization"}) {
    OpSpec op;
    op.name = type;
    op.op_type = type;
    op.flops = 288e6;
    op.bytes_accessed = 2e6;
    op.param_bytes = 1024;
    op.outputs.push_back(OutputTensor{.bytes = 1000000});
    builder.AddOp(op);
  }
  builder.AddEdge("Conv", 0, "BatchNormalization");
  absl::StatusOr<Graph> g = std::move(builder).Build();
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_FALSE(g->has_backward());
  EXPECT_EQ(ClassOf(*g, g->FindOp("BatchNormalization")), OpClass::kInferenceBatchNorm);
  EXPECT_EQ(OpClassFromName("inference_batch_norm"), OpClass::kInferenceBatchNorm);
  absl::StatusOr<Graph> step = BuildTrainingGraph(*g);
  ASSERT_TRUE(step.ok()) << step.status();
  EXPECT_TRUE(step->has_backward());
  // In a training step it computes the batch's statistics: a class of its own too, forward and back.
  for (const char* name : {"BatchNormalization", "BatchNormalization/grad", "BatchNormalization/wgrad"}) {
    ASSERT_NE(step->FindOp(name), kNone) << name;
    EXPECT_EQ(ClassOf(*step, step->FindOp(name)), OpClass::kTrainingBatchNorm) << name;
  }
  EXPECT_EQ(OpClassFromName("training_batch_norm"), OpClass::kTrainingBatchNorm);
  const std::string cpu = R"({"devices": [{"name": "cpu0", "kind": "cpu", "type": "cpu", "peak_flops": "100 GFLOP/s",
      "memory_bandwidth": "10 GB/s", "memory": "16 GiB", "efficiency": {"normalization": 0.25%s}}]})";
  absl::StatusOr<Topology> old = ParseTopologyJson(absl::StrReplaceAll(cpu, {{"%s", ""}}));
  ASSERT_TRUE(old.ok()) << old.status();
  EXPECT_DOUBLE_EQ(old->device(0).efficiency[static_cast<int>(OpClass::kInferenceBatchNorm)], 0.25);
  absl::StatusOr<Topology> own = ParseTopologyJson(absl::StrReplaceAll(cpu, {{"%s", R"(, "inference_batch_norm": 2)"}}));
  ASSERT_TRUE(own.ok()) << own.status();
  absl::StatusOr<CostModel> m = CostModel::Create(*g, *own);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_NEAR(m->op_time(g->FindOp("BatchNormalization"), 0), 288e6 / 100e9 / 2, 1e-12);  // compute-bound
  absl::StatusOr<CostModel> training = CostModel::Create(*step, *own);
  ASSERT_TRUE(training.ok()) << training.status();
  EXPECT_NEAR(training->op_time(step->FindOp("BatchNormalization"), 0), 288e6 / 100e9 / 0.25, 1e-12);
}

constexpr char kCalibrated[] = R"({"devices": [{"name": "cpu0", "kind": "cpu", "type": "cpu",
    "peak_flops": "100 GFLOP/s", "memory_bandwidth": "10 GB/s", "memory": "16 GiB",
    "efficiency": {"conv": 0.5, "thin_conv": 0.25}, "backward_efficiency": {"conv": 0.8}}]})";

// Each value of `key` on an A100 preset device is refused as invalid, naming what `message` says.
void ExpectDeviceFieldRefused(absl::string_view key, const std::vector<std::pair<std::string, std::string>>& cases) {
  for (const auto& [value, message] : cases) {
    const std::string bad = absl::StrCat(R"({"devices": [{"preset": "A100", ")", key, R"(": )", value, "}]}");
    absl::StatusOr<Topology> parsed = ParseTopologyJson(bad);
    ASSERT_FALSE(parsed.ok()) << value;
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(parsed.status().message(), HasSubstr(message)) << value;
  }
}

TEST(OpClass, TheCostModelDividesEachRooflineByItsClassEfficiency) {
  absl::StatusOr<Topology> t = ParseTopologyJson(kCalibrated);
  ASSERT_TRUE(t.ok()) << t.status();
  const Graph g = Convolutions();
  absl::StatusOr<CostModel> m = CostModel::Create(g, *t);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_NEAR(m->op_time(g.FindOp("dense"), 0), 288e6 / 100e9 / 0.5, 1e-12);    // compute-bound
  EXPECT_NEAR(m->op_time(g.FindOp("depthwise"), 0), 2e6 / 10e9 / 0.25, 1e-12);  // memory-bound
  EXPECT_NEAR(m->op_time(g.FindOp("relu"), 0), 2e6 / 10e9, 1e-12);              // elementwise left at 1
}

// A class with a serial bandwidth moves its bytes at it on top of its roofline time, forward and backward; the
// classes without one keep the roofline.
TEST(OpClass, AClassSerialBandwidthAddsItsBytesToTheRoofline) {
  std::string text = kCalibrated;
  text.insert(text.rfind("}]}"), R"(, "serial_bandwidth": {"conv": "1 GB/s"})");
  absl::StatusOr<Topology> t = ParseTopologyJson(text);
  ASSERT_TRUE(t.ok()) << t.status();
  const Graph g = Convolutions();
  absl::StatusOr<CostModel> m = CostModel::Create(g, *t);
  ASSERT_TRUE(m.ok()) << m.status();
  const OpId dense = g.FindOp("dense");
  EXPECT_NEAR(m->op_time(dense, 0), 288e6 / 100e9 / 0.5 + g.bytes_accessed(dense) / 1e9, 1e-12);
  EXPECT_NEAR(m->op_time(g.FindOp("depthwise"), 0), 2e6 / 10e9 / 0.25, 1e-12);  // thin_conv: none
  absl::StatusOr<Graph> step = BuildTrainingGraph(g);
  ASSERT_TRUE(step.ok()) << step.status();
  const OpId grad = step->FindOp("dense/grad");
  ASSERT_NE(grad, kNone);
  const double bytes = step->bytes_accessed(grad);  // at 0.5 x the backward's 0.8
  EXPECT_NEAR(ModelledSeconds(*step, grad, t->device(0)),
              ClassRooflineSeconds(OpClass::kConv, step->flops(grad), bytes, t->device(0)) / 0.4 + bytes / 1e9, 1e-12);
  absl::StatusOr<Topology> again = ParseTopologyJson(TopologyToJson(*t));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->device(0).serial_bandwidth, t->device(0).serial_bandwidth);
  ExpectDeviceFieldRefused("serial_bandwidth", {{R"({"fancy": 1e9})", "serial_bandwidth.fancy: unknown operator class"},
                                                 {R"({"conv": -1})", "serial_bandwidth.conv"},
                                                 {R"({"conv": "fast"})", "serial_bandwidth.conv"},
                                                 {R"([1e9])", "expected an object of operator classes"}});
}

// A device's intensity curves survive its topology file; a curve that is no list of rising positive points is named.
TEST(OpClass, IntensityCurvesSurviveTheTopologyFileAndBadOnesAreNamed) {
  std::string text = kCalibrated;
  text.insert(text.rfind("}]}"), R"(, "intensity_curves": {"conv": [[25, 0.5], [500, 2]]})");
  absl::StatusOr<Topology> t = ParseTopologyJson(text);
  ASSERT_TRUE(t.ok()) << t.status();
  const IntensityCurve& curve = t->device(0).intensity_curves[static_cast<int>(OpClass::kConv)];
  ASSERT_EQ(curve.size, 2);
  EXPECT_DOUBLE_EQ(curve.intensity[1], 500);
  EXPECT_DOUBLE_EQ(curve.factor[0], 0.5);
  absl::StatusOr<Topology> again = ParseTopologyJson(TopologyToJson(*t));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->device(0).intensity_curves, t->device(0).intensity_curves);
  ExpectDeviceFieldRefused("intensity_curves",
                           {{R"({"fancy": [[1, 1], [2, 1]]})", "intensity_curves.fancy: unknown operator class"},
                            {R"({"conv": [[1, 1]]})", "intensity_curves.conv: expected 2 to 8 points"},
                            {R"({"conv": [[10, 1], [5, 1]]})", "by increasing intensity"},
                            {R"({"conv": [[10, 1], [20, -1]]})", "positive numbers"},
                            {R"({"conv": [[10, 1], "fast"]})", "positive numbers"},
                            {R"([1])", "expected an object of operator classes"}});
}

TEST(OpClass, PoolingOnACpuIsBoundByItsOperationsNotItsBytes) {
  Device cpu{.name = "cpu0", .kind = "cpu", .type = DeviceType::kCpu, .peak_flops = 1e9, .memory_bandwidth = 1e9};
  Device gpu = cpu;
  gpu.type = DeviceType::kAccelerator;
  // A 3x3 max pool at stride 1 over 1M float elements: 9M comparisons, 8 MB read and written. On a CPU each of
  // the 2M elements read or written is one more operation: 11M at 1 GFLOP/s, where the plain roofline says 9 ms.
  EXPECT_NEAR(ClassRooflineSeconds(OpClass::kPooling, 9e6, 8e6, cpu), 11e-3, 1e-12);
  EXPECT_NEAR(ClassRooflineSeconds(OpClass::kPooling, 9e6, 8e6, gpu), 9e-3, 1e-12);
  // At stride 2 the same outputs read four times the inputs: 5M elements moved, the window work unchanged.
  EXPECT_NEAR(ClassRooflineSeconds(OpClass::kPooling, 9e6, 20e6, cpu), 14e-3, 1e-12);
  // Other classes keep the plain roofline on a CPU.
  EXPECT_NEAR(ClassRooflineSeconds(OpClass::kElementwise, 1e6, 8e6, cpu), RooflineSeconds(1e6, 8e6, cpu), 1e-15);
}

TEST(OpClass, EfficienciesSurviveTheTopologyFileAndBadOnesAreNamed) {
  absl::StatusOr<Topology> t = ParseTopologyJson(kCalibrated);
  ASSERT_TRUE(t.ok()) << t.status();
  absl::StatusOr<Topology> again = ParseTopologyJson(TopologyToJson(*t));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->device(0).efficiency, t->device(0).efficiency);
  EXPECT_DOUBLE_EQ(again->device(0).backward_efficiency[static_cast<int>(OpClass::kConv)], 0.8);
  // A file without the wide convolutions' class (written before it had one) gives them the thin ones' factor.
  EXPECT_DOUBLE_EQ(t->device(0).efficiency[static_cast<int>(OpClass::kWideThinConv)], 0.25);
  // And without the channels-last ones' class, the wide ones'.
  EXPECT_DOUBLE_EQ(t->device(0).efficiency[static_cast<int>(OpClass::kChannelsLastThinConv)], 0.25);
  absl::StatusOr<Topology> wide = ParseTopologyJson(R"({"devices": [{"preset": "A100",
      "efficiency": {"thin_conv": 0.25, "wide_thin_conv": 0.125}}]})");
  ASSERT_TRUE(wide.ok()) << wide.status();
  EXPECT_DOUBLE_EQ(wide->device(0).efficiency[static_cast<int>(OpClass::kChannelsLastThinConv)], 0.125);
  const std::pair<const char*, const char*> bad[] = {
      {R"({"fancy": 0.5})",
       "devices[0].efficiency.fancy: unknown operator class; the classes are gemm, thin_gemm, conv"},
      {R"({"conv": 0})", "expected a positive number, got 0"},
      {R"({"conv": "fast"})", "expected a positive number"},
      {R"([0.5])", "expected an object of operator classes"},
  };
  for (const auto& [efficiency, message] : bad) {
    const std::string text = absl::StrCat(R"({"devices": [{"preset": "A100", "efficiency": )", efficiency, "}]}");
    absl::StatusOr<Topology> parsed = ParseTopologyJson(text);
    ASSERT_FALSE(parsed.ok()) << efficiency;
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(parsed.status().message(), HasSubstr(message)) << efficiency;
  }
}

}  // namespace
}  // namespace placement
