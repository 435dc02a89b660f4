// Common devices as data: the published peak figures of each model, the interconnect it usually sits on, and
// the document the figures come from.
//
// Peaks are what the vendor publishes (dense, no sparsity), so roofline estimates made from them are lower
// bounds on real operator times; graphs with measured times do not depend on them. Link defaults describe a
// typical server built around the device and are meant to be overridden in a topology file when the real
// cluster differs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "graph/topology.h"

namespace placement {

struct DevicePreset {
  absl::string_view name;   // what users type, matched case-insensitively; also the device kind
  absl::string_view model;  // the exact product the figures are for
  DeviceType type = DeviceType::kAccelerator;
  double peak_flops = 0;          // FLOP/s
  absl::string_view flops_basis;  // which precision and unit the peak is for
  double memory_bandwidth = 0;    // bytes/s
  int64_t memory_bytes = 0;
  double launch_overhead = 0;  // seconds per operator

  // Between two devices of this model in one host: bandwidth of one device's outgoing port, per direction.
  absl::string_view intra_link;
  double intra_bandwidth = 0;  // bytes/s
  double intra_latency = 0;    // seconds

  // Between hosts built around this model: bandwidth of one host's network interface, per direction.
  absl::string_view network;
  double network_bandwidth = 0;  // bytes/s
  double network_latency = 0;    // seconds

  absl::string_view citation;  // source document of the device figures

  // The datasheet's dense rates by the arithmetic a precision runs on (0: the device has none). They carry a
  // measured table to a device that has none of its own (graph/measured_presets.h).
  double fp32_flops = 0;  // FP32 without tensor cores (PyTorch's float32 matrix products)
  double tf32_flops = 0;  // TF32 tensor cores (PyTorch's float32 convolutions)
  double bf16_flops = 0;  // BF16 tensor cores
  double fp16_flops = 0;  // FP16 tensor cores, or FP16 arithmetic
  // The device whose measured tables this one has as its own ("H100" for the H100 and the DGX H100's GPU); "" for
  // devices without (their figures are derived from the H100's, or the datasheet's for a CPU).
  absl::string_view measured_as;
};

// Every preset, in a fixed order (newest accelerators first, the CPU host last).
absl::Span<const DevicePreset> DevicePresets();

// Case-insensitive lookup ("h100", "H100"). NotFound lists the known names.
absl::StatusOr<const DevicePreset*> FindDevicePreset(absl::string_view name);

// A device with the preset's figures; kind is the preset name so measured times keyed "H100" apply.
Device MakeDevice(const DevicePreset& preset, std::string name);

// "H100, A100, V100, P100, T4, CPU": for error messages and flag help.
std::string DevicePresetNames();

// One line per preset with its figures and source, for `--help` output and documentation.
std::string DescribeDevicePresets();

// The preset whose links a mix of devices uses: the first accelerator's (the CPU next to GPUs is not what
// their interconnect is), else the first preset's; nullptr for an empty list.
const DevicePreset* LinkPresetFor(const std::vector<const DevicePreset*>& presets);

}  // namespace placement
