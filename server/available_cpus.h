// How many CPUs this process may use: the CPUs it may be scheduled on (its affinity mask) and, inside a
// container, the CPU limit of its cgroup (Kubernetes' resources.limits.cpu, docker --cpus), rounded up. A
// server that sized its pool by the node's cores would run many more threads than its quota lets run at once.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"

namespace placement::server {

// The CPU limit a cgroup file states, rounded up: cgroup v2's cpu.max ("max 100000", "250000 100000"), or
// cgroup v1's cpu.cfs_quota_us and cpu.cfs_period_us (quota -1: none). nullopt when there is no limit or the
// text is not understood.
std::optional<int32_t> CpuLimitFromCgroupV2(absl::string_view cpu_max);
std::optional<int32_t> CpuLimitFromCgroupV1(absl::string_view quota_us, absl::string_view period_us);

// The smaller of the affinity mask's CPUs and the cgroup limit (v2 at /sys/fs/cgroup, else v1), at least 1.
// `cgroup_root` is for tests.
int32_t AvailableCpus(const std::string& cgroup_root = "/sys/fs/cgroup");

}  // namespace placement::server
