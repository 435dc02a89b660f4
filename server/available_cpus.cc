#include "server/available_cpus.h"

#include <sched.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <thread>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"

namespace placement::server {
namespace {

std::optional<int32_t> Ratio(double quota, double period) {
  if (quota <= 0 || period <= 0) return std::nullopt;
  return std::max<int32_t>(1, static_cast<int32_t>(std::ceil(quota / period)));
}

std::string ReadSmallFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

int32_t AffinityCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
  return static_cast<int32_t>(std::max(1u, std::thread::hardware_concurrency()));
}

}  // namespace

std::optional<int32_t> CpuLimitFromCgroupV2(absl::string_view cpu_max) {
  std::vector<absl::string_view> parts = absl::StrSplit(absl::StripAsciiWhitespace(cpu_max), ' ', absl::SkipEmpty());
  double quota = 0;
  double period = 0;
  if (parts.size() != 2 || parts[0] == "max" || !absl::SimpleAtod(parts[0], &quota) ||
      !absl::SimpleAtod(parts[1], &period)) {
    return std::nullopt;
  }
  return Ratio(quota, period);
}

std::optional<int32_t> CpuLimitFromCgroupV1(absl::string_view quota_us, absl::string_view period_us) {
  double quota = 0;
  double period = 0;
  if (!absl::SimpleAtod(absl::StripAsciiWhitespace(quota_us), &quota) ||
      !absl::SimpleAtod(absl::StripAsciiWhitespace(period_us), &period)) {
    return std::nullopt;
  }
  return Ratio(quota, period);
}

int32_t AvailableCpus(const std::string& cgroup_root) {
  std::optional<int32_t> limit = CpuLimitFromCgroupV2(ReadSmallFile(cgroup_root + "/cpu.max"));
  if (!limit) {
    limit = CpuLimitFromCgroupV1(ReadSmallFile(cgroup_root + "/cpu/cpu.cfs_quota_us"),
                                 ReadSmallFile(cgroup_root + "/cpu/cpu.cfs_period_us"));
  }
  const int32_t cpus = AffinityCpus();
  return limit ? std::min(cpus, *limit) : cpus;
}

}  // namespace placement::server
