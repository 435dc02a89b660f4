#include "graph/measured_presets.h"

#include <fstream>
#include <sstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "graph/calibration.h"
#include "graph/op_class.h"
#include "graph/topology_json.h"

namespace placement {
namespace {

using ::testing::HasSubstr;

const DevicePreset& Preset(const char* name) { return **FindDevicePreset(name); }

PresetRates Rates(const char* name, Precision p) {
  absl::StatusOr<PresetRates> r = RatesForPrecision(Preset(name), p);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? *r : PresetRates{};
}

Calibration CalibrationOf(const std::string& table) {
  std::ifstream in(std::string(PLACEMENT_SOURCE_DIR) + "/graph/device_data/" + table + ".json");
  std::stringstream text;
  text << in.rdbuf();
  absl::StatusOr<Calibration> c = ParseMeasurements(text.str());
  EXPECT_TRUE(c.ok()) << c.status();
  return c.ok() ? *c : Calibration{};
}

double Efficiency(const Device& d, OpClass c) { return d.efficiency[static_cast<int>(c)]; }

TEST(MeasuredPresets_, H100IsWhatCalibratingItsMeasurementsGives) {
  for (const auto& [precision, table] :
       {std::pair{Precision::kFp32, "h100_float32"}, std::pair{Precision::kAmpBf16, "h100_bfloat16"}}) {
    SCOPED_TRACE(table);
    const Calibration c = CalibrationOf(table);
    const PresetRates r = Rates("H100", precision);
    EXPECT_EQ(r.compute, FigureSource::kMeasured);
    EXPECT_EQ(r.overheads, FigureSource::kMeasured);
    EXPECT_DOUBLE_EQ(r.device.peak_flops, c.device.peak_flops);
    EXPECT_DOUBLE_EQ(r.device.memory_bandwidth, c.device.memory_bandwidth);
    EXPECT_DOUBLE_EQ(r.device.launch_overhead, c.device.launch_overhead);
    EXPECT_DOUBLE_EQ(r.device.host_op_overhead, c.device.host_op_overhead);
    EXPECT_EQ(r.device.efficiency, c.device.efficiency);
    EXPECT_EQ(r.device.backward_efficiency, c.device.backward_efficiency);
    EXPECT_EQ(r.device.kind, "H100");
    EXPECT_EQ(r.device.memory_bytes, Preset("H100").memory_bytes);  // the datasheet's capacity
    EXPECT_THAT(r.description, HasSubstr("measured"));
  }
}

TEST(MeasuredPresets_, OtherGpusScaleTheH100TableByTheDatasheetsRatios) {
  const Calibration fp32 = CalibrationOf("h100_float32");
  const PresetRates a100 = Rates("A100", Precision::kFp32);
  EXPECT_EQ(a100.compute, FigureSource::kDerived);
  EXPECT_EQ(a100.overheads, FigureSource::kMeasured);
  EXPECT_DOUBLE_EQ(a100.device.peak_flops, fp32.device.peak_flops * 19.5 / 67);
  EXPECT_DOUBLE_EQ(a100.device.memory_bandwidth, fp32.device.memory_bandwidth * 2039e9 / 3.35e12);
  EXPECT_DOUBLE_EQ(Efficiency(a100.device, OpClass::kGemm), Efficiency(fp32.device, OpClass::kGemm));
  // TF32 convolutions: the A100's TF32 is a larger share of its FP32 than the H100's.
  EXPECT_GT(Efficiency(a100.device, OpClass::kConv), Efficiency(fp32.device, OpClass::kConv));

  const Calibration bf16 = CalibrationOf("h100_bfloat16");
  EXPECT_DOUBLE_EQ(Rates("A100", Precision::kAmpBf16).device.peak_flops, bf16.device.peak_flops * 312 / 989);
  EXPECT_DOUBLE_EQ(Rates("V100", Precision::kAmpFp16).device.peak_flops, bf16.device.peak_flops * 125 / 989);
}

TEST(MeasuredPresets_, AGpuWithoutBf16OrTf32RunsThemAtFloat32Rates) {
  const Calibration fp32 = CalibrationOf("h100_float32");
  const PresetRates v100 = Rates("V100", Precision::kAmpBf16);
  EXPECT_DOUBLE_EQ(v100.device.peak_flops, fp32.device.peak_flops * 15.7 / 67);
  EXPECT_THAT(v100.description, HasSubstr("float32 measurements"));
  // No TF32: its convolutions are no faster than its FP32 matrix products.
  EXPECT_LE(Efficiency(v100.device, OpClass::kConv), Efficiency(v100.device, OpClass::kGemm));
}

TEST(MeasuredPresets_, EveryPresetHasFiguresAtEveryPrecision) {
  for (const DevicePreset& p : DevicePresets()) {
    for (Precision precision : {Precision::kFp32, Precision::kAmpBf16, Precision::kAmpFp16, Precision::kBf16,
                                Precision::kFp16}) {
      absl::StatusOr<PresetRates> r = RatesForPrecision(p, precision);
      ASSERT_TRUE(r.ok()) << p.name << " " << PrecisionName(precision) << ": " << r.status();
      EXPECT_GT(r->device.peak_flops, 0);
      EXPECT_GT(r->device.memory_bandwidth, 0);
      EXPECT_LE(r->device.peak_flops, p.peak_flops) << p.name;  // never past the datasheet's best
      EXPECT_EQ(r->device.kind, p.name);
      EXPECT_THAT(r->description, HasSubstr(std::string(p.name)));
    }
  }
  EXPECT_EQ(Rates("CPU", Precision::kFp32).compute, FigureSource::kDatasheet);
}

TEST(MeasuredPresets_, ShorthandWithAPrecisionGetsTheMeasuredFiguresAndSaysSo) {
  absl::StatusOr<Topology> measured = ParseTopologyShorthand("2xH100", Precision::kAmpBf16);
  ASSERT_TRUE(measured.ok()) << measured.status();
  EXPECT_DOUBLE_EQ(measured->device(1).peak_flops, CalibrationOf("h100_bfloat16").device.peak_flops);
  EXPECT_EQ(measured->device(1).name, "gpu1");
  EXPECT_THAT(measured->description(), HasSubstr("H100 at amp_bf16: measured"));
  // Without one: the datasheet (what layer-level transformer plans are fitted against).
  absl::StatusOr<Topology> datasheet = ParseTopologyShorthand("2xH100");
  ASSERT_TRUE(datasheet.ok()) << datasheet.status();
  EXPECT_DOUBLE_EQ(datasheet->device(0).peak_flops, 989e12);
  EXPECT_THAT(datasheet->description(), HasSubstr("datasheet"));
}

TEST(MeasuredPresets_, ATopologyFilesPresetDevicesGetTheFiguresAndTheirOwnFiguresStay) {
  absl::StatusOr<Topology> file = ParseTopologyJson(
      R"({"devices": [{"name": "a", "preset": "H100"}, {"name": "b", "preset": "H100", "kind": "H100-slow",
          "peak_flops": "100TFLOPS"}], "links": {"bandwidth": "100GB/s", "latency": "1us"}})");
  ASSERT_TRUE(file.ok()) << file.status();
  absl::StatusOr<Topology> t = WithPresetFigures(*file, Precision::kFp32, "cluster.json");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_DOUBLE_EQ(t->device(0).peak_flops, CalibrationOf("h100_float32").device.peak_flops);
  EXPECT_DOUBLE_EQ(t->device(1).peak_flops, 100e12);  // its own figure, under its own kind
  EXPECT_THAT(t->description(), HasSubstr("H100 at fp32: measured"));
  EXPECT_THAT(t->description(), HasSubstr("the figures of cluster.json for its other devices"));
  EXPECT_DOUBLE_EQ(t->path(0, 1).bandwidth, file->path(0, 1).bandwidth);
}

TEST(MeasuredPresets_, PresetsListsWhereEachFigureComesFrom) {
  const std::string text = DescribePresetRates();
  EXPECT_THAT(text, HasSubstr("[compute measured, bandwidth measured, overheads measured] H100 at fp32"));
  EXPECT_THAT(text, HasSubstr("[compute derived, bandwidth derived, overheads measured] A100 at amp_bf16"));
  EXPECT_THAT(text, HasSubstr("[compute datasheet, bandwidth datasheet, overheads datasheet] CPU"));
}

}  // namespace
}  // namespace placement
