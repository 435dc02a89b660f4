// The cluster: devices, and the paths between every ordered pair of them over shared link resources.
//
// A transfer from device a to device b takes path(a, b): a latency and a list of link resources (a device's
// outgoing NVLink port, a host's network interface, a dedicated point-to-point link...). Its bandwidth is the
// slowest resource on the path, and the simulator lets one transfer at a time use a resource, so transfers
// that share a link queue. Hierarchical clusters (hosts x devices, an intra-host link, a network) and explicit
// bandwidth/latency matrices both compile down to this form.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>
#include "absl/strings/string_view.h"

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "graph/op_class.h"

namespace placement {

using DeviceId = int32_t;

enum class DeviceType : uint8_t { kAccelerator = 0, kCpu = 1 };

struct Device {
  std::string name;  // unique, e.g. "host0/gpu3"
  std::string kind;  // device model, matched against measured times in the graph, e.g. "H100"
  DeviceType type = DeviceType::kAccelerator;
  double peak_flops = 0;        // FLOP/s
  double memory_bandwidth = 0;  // bytes/s
  int64_t memory_bytes = 0;     // capacity; 0 means unlimited (host memory in the Tarnawski model)
  int32_t host = 0;
  double launch_overhead = 0;  // seconds added to every roofline-estimated operator
  // Seconds the framework's host thread spends issuing each operator that runs a kernel, forward and backward
  // (eager PyTorch: the module call, the dispatcher, autograd's bookkeeping); 0: none. The host issues a device's
  // operators one after another while the device runs those issued before, so where kernels are short the step
  // takes the host's time, not the kernels' (simulator/simulator.h).
  double host_op_overhead = 0;
  double host_backward_op_overhead = 0;
  // Share of the roofline each operator class reaches (graph/op_class.h); backward operators of a training
  // step reach efficiency x backward_efficiency.
  ClassFactors efficiency = kUnitFactors;
  ClassFactors backward_efficiency = kUnitFactors;
  // Per class, the bytes/s at which its operators move their bytes on top of their roofline time, forward or
  // backward: kernels that do not overlap their memory traffic with their arithmetic (oneDNN's CPU convolutions
  // reorder weights and pack inputs per call). Fitted from profiles by placectl calibrate --profiles; 0: none.
  ClassFactors serial_bandwidth{};
  // Per class, how its efficiency moves with the operator's intensity (measured by placectl calibrate for a GPU's
  // matrix products and convolutions); empty curves: none.
  ClassCurves intensity_curves{};
};

struct LinkResource {
  std::string name;
  double bandwidth = 0;  // bytes/s
};

struct Path {
  double latency = 0;          // seconds
  double bandwidth = 0;        // bytes/s: the slowest resource on the path
  int32_t first_resource = 0;  // into Topology::path_resources()
  int32_t num_resources = 0;
};

// Input to Topology::Create for the explicit form.
struct TopologySpec {
  std::string name;
  std::vector<Device> devices;
  std::vector<LinkResource> resources;
  // Row-major num_devices x num_devices; the diagonal is ignored.
  std::vector<double> latency;
  std::vector<std::vector<int32_t>> path_resources;  // resource ids per ordered pair, row-major
  // False: a data-parallel group (the replicas of one pipeline stage) must stay inside one host.
  bool data_parallel_across_hosts = true;
};

class Topology {
 public:
  Topology() = default;

  // Validates: at least one device, unique non-empty names, finite non-negative figures, a positive peak
  // and bandwidth on every device, every off-diagonal pair connected through existing positive-bandwidth
  // resources.
  static absl::StatusOr<Topology> Create(TopologySpec spec);

  const std::string& name() const { return name_; }
  // Where the devices' figures come from, in a line for answers (graph/measured_presets.h): a preset's measured,
  // derived or datasheet figures, or the topology file's own; "" where nothing says.
  const std::string& description() const { return description_; }
  void set_description(std::string description) { description_ = std::move(description); }
  int32_t num_devices() const { return static_cast<int32_t>(devices_.size()); }
  const Device& device(DeviceId d) const { return devices_[d]; }
  absl::Span<const Device> devices() const { return devices_; }
  DeviceId FindDevice(absl::string_view name) const;  // kNone (-1) when absent

  // Dense index of a device's kind among kinds(); lets cost tables be kinds x ops rather than devices x ops.
  int32_t kind_index(DeviceId d) const { return kind_index_[d]; }
  absl::Span<const std::string> kinds() const { return kinds_; }

  int32_t num_resources() const { return static_cast<int32_t>(resources_.size()); }
  const LinkResource& resource(int32_t r) const { return resources_[r]; }
  const Path& path(DeviceId from, DeviceId to) const { return paths_[from * num_devices() + to]; }
  absl::Span<const int32_t> path_resources(const Path& p) const {
    return absl::MakeConstSpan(path_resource_ids_).subspan(p.first_resource, p.num_resources);
  }

  // Sum of the memory capacities of devices with a limit; 0 when every device is unlimited.
  int64_t bounded_memory_bytes() const;
  bool has_unbounded_device() const;

  // Whether the replicas of one pipeline stage may sit on several hosts (a plan's all-reduce then crosses
  // the network); false where the cluster keeps data-parallel groups inside a host.
  bool data_parallel_across_hosts() const { return data_parallel_across_hosts_; }
  // The same cluster with data-parallel groups kept inside a host.
  // The same cluster where nothing issues operators one by one from the host (host overheads 0).
  Topology WithoutHostDispatch() const {
    Topology t = *this;
    for (Device& d : t.devices_) d.host_op_overhead = d.host_backward_op_overhead = 0;
    return t;
  }
  // The same cluster with each device's compute figures (peak, bandwidth, overheads, efficiencies) replaced by
  // `figures(device)`'s, names, kinds, memory and links kept. Devices of one kind must get the same figures.
  template <typename Figures>
  Topology WithDeviceFigures(Figures figures) const {
    Topology t = *this;
    for (Device& d : t.devices_) {
      const Device f = figures(d);
      d.peak_flops = f.peak_flops;
      d.memory_bandwidth = f.memory_bandwidth;
      d.launch_overhead = f.launch_overhead;
      d.host_op_overhead = f.host_op_overhead;
      d.host_backward_op_overhead = f.host_backward_op_overhead;
      d.efficiency = f.efficiency;
      d.backward_efficiency = f.backward_efficiency;
      d.serial_bandwidth = f.serial_bandwidth;
      d.intensity_curves = f.intensity_curves;
    }
    return t;
  }
  Topology WithGroupsInsideHosts() const {
    Topology t = *this;
    t.data_parallel_across_hosts_ = false;
    return t;
  }

 private:
  std::string name_;
  std::string description_;
  std::vector<Device> devices_;
  std::vector<int32_t> kind_index_;
  std::vector<std::string> kinds_;
  std::vector<LinkResource> resources_;
  std::vector<Path> paths_;
  std::vector<int32_t> path_resource_ids_;
  bool data_parallel_across_hosts_ = true;
};

// How the framework issues a step's operators: "eager" (one by one from the host thread, at the topology's host
// overheads) or "graphs" (CUDA graphs or a compiled step: replayed without per-operator host work). The topology
// for that runtime; INVALID_ARGUMENT naming the two for another word.
absl::StatusOr<Topology> ForRuntime(const Topology& topology, absl::string_view runtime);

// Hierarchical description: hosts, each with devices of one or more models, an intra-host interconnect and a
// network between hosts. Each device gets an outgoing intra-host port; each host an outgoing network
// interface. A transfer inside a host uses the sender's port; a transfer across hosts uses the sending and the
// receiving host's interfaces (the network, not NVLink, is what limits it).
struct HostSpec {
  std::string name;
  std::vector<Device> devices;  // names are prefixed with the host name when not already unique
  double intra_bandwidth = 0;   // bytes/s per device port
  double intra_latency = 0;     // seconds
};

struct HierarchySpec {
  std::string name;
  std::vector<HostSpec> hosts;
  double network_bandwidth = 0;  // bytes/s per host interface
  double network_latency = 0;    // seconds
};

absl::StatusOr<Topology> BuildHierarchy(const HierarchySpec& spec);

// Explicit matrices: bandwidth[a][b] bytes/s and latency[a][b] seconds, each ordered pair its own link.
absl::StatusOr<Topology> BuildMatrix(std::string name, std::vector<Device> devices,
                                     const std::vector<std::vector<double>>& bandwidth,
                                     const std::vector<std::vector<double>>& latency);

// The same cluster (devices, links, paths) with every device's memory capacity set to `bytes` (0 = unlimited):
// what-if questions about memory, and tests that squeeze a placement.
absl::StatusOr<Topology> WithMemoryCapacity(const Topology& topology, int64_t bytes);

// Placeto's simulated cluster: every device has one outgoing bus shared by all its transfers.
absl::StatusOr<Topology> BuildSharedBus(std::string name, std::vector<Device> devices, double bus_bandwidth,
                                        double latency);

}  // namespace placement
