// Time of an operator on a device and of a tensor between two devices.
//
// Operator time is its measured time for the device's kind where the graph gives one, else the roofline
// estimate max(FLOPs / peak, bytes touched / memory bandwidth) plus the device's launch overhead. An operator
// with measured times runs only on kinds it was measured on. Transfer time is the tensor's measured transfer
// time where given, else path latency + bytes / path bandwidth; a tensor that stays on its device is free.
// Times are precomputed per (device kind, operator), so lookups in the simulator's inner loop are one load.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/graph.h"
#include "graph/op_class.h"
#include "graph/topology.h"

namespace placement {

inline constexpr double kCannotRun = std::numeric_limits<double>::infinity();
// The device kind of a time measured once for every kind of device (a PipeDream profile, a costs file's "*").
inline constexpr char kAnyDeviceKind[] = "*";

// The plain roofline: the longer of computing `flops` at the device's peak and moving `bytes` at its bandwidth.
double RooflineSeconds(double flops, double bytes, const Device& device);

// The roofline an operator of class `c` is held to on `device`: the plain one, except for a CPU's pooling, whose
// kernels are bound by their arithmetic (cost_model.cc PoolingOnCpuSeconds).
double ClassRooflineSeconds(OpClass c, double flops, double bytes, const Device& device);

// What an operator of class `c` moving `bytes` takes on `device` beyond its roofline time: nothing for a view (a
// reshape, a constant, a shape: metadata, no kernel); for the others the launch overhead, and their bytes at the
// class's serial bandwidth where it has one (Device::serial_bandwidth).
double BeyondRooflineSeconds(OpClass c, double bytes, const Device& device);

// The factor on class c's efficiency for an operator doing `flops` over `bytes` on `device`
// (Device::intensity_curves; 1 without a curve): between two measured points the achieved FLOP rate is
// interpolated over the intensity's logarithm; below the first the rate falls in proportion to the intensity
// (the bandwidth reached there held), past the last it holds.
// A convolution with a window past kMaxNarrowWindow (a 7x7 stem) has none: the curves are measured on 1x1 and 3x3
// ones (graph/calibration.h).
double IntensityFactor(OpClass c, double flops, double bytes, int32_t window, const Device& device);

// A kernel of class `c` doing `flops` over `bytes` on `device`: the roofline at the share of it that the class
// reaches there (its backward share for a backward kernel; IntensityFactor's for its intensity), plus
// BeyondRooflineSeconds.
double KernelSeconds(OpClass c, double flops, double bytes, const Device& device, bool backward, int32_t window = 0);

// The model's time for `op` on `device`, measured times aside: the roofline at its class's efficiency plus
// BeyondRooflineSeconds (graph/op_class.h).
double ModelledSeconds(const Graph& graph, OpId op, const Device& device);

class CostModel {
 public:
  // Fails when an operator can run on no device of the topology, naming it and the kinds it was measured on.
  static absl::StatusOr<CostModel> Create(const Graph& graph, const Topology& topology);

  // kCannotRun where the device's kind cannot run op.
  double op_time(OpId op, DeviceId d) const { return time_[static_cast<size_t>(kind_of_device_[d]) * num_ops_ + op]; }
  bool can_run(OpId op, DeviceId d) const { return op_time(op, d) != kCannotRun; }
  // Seconds the host spends issuing op for d (Device::host_op_overhead): operators that compute, forward or
  // backward (one autograd node for an input and a weight gradient); none for views and copies of data (views in
  // eager PyTorch), for the parts of a fused pattern, and for the optimizer's updates (a foreach optimizer updates
  // every parameter in a few kernels).
  double host_time(OpId op, DeviceId d) const {
    return host_time_.empty() ? 0 : host_time_[static_cast<size_t>(kind_of_device_[d]) * num_ops_ + op];
  }
  bool has_host_stream() const { return !host_time_.empty(); }
  // Fastest time of op over all devices of the topology (finite after Create succeeded).
  double fastest_time(OpId op) const { return fastest_[op]; }
  DeviceId fastest_device(OpId op) const { return fastest_device_[op]; }

  double transfer_time(TensorId t, DeviceId from, DeviceId to) const;
  double transfer_time(const Graph& graph, EdgeId e, DeviceId from, DeviceId to) const;

  // What op holds on its device under the throughput objective (graph/pipelined_memory.h), with one micro-batch
  // in flight per device of the topology: the most an asynchronous pipeline over all of them keeps at its first
  // stage, so a device held to the sum never overflows whatever its place in the pipeline.
  int64_t pipelined_bytes(OpId op) const { return pipelined_bytes_[op]; }

  const Graph& graph() const { return *graph_; }
  const Topology& topology() const { return *topology_; }

 private:
  const Graph* graph_ = nullptr;
  const Topology* topology_ = nullptr;
  int32_t num_ops_ = 0;
  std::vector<int32_t> kind_of_device_;
  std::vector<double> time_;       // kinds x ops
  std::vector<double> host_time_;  // kinds x ops, or empty
  std::vector<double> fastest_;
  std::vector<DeviceId> fastest_device_;
  std::vector<int64_t> pipelined_bytes_;
};

}  // namespace placement
