#include "graph/topology.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"

namespace placement {
namespace {

absl::Status CheckFigure(absl::string_view what, absl::string_view field, double v, bool must_be_positive) {
  if (!std::isfinite(v)) return absl::InvalidArgumentError(absl::StrCat(what, ": ", field, " is not a finite number"));
  if (v < 0 || (must_be_positive && v == 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": ", field, " must be ", must_be_positive ? "positive" : "non-negative", " (got ", v, ")"));
  }
  return absl::OkStatus();
}

absl::Status ValidateDevice(const Device& d) {
  if (d.name.empty()) return absl::InvalidArgumentError("a device has an empty name");
  const std::string what = absl::StrCat("device '", d.name, "'");
  if (d.kind.empty()) return absl::InvalidArgumentError(absl::StrCat(what, ": kind is empty"));
  absl::Status s;
  if (!(s = CheckFigure(what, "peak_flops", d.peak_flops, true)).ok()) return s;
  if (!(s = CheckFigure(what, "memory_bandwidth", d.memory_bandwidth, true)).ok()) return s;
  if (!(s = CheckFigure(what, "launch_overhead", d.launch_overhead, false)).ok()) return s;
  if (!(s = CheckFigure(what, "host_op_overhead", d.host_op_overhead, false)).ok()) return s;
  if (!(s = CheckFigure(what, "host_backward_op_overhead", d.host_backward_op_overhead, false)).ok()) return s;
  for (int c = 0; c < kNumOpClasses; ++c) {
    const absl::string_view name = OpClassName(static_cast<OpClass>(c));
    if (!(s = CheckFigure(what, absl::StrCat("efficiency.", name), d.efficiency[c], true)).ok()) return s;
    if (!(s = CheckFigure(what, absl::StrCat("backward_efficiency.", name), d.backward_efficiency[c], true)).ok()) {
      return s;
    }
    if (!(s = CheckFigure(what, absl::StrCat("serial_bandwidth.", name), d.serial_bandwidth[c], false)).ok()) return s;
  }
  if (d.memory_bytes < 0) return absl::InvalidArgumentError(absl::StrCat(what, ": memory_bytes is negative"));
  if (d.host < 0) return absl::InvalidArgumentError(absl::StrCat(what, ": host is negative"));
  return absl::OkStatus();
}

// Devices of one kind share a row of the cost table, so they must agree on what the cost model reads.
absl::Status CheckKindConsistent(const Device& a, const Device& b) {
  if (a.peak_flops != b.peak_flops || a.memory_bandwidth != b.memory_bandwidth ||
      a.launch_overhead != b.launch_overhead || a.host_op_overhead != b.host_op_overhead ||
      a.host_backward_op_overhead != b.host_backward_op_overhead || a.type != b.type || a.efficiency != b.efficiency ||
      a.backward_efficiency != b.backward_efficiency || a.serial_bandwidth != b.serial_bandwidth ||
      a.intensity_curves != b.intensity_curves) {
    return absl::InvalidArgumentError(
        absl::StrCat("devices '", a.name, "' and '", b.name, "' are both of kind '", a.kind,
                     "' but differ in peak FLOP/s, memory bandwidth, launch or host overheads, "
                     "efficiencies or type; give them different kinds"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Topology> Topology::Create(TopologySpec spec) {
  const int32_t n = static_cast<int32_t>(spec.devices.size());
  if (n == 0) return absl::InvalidArgumentError("the topology has no devices");
  Topology t;
  t.name_ = std::move(spec.name);
  absl::flat_hash_map<std::string, DeviceId> by_name;
  absl::flat_hash_map<std::string, int32_t> kind_first_device;
  for (DeviceId d = 0; d < n; ++d) {
    const Device& dev = spec.devices[d];
    RETURN_IF_ERROR(ValidateDevice(dev));
    if (!by_name.emplace(dev.name, d).second) {
      return absl::InvalidArgumentError(absl::StrCat("duplicate device name '", dev.name, "'"));
    }
    auto [it, inserted] = kind_first_device.try_emplace(dev.kind, d);
    if (inserted) {
      t.kinds_.push_back(dev.kind);
    } else if (absl::Status s = CheckKindConsistent(spec.devices[it->second], dev); !s.ok()) {
      return s;
    }
    t.kind_index_.push_back(
        static_cast<int32_t>(std::find(t.kinds_.begin(), t.kinds_.end(), dev.kind) - t.kinds_.begin()));
  }
  for (size_t r = 0; r < spec.resources.size(); ++r) {
    const LinkResource& res = spec.resources[r];
    if (absl::Status s = CheckFigure(absl::StrCat("link '", res.name, "'"), "bandwidth", res.bandwidth, true); !s.ok())
      return s;
  }
  const size_t pairs = static_cast<size_t>(n) * n;
  if (spec.latency.size() != pairs || spec.path_resources.size() != pairs) {
    return absl::InvalidArgumentError(
        absl::StrCat("the topology needs latency and path entries for all ", n, " x ", n, " device pairs"));
  }
  t.paths_.resize(pairs);
  for (DeviceId a = 0; a < n; ++a) {
    for (DeviceId b = 0; b < n; ++b) {
      if (a == b) continue;
      const size_t i = static_cast<size_t>(a) * n + b;
      const std::string what = absl::StrCat("path '", spec.devices[a].name, "' -> '", spec.devices[b].name, "'");
      RETURN_IF_ERROR(CheckFigure(what, "latency", spec.latency[i], false));
      if (spec.path_resources[i].empty()) return absl::InvalidArgumentError(absl::StrCat(what, " has no link"));
      Path p;
      p.latency = spec.latency[i];
      p.bandwidth = std::numeric_limits<double>::infinity();
      p.first_resource = static_cast<int32_t>(t.path_resource_ids_.size());
      for (int32_t r : spec.path_resources[i]) {
        if (r < 0 || r >= static_cast<int32_t>(spec.resources.size())) {
          return absl::InvalidArgumentError(absl::StrCat(what, " uses link ", r, ", which does not exist"));
        }
        p.bandwidth = std::min(p.bandwidth, spec.resources[r].bandwidth);
        t.path_resource_ids_.push_back(r);
      }
      p.num_resources = static_cast<int32_t>(spec.path_resources[i].size());
      t.paths_[i] = p;
    }
  }
  t.devices_ = std::move(spec.devices);
  t.resources_ = std::move(spec.resources);
  t.data_parallel_across_hosts_ = spec.data_parallel_across_hosts;
  return t;
}

DeviceId Topology::FindDevice(absl::string_view name) const {
  for (DeviceId d = 0; d < num_devices(); ++d) {
    if (devices_[d].name == name) return d;
  }
  return -1;
}

int64_t Topology::bounded_memory_bytes() const {
  int64_t total = 0;
  for (const Device& d : devices_) total += d.memory_bytes;
  return total;
}

bool Topology::has_unbounded_device() const {
  return std::any_of(devices_.begin(), devices_.end(), [](const Device& d) { return d.memory_bytes == 0; });
}

absl::StatusOr<Topology> BuildHierarchy(const HierarchySpec& spec) {
  if (spec.hosts.empty()) return absl::InvalidArgumentError("the topology has no hosts");
  TopologySpec out;
  out.name = spec.name;
  std::vector<int32_t> port;  // per device: its outgoing intra-host port
  std::vector<int32_t> nic;   // per host: its outgoing network interface
  std::vector<double> intra_latency;
  const bool many_hosts = spec.hosts.size() > 1;
  if (many_hosts) {
    RETURN_IF_ERROR(CheckFigure("network", "bandwidth", spec.network_bandwidth, true));
    RETURN_IF_ERROR(CheckFigure("network", "latency", spec.network_latency, false));
  }
  for (size_t h = 0; h < spec.hosts.size(); ++h) {
    const HostSpec& host = spec.hosts[h];
    const std::string host_name = host.name.empty() ? absl::StrCat("host", h) : host.name;
    if (host.devices.empty()) return absl::InvalidArgumentError(absl::StrCat("host '", host_name, "' has no devices"));
    if (host.devices.size() > 1) {
      RETURN_IF_ERROR(
          CheckFigure(absl::StrCat("host '", host_name, "'"), "intra-host bandwidth", host.intra_bandwidth, true));
    }
    // Only links some path uses exist, so a one-device host needs no port and a one-host cluster no network.
    nic.push_back(many_hosts ? static_cast<int32_t>(out.resources.size()) : -1);
    if (many_hosts) out.resources.push_back(LinkResource{absl::StrCat(host_name, "/nic"), spec.network_bandwidth});
    intra_latency.push_back(host.intra_latency);
    for (const Device& d : host.devices) {
      Device dev = d;
      dev.host = static_cast<int32_t>(h);
      if (many_hosts) dev.name = absl::StrCat(host_name, "/", d.name);
      port.push_back(host.devices.size() > 1 ? static_cast<int32_t>(out.resources.size()) : -1);
      if (host.devices.size() > 1)
        out.resources.push_back(LinkResource{absl::StrCat(dev.name, "/port"), host.intra_bandwidth});
      out.devices.push_back(std::move(dev));
    }
  }
  const size_t n = out.devices.size();
  out.latency.assign(n * n, 0);
  out.path_resources.assign(n * n, {});
  for (size_t a = 0; a < n; ++a) {
    for (size_t b = 0; b < n; ++b) {
      if (a == b) continue;
      const int32_t ha = out.devices[a].host, hb = out.devices[b].host;
      if (ha == hb) {
        out.latency[a * n + b] = intra_latency[ha];
        out.path_resources[a * n + b] = {port[a]};
      } else {
        out.latency[a * n + b] = spec.network_latency;
        out.path_resources[a * n + b] = {nic[ha], nic[hb]};
      }
    }
  }
  return Topology::Create(std::move(out));
}

absl::StatusOr<Topology> BuildMatrix(std::string name, std::vector<Device> devices,
                                     const std::vector<std::vector<double>>& bandwidth,
                                     const std::vector<std::vector<double>>& latency) {
  const size_t n = devices.size();
  if (bandwidth.size() != n || latency.size() != n) {
    return absl::InvalidArgumentError(
        absl::StrCat("bandwidth and latency matrices must have ", n, " rows, one per device"));
  }
  TopologySpec out;
  out.name = std::move(name);
  out.latency.assign(n * n, 0);
  out.path_resources.assign(n * n, {});
  for (size_t a = 0; a < n; ++a) {
    if (bandwidth[a].size() != n || latency[a].size() != n) {
      return absl::InvalidArgumentError(
          absl::StrCat("row ", a, " of the bandwidth or latency matrix does not have ", n, " entries"));
    }
    for (size_t b = 0; b < n; ++b) {
      if (a == b) continue;
      out.latency[a * n + b] = latency[a][b];
      out.path_resources[a * n + b] = {static_cast<int32_t>(out.resources.size())};
      out.resources.push_back(LinkResource{absl::StrCat(devices[a].name, "->", devices[b].name), bandwidth[a][b]});
    }
  }
  out.devices = std::move(devices);
  return Topology::Create(std::move(out));
}

absl::StatusOr<Topology> BuildSharedBus(std::string name, std::vector<Device> devices, double bus_bandwidth,
                                        double latency) {
  const size_t n = devices.size();
  TopologySpec out;
  out.name = std::move(name);
  out.latency.assign(n * n, latency);
  out.path_resources.assign(n * n, {});
  for (size_t a = 0; a < n; ++a) {
    out.resources.push_back(LinkResource{absl::StrCat(devices[a].name, "/bus"), bus_bandwidth});
    for (size_t b = 0; b < n; ++b) {
      if (a != b) out.path_resources[a * n + b] = {static_cast<int32_t>(a)};
    }
  }
  out.devices = std::move(devices);
  return Topology::Create(std::move(out));
}

absl::StatusOr<Topology> WithMemoryCapacity(const Topology& t, int64_t bytes) {
  TopologySpec s;
  s.name = t.name();
  for (const Device& d : t.devices()) {
    s.devices.push_back(d);
    s.devices.back().memory_bytes = bytes;
  }
  for (int32_t r = 0; r < t.num_resources(); ++r) s.resources.push_back(t.resource(r));
  s.data_parallel_across_hosts = t.data_parallel_across_hosts();
  const size_t n = t.num_devices();
  s.latency.assign(n * n, 0);
  s.path_resources.assign(n * n, {});
  for (DeviceId a = 0; a < t.num_devices(); ++a) {
    for (DeviceId b = 0; b < t.num_devices(); ++b) {
      if (a == b) continue;
      const Path& p = t.path(a, b);
      s.latency[a * n + b] = p.latency;
      absl::Span<const int32_t> res = t.path_resources(p);
      s.path_resources[a * n + b].assign(res.begin(), res.end());
    }
  }
  return Topology::Create(std::move(s));
}

absl::StatusOr<Topology> ForRuntime(const Topology& topology, absl::string_view runtime) {
  if (runtime.empty() || runtime == "eager") return topology;
  if (runtime == "graphs") return topology.WithoutHostDispatch();
  return absl::InvalidArgumentError(absl::StrCat("runtime '", runtime,
                                                 "' is not eager (operators issued one by one from the host) or "
                                                 "graphs (CUDA graphs or a compiled step)"));
}

}  // namespace placement
