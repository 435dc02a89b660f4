#include "graph/cluster_shape.h"

#include <map>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace placement {
namespace {

bool SameFigures(const Device& a, const Device& b) {
  return a.kind == b.kind && a.peak_flops == b.peak_flops && a.memory_bandwidth == b.memory_bandwidth &&
         a.memory_bytes == b.memory_bytes;
}

}  // namespace

absl::StatusOr<ClusterShape> ClusterShapeOf(const Topology& topology) {
  std::map<int32_t, std::vector<DeviceId>> by_host;
  for (DeviceId d = 0; d < topology.num_devices(); ++d) {
    if (topology.device(d).type == DeviceType::kAccelerator) by_host[topology.device(d).host].push_back(d);
  }
  if (by_host.empty()) {
    return absl::FailedPreconditionError(absl::StrCat("topology '", topology.name(), "' has no accelerators"));
  }
  const std::vector<DeviceId>& first = by_host.begin()->second;
  ClusterShape shape;
  shape.name = topology.name();
  shape.hosts = static_cast<int64_t>(by_host.size());
  shape.per_host = static_cast<int64_t>(first.size());
  shape.device = topology.device(first.front());
  for (const auto& [host, devices] : by_host) {
    if (static_cast<int64_t>(devices.size()) != shape.per_host) {
      return absl::UnimplementedError(absl::StrCat("topology '", topology.name(),
                                                   "': a layer-level plan needs hosts with equal numbers of "
                                                   "accelerators; host ", host, " has ", devices.size(), ", host ",
                                                   by_host.begin()->first, " has ", shape.per_host));
    }
    for (DeviceId d : devices) {
      if (!SameFigures(topology.device(d), shape.device)) {
        return absl::UnimplementedError(absl::StrCat("topology '", topology.name(), "': accelerators ",
                                                     shape.device.name, " and ", topology.device(d).name,
                                                     " differ; a layer-level plan needs one kind"));
      }
    }
  }
  if (first.size() > 1) {
    const Path& p = topology.path(first[0], first[1]);
    shape.intra_bandwidth = p.bandwidth, shape.intra_latency = p.latency;
  }
  if (by_host.size() > 1) {
    const Path& p = topology.path(first[0], std::next(by_host.begin())->second.front());
    shape.network_bandwidth = p.bandwidth, shape.network_latency = p.latency;
  }
  return shape;
}

}  // namespace placement
