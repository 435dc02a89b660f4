#include "graph/cost_model.h"

#include <algorithm>
#include <cmath>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/fused_costs.h"
#include "graph/op_class.h"
#include "graph/pipelined_memory.h"

namespace placement {
namespace {

constexpr double kBytesPerElement = 4;  // float32, as the importer counts bytes

// PyTorch's CPU pooling is scalar work per element, however few bytes it moves: a comparison (or an add) per
// window element and a load or store per element read or written. Timed on a 2-core host (torch 1.13, one
// thread), max pooling took 1.9 to 2.0 ns per such operation for 3x3 windows at strides 1 and 2 and 2x2 windows at
// stride 2, while its time per byte varied 2.9x and per window element 1.9x. So its roofline is those operations at
// the peak, and the class's efficiency the share of the peak they reach.
double PoolingOnCpuSeconds(double flops, double bytes, const Device& d) {
  return (flops + bytes / kBytesPerElement) / d.peak_flops;
}

double Roofline(const Graph& g, OpId op, const Device& d, OpClass c, bool backward) {
  // A backward operator with nothing to compute (an input gradient that no input needs) runs no kernel.
  if (backward && g.flops(op) <= 0 && g.bytes_accessed(op) <= 0) return 0;
  return KernelSeconds(c, g.flops(op), g.bytes_accessed(op), d, backward, g.window(op));
}

// Per kind and operator, the host's time to issue it (CostModel::host_time); empty when no kind has any.
std::vector<double> HostTimes(const Graph& g, const Topology& topology, const std::vector<DeviceId>& kind_device,
                              const std::vector<double>& time) {
  bool any = false;
  for (DeviceId d : kind_device) {
    const Device& device = topology.device(d);
    any |= device.host_op_overhead > 0 || device.host_backward_op_overhead > 0;
  }
  if (!any) return {};
  const size_t n = static_cast<size_t>(g.num_ops());
  std::vector<double> host(kind_device.size() * n, 0);
  for (OpId op = 0; op < g.num_ops(); ++op) {
    // Views and copies of data (reshapes, transposes, slices: views in eager PyTorch), the optimizer's updates and
    // a weight gradient (computed by the same autograd node as its input gradient) add nothing the host issues.
    const OpClass c = ClassOfType(g.op_type(op));
    if (c == OpClass::kView || c == OpClass::kDataMovement || c == OpClass::kOptimizer) continue;
    if (absl::EndsWith(g.op_type(op), "WeightGrad")) continue;
    for (size_t k = 0; k < kind_device.size(); ++k) {
      if (time[k * n + op] <= 0 || time[k * n + op] == kCannotRun) continue;  // no kernel: a fused pattern's part
      const Device& d = topology.device(kind_device[k]);
      host[k * n + op] = g.is_backward(op) ? d.host_backward_op_overhead : d.host_op_overhead;
    }
  }
  return host;
}

// The kernels the framework runs around each operator (OpSpec::extra_kernels: casts, gradient sums) added to its
// time, as kernels of the elementwise class. Each is one operator dispatched from C++, what calibration measures as
// the launch overhead (torch::add on one-element tensors), with no Python or module call around it: where the host
// issues the kernels (a host stream), that is the host's time and the device's is their bytes; without one the
// launch is the device's too, as for every kernel.
void AddExtraKernels(const Graph& g, const Topology& topology, const std::vector<DeviceId>& kind_device,
                     std::vector<double>& time, std::vector<double>& host) {
  const size_t n = static_cast<size_t>(g.num_ops());
  for (OpId op = 0; op < g.num_ops(); ++op) {
    const ExtraKernels& extra = g.extra_kernels(op);
    if (extra.kernels == 0) continue;
    for (size_t k = 0; k < kind_device.size(); ++k) {
      if (time[k * n + op] == kCannotRun) continue;
      const Device& d = topology.device(kind_device[k]);
      const double launches = extra.kernels * d.launch_overhead;
      time[k * n + op] += KernelSeconds(OpClass::kElementwise, 0, extra.bytes, d, g.is_backward(op)) -
                          d.launch_overhead + (host.empty() ? launches : 0);
      if (!host.empty()) host[k * n + op] += launches;
    }
  }
}

}  // namespace

double IntensityFactor(OpClass c, double flops, double bytes, int32_t window, const Device& d) {
  const IntensityCurve& curve = d.intensity_curves[static_cast<int>(c)];
  if (curve.size == 0 || flops <= 0 || bytes <= 0 || window > kMaxNarrowWindow) return 1;
  // The roofline's rate at an intensity, and the rate the curve's point k reached on this device.
  const auto roof = [&d](double intensity) { return std::min(d.peak_flops, intensity * d.memory_bandwidth); };
  const auto rate = [&](int k) { return curve.factor[k] * roof(curve.intensity[k]); };
  const double intensity = flops / bytes;
  const int last = curve.size - 1;
  double achieved;
  if (intensity <= curve.intensity[0]) {
    achieved = rate(0) * intensity / curve.intensity[0];
  } else if (intensity >= curve.intensity[last]) {
    achieved = rate(last);
  } else {
    int k = 0;
    while (curve.intensity[k + 1] < intensity) ++k;
    const double t = std::log(intensity / curve.intensity[k]) / std::log(curve.intensity[k + 1] / curve.intensity[k]);
    achieved = std::exp((1 - t) * std::log(rate(k)) + t * std::log(rate(k + 1)));
  }
  return achieved / roof(intensity);
}

double KernelSeconds(OpClass c, double flops, double bytes, const Device& d, bool backward, int32_t window) {
  const int i = static_cast<int>(c);
  const double efficiency =
      d.efficiency[i] * IntensityFactor(c, flops, bytes, window, d) * (backward ? d.backward_efficiency[i] : 1.0);
  return ClassRooflineSeconds(c, flops, bytes, d) / efficiency + BeyondRooflineSeconds(c, bytes, d);
}

double RooflineSeconds(double flops, double bytes, const Device& device) {
  return std::max(flops / device.peak_flops, bytes / device.memory_bandwidth);
}

double ClassRooflineSeconds(OpClass c, double flops, double bytes, const Device& device) {
  if (c == OpClass::kPooling && device.type == DeviceType::kCpu) return PoolingOnCpuSeconds(flops, bytes, device);
  return RooflineSeconds(flops, bytes, device);
}

double BeyondRooflineSeconds(OpClass c, double bytes, const Device& device) {
  if (c == OpClass::kView) return 0;
  const double bandwidth = device.serial_bandwidth[static_cast<int>(c)];
  return device.launch_overhead + (bandwidth > 0 ? bytes / bandwidth : 0);
}

double ModelledSeconds(const Graph& graph, OpId op, const Device& device) {
  return Roofline(graph, op, device, ClassOf(graph, op), IsBackwardType(graph.op_type(op)));
}

absl::StatusOr<CostModel> CostModel::Create(const Graph& graph, const Topology& topology) {
  CostModel m;
  m.graph_ = &graph;
  m.topology_ = &topology;
  m.num_ops_ = graph.num_ops();
  const int32_t num_kinds = static_cast<int32_t>(topology.kinds().size());
  m.kind_of_device_.resize(topology.num_devices());
  std::vector<DeviceId> kind_device(num_kinds, -1);  // a representative device per kind
  for (DeviceId d = 0; d < topology.num_devices(); ++d) {
    m.kind_of_device_[d] = topology.kind_index(d);
    if (kind_device[topology.kind_index(d)] < 0) kind_device[topology.kind_index(d)] = d;
  }
  // Map the graph's measured kinds onto the topology's kinds once.
  // kAnyDeviceKind ("*", a time measured once for every kind) maps to all of them (-2).
  std::vector<int32_t> graph_kind_to_topo(graph.device_kinds().size(), -1);
  for (size_t gk = 0; gk < graph.device_kinds().size(); ++gk) {
    if (graph.device_kinds()[gk] == kAnyDeviceKind) graph_kind_to_topo[gk] = -2;
    for (int32_t tk = 0; tk < num_kinds; ++tk) {
      // Kinds match regardless of case: a profile recorded as "cpu" is for the CPU preset.
      if (absl::EqualsIgnoreCase(topology.kinds()[tk], graph.device_kinds()[gk])) graph_kind_to_topo[gk] = tk;
    }
  }
  m.time_.assign(static_cast<size_t>(num_kinds) * m.num_ops_, kCannotRun);
  m.fastest_.assign(m.num_ops_, kCannotRun);
  m.fastest_device_.assign(m.num_ops_, -1);
  m.pipelined_bytes_ = PipelinedBytes(graph, topology.num_devices());
  for (OpId op = 0; op < m.num_ops_; ++op) {
    auto measured = graph.measured(op);
    if (measured.empty()) {
      const OpClass c = ClassOf(graph, op);
      const bool backward = IsBackwardType(graph.op_type(op));
      for (int32_t k = 0; k < num_kinds; ++k) {
        m.time_[static_cast<size_t>(k) * m.num_ops_ + op] =
            Roofline(graph, op, topology.device(kind_device[k]), c, backward);
      }
    } else {
      for (const MeasuredTime& mt : measured) {  // "*" first, so that a kind's own time wins over it
        if (graph_kind_to_topo[mt.kind] != -2) continue;
        for (int32_t k = 0; k < num_kinds; ++k) m.time_[static_cast<size_t>(k) * m.num_ops_ + op] = mt.seconds;
      }
      for (const MeasuredTime& mt : measured) {
        const int32_t k = graph_kind_to_topo[mt.kind];
        if (k >= 0) m.time_[static_cast<size_t>(k) * m.num_ops_ + op] = mt.seconds;
      }
    }
  }
  PriceFusedPatterns(graph, topology, kind_device, m.time_);
  m.host_time_ = HostTimes(graph, topology, kind_device, m.time_);
  AddExtraKernels(graph, topology, kind_device, m.time_, m.host_time_);
  for (OpId op = 0; op < m.num_ops_; ++op) {
    for (DeviceId d = 0; d < topology.num_devices(); ++d) {
      const double t = m.op_time(op, d);
      if (t < m.fastest_[op]) {
        m.fastest_[op] = t;
        m.fastest_device_[op] = d;
      }
    }
    if (m.fastest_device_[op] < 0) {
      std::vector<std::string> kinds;
      for (const MeasuredTime& mt : graph.measured(op)) kinds.push_back(graph.device_kinds()[mt.kind]);
      return absl::InvalidArgumentError(absl::StrCat(
          "operator '", graph.name(op), "' has measured times only for device kind(s) ", absl::StrJoin(kinds, ", "),
          ", none of which the topology has (it has ", absl::StrJoin(topology.kinds(), ", "), ")"));
    }
  }
  return m;
}

double CostModel::transfer_time(TensorId t, DeviceId from, DeviceId to) const {
  if (from == to) return 0;
  const OutputTensor& out = graph_->tensor(t);
  if (out.transfer_seconds >= 0) return out.transfer_seconds;
  const Path& p = topology_->path(from, to);
  return p.latency + static_cast<double>(out.bytes) / p.bandwidth;
}

double CostModel::transfer_time(const Graph& graph, EdgeId e, DeviceId from, DeviceId to) const {
  if (from == to) return 0;
  const OutputTensor& out = graph.tensor(graph.edge_tensor(e));
  if (out.transfer_seconds >= 0) return out.transfer_seconds;
  const Path& p = topology_->path(from, to);
  return p.latency + static_cast<double>(graph.edge(e).bytes) / p.bandwidth;
}

}  // namespace placement
