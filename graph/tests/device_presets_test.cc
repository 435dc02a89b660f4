#include "graph/device_presets.h"

#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_split.h"

namespace placement {
namespace {

using ::testing::HasSubstr;

TEST(DevicePresetTest, EveryPresetCitesASourceAndHasPositiveFigures) {
  ASSERT_GE(DevicePresets().size(), 6u);
  for (const DevicePreset& p : DevicePresets()) {
    SCOPED_TRACE(std::string(p.name));
    EXPECT_FALSE(p.model.empty());
    EXPECT_FALSE(p.flops_basis.empty());
    EXPECT_THAT(std::string(p.citation), HasSubstr("https://"));
    EXPECT_GT(p.peak_flops, 0);
    EXPECT_GT(p.memory_bandwidth, 0);
    EXPECT_GT(p.memory_bytes, 0);
    EXPECT_GT(p.launch_overhead, 0);
    EXPECT_GT(p.intra_bandwidth, 0);
    EXPECT_GT(p.intra_latency, 0);
    EXPECT_GT(p.network_bandwidth, 0);
    EXPECT_GT(p.network_latency, 0);
    EXPECT_FALSE(p.intra_link.empty());
    EXPECT_FALSE(p.network.empty());
  }
}

TEST(DevicePresetTest, FiguresMatchThePublishedDatasheets) {
  struct Expected {
    const char* name;
    double flops, bandwidth, memory, link;
  };
  for (const Expected& e : {Expected{"H100", 989e12, 3.35e12, 80e9, 450e9},
                            Expected{"A100", 312e12, 2039e9, 80e9, 300e9}, Expected{"V100", 125e12, 900e9, 32e9, 150e9},
                            Expected{"P100", 21.2e12, 732e9, 16e9, 80e9}, Expected{"T4", 65e12, 320e9, 16e9, 16e9}}) {
    absl::StatusOr<const DevicePreset*> p = FindDevicePreset(e.name);
    ASSERT_TRUE(p.ok()) << p.status();
    EXPECT_DOUBLE_EQ((*p)->peak_flops, e.flops) << e.name;
    EXPECT_DOUBLE_EQ((*p)->memory_bandwidth, e.bandwidth) << e.name;
    EXPECT_EQ((*p)->memory_bytes, static_cast<int64_t>(e.memory)) << e.name;
    EXPECT_DOUBLE_EQ((*p)->intra_bandwidth, e.link) << e.name;
    EXPECT_EQ((*p)->type, DeviceType::kAccelerator) << e.name;
  }
}

TEST(DevicePresetTest, CpuPresetIsAnEpycHostWithItsDerivedPeak) {
  absl::StatusOr<const DevicePreset*> cpu = FindDevicePreset("cpu");
  ASSERT_TRUE(cpu.ok()) << cpu.status();
  EXPECT_EQ((*cpu)->type, DeviceType::kCpu);
  EXPECT_DOUBLE_EQ((*cpu)->peak_flops, 64 * 2.45e9 * 32);
  EXPECT_DOUBLE_EQ((*cpu)->memory_bandwidth, 8 * 25.6e9);
  EXPECT_EQ((*cpu)->memory_bytes, int64_t{512} << 30);
  EXPECT_DOUBLE_EQ((*cpu)->launch_overhead, 1e-6);
}

TEST(DevicePresetTest, LookupIgnoresCase) {
  for (const char* name : {"h100", "H100", "a100", "Cpu", "t4"}) {
    EXPECT_TRUE(FindDevicePreset(name).ok()) << name;
  }
  EXPECT_EQ((*FindDevicePreset("v100"))->name, "V100");
}

TEST(DevicePresetTest, UnknownPresetIsNotFoundListingTheKnownOnes) {
  absl::StatusOr<const DevicePreset*> p = FindDevicePreset("H1000");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(p.status().message(), HasSubstr("'H1000'"));
  EXPECT_THAT(p.status().message(), HasSubstr("H100, A100, V100, P100, T4, CPU"));
}

TEST(DevicePresetTest, MakeDeviceCopiesTheFiguresAndUsesThePresetNameAsKind) {
  const DevicePreset& h100 = **FindDevicePreset("H100");
  Device d = MakeDevice(h100, "gpu7");
  EXPECT_EQ(d.name, "gpu7");
  EXPECT_EQ(d.kind, "H100");
  EXPECT_EQ(d.type, DeviceType::kAccelerator);
  EXPECT_DOUBLE_EQ(d.peak_flops, h100.peak_flops);
  EXPECT_DOUBLE_EQ(d.memory_bandwidth, h100.memory_bandwidth);
  EXPECT_EQ(d.memory_bytes, h100.memory_bytes);
  EXPECT_DOUBLE_EQ(d.launch_overhead, 5e-6);
}

TEST(DevicePresetTest, DescriptionHasOneLinePerPresetWithItsSourceAndSaysWhatIsPublished) {
  const std::string text = DescribeDevicePresets();
  std::vector<std::string> lines = absl::StrSplit(text, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), DevicePresets().size() + 1);
  EXPECT_THAT(lines.back(), HasSubstr("The lines above are the vendors' datasheets"));
  EXPECT_THAT(lines.back(), HasSubstr("placectl calibrate"));
  EXPECT_THAT(lines[0], HasSubstr("989 TFLOP/s"));
  EXPECT_THAT(lines[0], HasSubstr("80 GB"));
  EXPECT_THAT(lines[0], HasSubstr("Source: NVIDIA H100"));
}

}  // namespace
}  // namespace placement
