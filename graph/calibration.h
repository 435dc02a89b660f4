// A device calibrated from measurements of benchmark layers: what `placectl calibrate` derives, whether it timed
// this host itself with LibTorch (policy/learned/host_calibration.h) or reads what scripts/measure_torch_device.py
// timed elsewhere, e.g. on a GPU (--measurements FILE). The arithmetic lives here, apart from any LibTorch, so that
// both give the same figures for the same times:
//
//   efficiency           per operator class: the roofline time of its layers, counted the way the ONNX importer
//                        counts FLOPs and bytes, over their measured time less the launch overhead;
//   backward_efficiency  per class: a training step's backward modelled as 2x the forward's work, over the
//                        measured backward time of the same layers (less a launch overhead per backward operator).
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/topology.h"

namespace placement {

struct CalibrationLine {  // one benchmark layer
  std::string op_class;   // the class of its operator type; refined by intensity (thin_gemm, thin_conv) when derived
  std::string layer;
  double flops = 0;
  double bytes = 0;
  double forward_seconds = 0;
  double backward_seconds = 0;  // 0 when not measured
  int backward_ops = 0;         // operators of its training-step backward
  int32_t window = 0;           // a convolution's kernel window (kh x kw), as the importer carries it
  bool channels_last = false;   // its input laid out channels-last, as the importer marks operators
};

struct Calibration {
  Device device;  // peak_flops, memory_bandwidth and launch_overhead measured; efficiencies derived
  std::vector<CalibrationLine> lines;
  std::string source;  // what was measured, for the topology's name
};

// The median of positive ratios (times, efficiencies); of an even count the geometric mean of the middle two.
// 0 for none.
double MedianRatio(std::vector<double> ratios);

// Sets the device's efficiency and backward_efficiency from its lines and its measured peak, bandwidth and
// launch overhead; classes without a line keep 1, "other" takes elementwise's. Refines each line's class by
// intensity. INVALID_ARGUMENT for a line with an unknown class or a figure that is not positive and finite.
absl::Status DeriveEfficiencies(Calibration* calibration);

// The JSON scripts/measure_torch_device.py writes: {"device": {"name", "kind", "memory_bytes", ...}, "torch",
// "peak_flops", "memory_bandwidth", "launch_overhead", "lines": [{"op_class", "layer", "flops", "bytes",
// "forward_seconds", "backward_seconds", "backward_ops", "window", "channels_last"}]}. A device named "cpu" kind is a CPU, any other an
// accelerator. INVALID_ARGUMENT naming the key that is missing or wrong; efficiencies derived.
absl::StatusOr<Calibration> ParseMeasurements(absl::string_view text);

// One calibration from several timings of the same device and layers (a shared host timed in several spells):
// each measured figure (peak, bandwidth, launch overhead, each layer's forward and backward time) is the median of
// theirs, the efficiencies derived again. INVALID_ARGUMENT, naming the timing (0-based) and the layer, where they
// differ in kind or in layers.
absl::StatusOr<Calibration> MedianOfCalibrations(const std::vector<Calibration>& timings);

// The measurements of `calibration` in the form ParseMeasurements reads (device.name is its source): a
// calibration kept, to be refit later (other profiles) without timing the device again.
std::string MeasurementsToJson(const Calibration& calibration);

}  // namespace placement
