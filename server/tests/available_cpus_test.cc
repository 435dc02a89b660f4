// The worker pool's default size: the cgroup's CPU limit and the affinity mask, whichever is smaller.
#include "server/available_cpus.h"

#include <filesystem>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>

#include "server/tests/test_util.h"

namespace placement::server {
namespace {

TEST(AvailableCpus, CgroupV2LimitRoundsUp) {
  EXPECT_EQ(CpuLimitFromCgroupV2("200000 100000\n"), 2);
  EXPECT_EQ(CpuLimitFromCgroupV2("250000 100000"), 3);
  EXPECT_EQ(CpuLimitFromCgroupV2("50000 100000"), 1);
  EXPECT_EQ(CpuLimitFromCgroupV2("max 100000\n"), std::nullopt);
  EXPECT_EQ(CpuLimitFromCgroupV2(""), std::nullopt);
  EXPECT_EQ(CpuLimitFromCgroupV2("garbage"), std::nullopt);
}

TEST(AvailableCpus, CgroupV1QuotaOverPeriod) {
  EXPECT_EQ(CpuLimitFromCgroupV1("150000\n", "100000\n"), 2);
  EXPECT_EQ(CpuLimitFromCgroupV1("-1", "100000"), std::nullopt);
  EXPECT_EQ(CpuLimitFromCgroupV1("", ""), std::nullopt);
}

TEST(AvailableCpus, ALimitBelowTheCoresWinsAndNoneLeavesTheCores) {
  testing::TempDir dir;
  const int32_t cores = AvailableCpus(dir.path());  // no cgroup files: the affinity mask
  EXPECT_GE(cores, 1);
  EXPECT_LE(cores, static_cast<int32_t>(std::max(1u, std::thread::hardware_concurrency())));
  std::ofstream(dir.path() + "/cpu.max") << "100000 100000\n";
  EXPECT_EQ(AvailableCpus(dir.path()), 1);
  std::ofstream(dir.path() + "/cpu.max") << "max 100000\n";
  EXPECT_EQ(AvailableCpus(dir.path()), cores);
  std::filesystem::create_directories(dir.path() + "/cpu");
  std::ofstream(dir.path() + "/cpu/cpu.cfs_quota_us") << "100000\n";
  std::ofstream(dir.path() + "/cpu/cpu.cfs_period_us") << "100000\n";
  EXPECT_EQ(AvailableCpus(dir.path()), 1);  // v1 when v2 states no limit
}

}  // namespace
}  // namespace placement::server
