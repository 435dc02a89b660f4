// A device calibrated from measured benchmark layers: the efficiencies derived from them, and measurements files
// from another machine read, or refused with the key that is wrong.
#include "graph/calibration.h"

#include <cmath>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "graph/cost_model.h"
#include "graph/op_class.h"

namespace placement {
namespace {

using ::testing::HasSubstr;

// A 100 GFLOP/s, 10 GB/s device with 1 us launches: a GEMM doing 1 GFLOP in 20 ms (half its roofline of 10 ms),
// with a 41 ms backward of two operators (2 x 10 ms modelled / 0.5 forward efficiency over 41 - 2 x 1e-3 ms).
constexpr char kMeasurements[] = R"({
  "device": {"name": "NVIDIA Test GPU", "kind": "TestGPU", "memory_bytes": 8e9},
  "torch": "2.11.0", "peak_flops": 100e9, "memory_bandwidth": 10e9, "launch_overhead": 1e-6,
  "lines": [
    {"op_class": "gemm", "layer": "linear", "flops": 1e9, "bytes": 1e6, "forward_seconds": 0.020001,
     "backward_seconds": 0.041002, "backward_ops": 2},
    {"op_class": "conv", "layer": "depthwise", "flops": 1e6, "bytes": 1e6, "forward_seconds": 0.000401},
    {"op_class": "transcendental", "layer": "sigmoid", "flops": 4e6, "bytes": 8e6, "forward_seconds": 0.004001}
  ]})";

TEST(Calibration, EfficienciesAreTheRooflineOverTheMeasuredTimeLessTheLaunch) {
  absl::StatusOr<Calibration> c = ParseMeasurements(kMeasurements);
  ASSERT_TRUE(c.ok()) << c.status();
  const Device& d = c->device;
  EXPECT_EQ(d.kind, "TestGPU");
  EXPECT_EQ(d.name, "testgpu0");
  EXPECT_EQ(d.type, DeviceType::kAccelerator);
  EXPECT_EQ(c->source, "NVIDIA Test GPU, PyTorch 2.11.0");
  EXPECT_NEAR(d.efficiency[static_cast<int>(OpClass::kGemm)], 0.5, 1e-9);
  EXPECT_NEAR(d.backward_efficiency[static_cast<int>(OpClass::kGemm)], 0.02 / 0.5 / 0.041, 1e-9);
  // 1 FLOP per byte: a thin convolution, memory-bound at 0.1 ms of a 0.4 ms measurement.
  EXPECT_EQ(c->lines[1].op_class, "thin_conv");
  EXPECT_NEAR(d.efficiency[static_cast<int>(OpClass::kThinConv)], 0.25, 1e-9);
  EXPECT_NEAR(d.efficiency[static_cast<int>(OpClass::kTranscendental)], 0.2, 1e-9);
  EXPECT_EQ(d.efficiency[static_cast<int>(OpClass::kPooling)], 1.0);  // no line: the plain roofline
}

// Three dense convolutions on a 100 GFLOP/s, 10 GB/s device with 1 us launches: 3x3 ones at 100 and 1000 FLOPs per
// byte reaching a quarter of their 10 ms roofline and all of it, and a 7x7 stem at 200 reaching a tenth.
constexpr char kConvolutions[] = R"({
  "device": {"name": "NVIDIA Test GPU", "kind": "TestGPU", "memory_bytes": 8e9},
  "peak_flops": 100e9, "memory_bandwidth": 10e9, "launch_overhead": 1e-6,
  "lines": [
    {"op_class": "conv", "layer": "narrow", "flops": 1e9, "bytes": 1e7, "window": 9, "forward_seconds": 0.040001},
    {"op_class": "conv", "layer": "wide", "flops": 1e9, "bytes": 1e6, "window": 9, "forward_seconds": 0.010001},
    {"op_class": "conv", "layer": "stem", "flops": 1e9, "bytes": 5e6, "window": 49, "forward_seconds": 0.100001}
  ]})";

// A GPU's convolutions run faster the more they reuse each byte: the cost model's rate for a convolution follows
// the narrow-window layers measured at its intensity, not their pooled factor; the stem's three channels, not its
// intensity, make it slow, so it is neither on the curve nor priced by it. A CPU keeps one factor per class.
TEST(Calibration, AGpusConvolutionsFollowTheRateMeasuredAtTheirIntensity) {
  absl::StatusOr<Calibration> c = ParseMeasurements(kConvolutions);
  ASSERT_TRUE(c.ok()) << c.status();
  const Device& d = c->device;
  EXPECT_NEAR(d.efficiency[static_cast<int>(OpClass::kConv)], 30.0 / 150, 1e-9);  // pooled over all three
  ASSERT_EQ(d.intensity_curves[static_cast<int>(OpClass::kConv)].size, 2);
  const auto seconds = [&d](double bytes, int32_t window) {
    return KernelSeconds(OpClass::kConv, 1e9, bytes, d, /*backward=*/false, window) - d.launch_overhead;
  };
  EXPECT_NEAR(seconds(1e7, 9), 0.040, 1e-9);  // each measured layer as measured
  EXPECT_NEAR(seconds(1e6, 9), 0.010, 1e-9);
  EXPECT_NEAR(seconds(5e6, 49), 0.050, 1e-9) << "a wide window takes the class's factor";
  // Between the points the rate moves geometrically with the intensity: 25 and 100 GFLOP/s give 50 at 316.
  EXPECT_NEAR(seconds(1e9 / std::sqrt(1e5), 9), 0.020, 1e-9);
  EXPECT_NEAR(seconds(5e5, 9), 0.010, 1e-9) << "past the last point its rate holds";
  EXPECT_NEAR(seconds(2e7, 1), 0.080, 1e-9) << "below the first the rate falls with the intensity";

  std::string cpu = kConvolutions;
  cpu.replace(cpu.find("\"kind\": \"TestGPU\""), 17, "\"kind\": \"cpu\"");
  absl::StatusOr<Calibration> on_cpu = ParseMeasurements(cpu);
  ASSERT_TRUE(on_cpu.ok()) << on_cpu.status();
  EXPECT_EQ(on_cpu->device.type, DeviceType::kCpu);
  EXPECT_EQ(on_cpu->device.intensity_curves[static_cast<int>(OpClass::kConv)].size, 0);
}

// A kind that ends in a digit is kept apart from the device's number: "h200_0", not "h2000".
TEST(Calibration, ADeviceOfAKindEndingInADigitIsNamedApartFromItsNumber) {
  std::string text = kMeasurements;
  text.replace(text.find("TestGPU"), 7, "H200");
  absl::StatusOr<Calibration> c = ParseMeasurements(text);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->device.name, "h200_0");
}

// Two depthwise layers of the same intensity, 3x3 and 5x5: the 5x5 one's backward (10 ms where the 3x3 one's
// takes 2 x its 0.4 ms forward) sets a class of its own. Measurements without a wide layer leave it as the thin.
TEST(Calibration, AWideDepthwiseLayerHasAClassOfItsOwn) {
  std::string text = kMeasurements;
  const std::string thin = R"("layer": "depthwise", "flops": 1e6, "bytes": 1e6, "forward_seconds": 0.000401})";
  text.replace(text.find(thin), thin.size(),
               R"("layer": "depthwise 3x3", "flops": 1e6, "bytes": 1e6, "forward_seconds": 0.000401,
                  "backward_seconds": 0.000802, "backward_ops": 2, "window": 9},
                  {"op_class": "conv", "layer": "depthwise 5x5", "flops": 1e6, "bytes": 1e6,
                   "forward_seconds": 0.000401, "backward_seconds": 0.010002, "backward_ops": 2, "window": 25})");
  absl::StatusOr<Calibration> c = ParseMeasurements(text);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->lines[1].op_class, "thin_conv");
  EXPECT_EQ(c->lines[2].op_class, "wide_thin_conv");
  const int thin_class = static_cast<int>(OpClass::kThinConv), wide = static_cast<int>(OpClass::kWideThinConv);
  EXPECT_NEAR(c->device.efficiency[wide], 0.25, 1e-9);
  EXPECT_NEAR(c->device.backward_efficiency[thin_class], 2 * 1e-4 / 0.25 / 0.0008, 1e-9);
  EXPECT_NEAR(c->device.backward_efficiency[wide], 2 * 1e-4 / 0.25 / 0.01, 1e-9);
  absl::StatusOr<Calibration> again = ParseMeasurements(MeasurementsToJson(*c));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->lines[2].window, 25);
  EXPECT_EQ(again->device.backward_efficiency[wide], c->device.backward_efficiency[wide]);

  absl::StatusOr<Calibration> without = ParseMeasurements(kMeasurements);
  ASSERT_TRUE(without.ok()) << without.status();
  EXPECT_EQ(without->device.efficiency[wide], without->device.efficiency[thin_class]);
  EXPECT_EQ(without->device.backward_efficiency[wide], without->device.backward_efficiency[thin_class]);
}

// The eval-mode batch normalization layer sets its own class from its own time, and counts among the
// normalizations as it did before it had one: a normalization layer at half its roofline and the batch
// normalization at all of it pool to 2/3 either way.
TEST(Calibration, TheEvalModeBatchNormalizationSetsItsClassAndCountsAmongTheNormalizations) {
  const std::string lines = R"(
    {"op_class": "normalization", "layer": "softmax", "flops": 0, "bytes": 1e6, "forward_seconds": 0.000201},
    {"op_class": "%s", "layer": "batchnorm", "flops": 0, "bytes": 1e6, "forward_seconds": 0.000101})";
  std::string text = kMeasurements;
  const size_t end = text.rfind(']');
  const int norm = static_cast<int>(OpClass::kNormalization), eval = static_cast<int>(OpClass::kInferenceBatchNorm);
  absl::StatusOr<Calibration> own = ParseMeasurements(
      std::string(text).insert(end, absl::StrCat(",", absl::StrReplaceAll(lines, {{"%s", "inference_batch_norm"}}))));
  ASSERT_TRUE(own.ok()) << own.status();
  EXPECT_NEAR(own->device.efficiency[eval], 1.0, 1e-9);
  EXPECT_NEAR(own->device.efficiency[norm], 2.0 / 3, 1e-9);
  absl::StatusOr<Calibration> before = ParseMeasurements(
      std::string(text).insert(end, absl::StrCat(",", absl::StrReplaceAll(lines, {{"%s", "normalization"}}))));
  ASSERT_TRUE(before.ok()) << before.status();
  EXPECT_NEAR(before->device.efficiency[norm], 2.0 / 3, 1e-9);
  EXPECT_EQ(before->device.efficiency[eval], before->device.efficiency[norm]);
}

// The training-mode batch normalization sets a class of its own and stays out of the normalizations' figures;
// measurements without it give the class the normalizations' factors.
TEST(Calibration, TheTrainingModeBatchNormalizationSetsItsOwnClass) {
  const std::string lines = R"(
    {"op_class": "normalization", "layer": "softmax", "flops": 0, "bytes": 1e6, "forward_seconds": 0.000201,
     "backward_seconds": 0.000401, "backward_ops": 1},
    {"op_class": "training_batch_norm", "layer": "batchnorm train", "flops": 0, "bytes": 1e6,
     "forward_seconds": 0.000401, "backward_seconds": 0.000601, "backward_ops": 1})";
  std::string text = kMeasurements;
  const size_t end = text.rfind(']');
  const int norm = static_cast<int>(OpClass::kNormalization), train = static_cast<int>(OpClass::kTrainingBatchNorm);
  absl::StatusOr<Calibration> own = ParseMeasurements(std::string(text).insert(end, absl::StrCat(",", lines)));
  ASSERT_TRUE(own.ok()) << own.status();
  EXPECT_NEAR(own->device.efficiency[train], 0.25, 1e-9);  // a quarter of the roofline's 1e6 bytes at 10 GB/s
  EXPECT_NEAR(own->device.backward_efficiency[train], 2.0 / 1.5, 1e-9);  // backward 1.5 times its forward
  EXPECT_NEAR(own->device.efficiency[norm], 0.5, 1e-9);
  absl::StatusOr<Calibration> without = ParseMeasurements(kMeasurements);
  ASSERT_TRUE(without.ok()) << without.status();
  EXPECT_EQ(without->device.efficiency[train], without->device.efficiency[norm]);
  EXPECT_EQ(without->device.backward_efficiency[train], without->device.backward_efficiency[norm]);
}

// A channels-last depthwise layer (its backward half the contiguous one's) sets a class of its own, and keeps its
// layout through a measurements file. Measurements without one leave the class as the wide layers.
TEST(Calibration, AChannelsLastDepthwiseLayerHasAClassOfItsOwn) {
  std::string text = kMeasurements;
  const std::string thin = R"("layer": "depthwise", "flops": 1e6, "bytes": 1e6, "forward_seconds": 0.000401})";
  text.replace(text.find(thin), thin.size(),
               R"("layer": "depthwise 7x7", "flops": 1e6, "bytes": 1e6, "forward_seconds": 0.000401,
                  "backward_seconds": 0.010002, "backward_ops": 2, "window": 49},
                  {"op_class": "conv", "layer": "depthwise 7x7 channels-last", "flops": 1e6, "bytes": 1e6,
                   "forward_seconds": 0.000401, "backward_seconds": 0.005002, "backward_ops": 2, "window": 49,
                   "channels_last": true})");
  absl::StatusOr<Calibration> c = ParseMeasurements(text);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->lines[1].op_class, "wide_thin_conv");
  EXPECT_EQ(c->lines[2].op_class, "channels_last_thin_conv");
  const int wide = static_cast<int>(OpClass::kWideThinConv), last = static_cast<int>(OpClass::kChannelsLastThinConv);
  EXPECT_NEAR(c->device.backward_efficiency[wide], 2 * 1e-4 / 0.25 / 0.01, 1e-9);
  EXPECT_NEAR(c->device.backward_efficiency[last], 2 * 1e-4 / 0.25 / 0.005, 1e-9);
  absl::StatusOr<Calibration> again = ParseMeasurements(MeasurementsToJson(*c));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(again->lines[2].channels_last);
  EXPECT_FALSE(again->lines[1].channels_last);
  EXPECT_EQ(again->device.backward_efficiency[last], c->device.backward_efficiency[last]);

  text.replace(text.find(R"("channels_last": true)"), 21, R"("channels_last": 1)");
  absl::StatusOr<Calibration> bad = ParseMeasurements(text);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("lines[2].channels_last: expected true or false, got 1"));

  absl::StatusOr<Calibration> without = ParseMeasurements(kMeasurements);
  ASSERT_TRUE(without.ok()) << without.status();
  EXPECT_EQ(without->device.efficiency[last], without->device.efficiency[wide]);
  EXPECT_EQ(without->device.backward_efficiency[last], without->device.backward_efficiency[wide]);
}

// Three convolutions whose backward takes twice their forward, and a fourth timed in a slow mode (six times): the
// backward factor is the median layer's, 1, where pooling the four would give 2 x 4 / (2 + 2 + 2 + 6) = 0.67.
TEST(Calibration, OneLayerInASlowModeLeavesTheBackwardFactor) {
  std::string lines;
  for (const double backward : {0.02, 0.02, 0.06, 0.02}) {
    absl::StrAppend(&lines, lines.empty() ? "" : ",",
                    R"({"op_class": "conv", "layer": "conv", "flops": 1e9, "bytes": 1e6, "forward_seconds": 0.01,
                        "backward_ops": 2, "backward_seconds": )",
                    backward, "}");
  }
  absl::StatusOr<Calibration> c = ParseMeasurements(absl::StrCat(
      R"({"device": {"kind": "TestGPU", "memory_bytes": 8e9}, "peak_flops": 100e9, "memory_bandwidth": 10e9,
          "launch_overhead": 0, "lines": [)",
      lines, "]}"));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_NEAR(c->device.backward_efficiency[static_cast<int>(OpClass::kConv)], 1.0, 1e-9);
  EXPECT_NEAR(MedianRatio({4, 1, 9}), 4, 1e-12);
  EXPECT_NEAR(MedianRatio({1, 16, 4, 9}), 6, 1e-12);  // the middle two's geometric mean
  EXPECT_EQ(MedianRatio({}), 0);
}

TEST(Calibration, SavedMeasurementsReadBackToTheSameDevice) {
  absl::StatusOr<Calibration> first = ParseMeasurements(kMeasurements);
  ASSERT_TRUE(first.ok()) << first.status();
  absl::StatusOr<Calibration> again = ParseMeasurements(MeasurementsToJson(*first));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->source, "NVIDIA Test GPU, PyTorch 2.11.0");
  EXPECT_EQ(again->device.kind, first->device.kind);
  EXPECT_EQ(again->device.memory_bytes, first->device.memory_bytes);
  EXPECT_EQ(again->device.launch_overhead, first->device.launch_overhead);
  ASSERT_EQ(again->lines.size(), first->lines.size());
  EXPECT_EQ(again->lines[1].op_class, "thin_conv");  // the refined class reads back as itself
  for (int c = 0; c < kNumOpClasses; ++c) {
    EXPECT_EQ(again->device.efficiency[c], first->device.efficiency[c]) << OpClassName(static_cast<OpClass>(c));
    EXPECT_EQ(again->device.backward_efficiency[c], first->device.backward_efficiency[c]);
  }
}

TEST(Calibration, MalformedMeasurementsNameWhatIsWrong) {
  struct Case {
    std::string text;
    std::string message;
  };
  const Case cases[] = {
      {"[]", "must be a JSON object"},
      {"{\"peak_flops\": 1}", "\"device\" object"},
      {R"({"device": {"kind": "X", "memory_bytes": 1}, "peak_flops": 1e9, "launch_overhead": 0, "lines": []})",
       "memory_bandwidth: is required"},
      {R"({"device": {"kind": "X", "memory_bytes": 1}, "peak_flops": 1e9, "memory_bandwidth": 1e9,
           "launch_overhead": 0, "lines": []})",
       "non-empty \"lines\""},
      {R"({"device": {"kind": "X", "memory_bytes": 1}, "peak_flops": 1e9, "memory_bandwidth": 1e9,
           "launch_overhead": 0, "lines": [{"op_class": "warp", "flops": 1, "bytes": 1, "forward_seconds": 1}]})",
       "unknown class 'warp'"},
      {R"({"device": {"kind": "X", "memory_bytes": 1}, "peak_flops": 1e9, "memory_bandwidth": 1e9,
           "launch_overhead": 0, "lines": [{"op_class": "gemm", "flops": 1, "bytes": 1}]})",
       "lines[0].forward_seconds: is required"},
      {R"({"device": {"kind": "X", "memory_bytes": 1}, "peak_flops": 1e9, "memory_bandwidth": 1e9,
           "launch_overhead": -1, "lines": [{"op_class": "gemm", "flops": 1, "bytes": 1, "forward_seconds": 1}]})",
       "launch_overhead: must not be negative"},
      {R"({"device": {"kind": "X", "memory_bytes": -8}, "peak_flops": 1e9, "memory_bandwidth": 1e9,
           "launch_overhead": 0, "lines": [{"op_class": "gemm", "flops": 1, "bytes": 1, "forward_seconds": 1}]})",
       "device.memory_bytes: must not be negative"},
      {R"({"device": {"kind": "X", "memory_bytes": 1}, "peak_flops": 0, "memory_bandwidth": 1e9,
           "launch_overhead": 0, "lines": [{"op_class": "gemm", "flops": 1, "bytes": 1, "forward_seconds": 1}]})",
       "must be positive"},
      {"{\"device\": ", "the measurements"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<Calibration> parsed = ParseMeasurements(c.text);
    ASSERT_FALSE(parsed.ok()) << c.text;
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument) << c.text;
    EXPECT_THAT(parsed.status().message(), HasSubstr(c.message)) << c.text;
  }
}

}  // namespace
}  // namespace placement

namespace placement {
namespace {

// Three timings of the same device, one of them in a slow spell (every layer 3x, the GEMM peak at a third): the
// median of each figure is the typical timing's, and the efficiencies are derived from those.
TEST(Calibration, SeveralTimingsTakeEachFiguresMedian) {
  absl::StatusOr<Calibration> typical = ParseMeasurements(kMeasurements);
  ASSERT_TRUE(typical.ok()) << typical.status();
  Calibration slow = *typical, fast = *typical;
  slow.device.peak_flops /= 3;
  for (CalibrationLine& line : slow.lines) line.forward_seconds *= 3, line.backward_seconds *= 3;
  for (CalibrationLine& line : fast.lines) line.forward_seconds *= 0.9;
  absl::StatusOr<Calibration> merged = MedianOfCalibrations({slow, *typical, fast});
  ASSERT_TRUE(merged.ok()) << merged.status();
  EXPECT_DOUBLE_EQ(merged->device.peak_flops, typical->device.peak_flops);
  EXPECT_DOUBLE_EQ(merged->lines[0].forward_seconds, typical->lines[0].forward_seconds);
  EXPECT_DOUBLE_EQ(merged->lines[0].backward_seconds, typical->lines[0].backward_seconds);
  EXPECT_DOUBLE_EQ(merged->device.efficiency[static_cast<int>(OpClass::kGemm)],
                   typical->device.efficiency[static_cast<int>(OpClass::kGemm)]);
  EXPECT_THAT(merged->source, HasSubstr("median of 3 timings"));
  // One timing alone is itself.
  absl::StatusOr<Calibration> one = MedianOfCalibrations({slow});
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_DOUBLE_EQ(one->lines[0].forward_seconds, slow.lines[0].forward_seconds);
}

TEST(Calibration, TimingsOfOtherLayersAreNotMerged) {
  absl::StatusOr<Calibration> a = ParseMeasurements(kMeasurements);
  ASSERT_TRUE(a.ok()) << a.status();
  Calibration renamed = *a, shorter = *a, untimed_backward = *a;
  renamed.lines[2].layer = "tanh";
  shorter.lines.pop_back();
  untimed_backward.lines[0].backward_ops = 0;
  untimed_backward.lines[0].backward_seconds = 0;
  absl::StatusOr<Calibration> r = MedianOfCalibrations({*a, renamed});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("measurements 1, layer 2 'tanh' ("));
  EXPECT_THAT(r.status().message(), HasSubstr("not measurements 0's 'sigmoid' ("));
  r = MedianOfCalibrations({*a, shorter});
  EXPECT_THAT(r.status().message(), HasSubstr("measurements 1 are of TestGPU with 2 layers"));
  r = MedianOfCalibrations({*a, untimed_backward});
  EXPECT_THAT(r.status().message(), HasSubstr("layer 0 'linear'"));
  EXPECT_THAT(r.status().message(), HasSubstr("0 backward operators"));
  EXPECT_EQ(MedianOfCalibrations({}).status().code(), absl::StatusCode::kInvalidArgument);
}

// A layer's backward too short to tell from a timing's noise comes out at 0 in that timing (its time less the
// forward's, clamped): the median is of the timings that timed it. On a shared host's two threads a small
// Linear's backward came out at 0 in one of three timings, and calibrate refused all three.
TEST(Calibration, ABackwardClampedToZeroInOneTimingTakesTheOthers) {
  absl::StatusOr<Calibration> a = ParseMeasurements(kMeasurements);
  ASSERT_TRUE(a.ok()) << a.status();
  Calibration slower = *a, clamped = *a;
  slower.lines[0].backward_seconds = 3 * a->lines[0].backward_seconds;
  clamped.lines[0].backward_seconds = 0;
  absl::StatusOr<Calibration> merged = MedianOfCalibrations({*a, clamped, slower});
  ASSERT_TRUE(merged.ok()) << merged.status();
  // The median of the two that timed it (their geometric mean), not 0 or the middle of three.
  EXPECT_NEAR(merged->lines[0].backward_seconds, std::sqrt(3.0) * a->lines[0].backward_seconds,
              1e-9 * a->lines[0].backward_seconds);
  absl::StatusOr<Calibration> none = MedianOfCalibrations({clamped, clamped});
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_EQ(none->lines[0].backward_seconds, 0);
}

}  // namespace
}  // namespace placement
