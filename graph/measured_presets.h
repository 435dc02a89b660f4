// The figures a preset device gets for a job at a given precision, and where each comes from.
//
// A datasheet's peak is a bound no PyTorch step reaches: the H100's 989 TFLOP/s is BF16 on tensor cores, where a
// float32 step's matrix products run at 52. So a preset device's figures come from measurement where there is one:
//
//   measured   the device's own table (H100, H200: scripts/measure_torch_device.py on the GPU, PyTorch's
//              defaults, graph/device_data/): peak, bandwidth, launch and host overheads, and the efficiency of
//              each operator class, exactly as `placectl calibrate --measurements FILE` derives them;
//   derived    another GPU: the H100's table at the same precision, its peak scaled by the two datasheets' rates
//              for the arithmetic that precision runs on (FP32, TF32, BF16 or FP16) and its bandwidth by theirs;
//              the launch and host overheads are the H100 host's;
//   datasheet  the CPU preset (`placectl calibrate` measures the host it runs on) and what no table covers.
//
// A precision picks the table: fp32 (and tf32) the float32 one, the 16-bit ones the bfloat16 one (FP16 runs at the
// same tensor-core rate on these GPUs). Memory capacity is the datasheet's everywhere.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/device_presets.h"
#include "graph/precision.h"
#include "graph/topology.h"

namespace placement {

enum class FigureSource { kMeasured, kDerived, kDatasheet };
absl::string_view FigureSourceName(FigureSource s);  // "measured", "derived", "datasheet"

struct PresetRates {
  Device device;  // unnamed; kind is the preset's name
  FigureSource compute = FigureSource::kDatasheet;    // peak and per-class efficiencies
  FigureSource bandwidth = FigureSource::kDatasheet;  // memory bandwidth
  FigureSource overheads = FigureSource::kDatasheet;  // kernel launch and the host's work per operator
  // One line: the device, the precision, the figures and where they come from.
  std::string description;
};

// The figures of `preset` for a job at `precision`. INTERNAL only if a compiled-in table does not parse.
absl::StatusOr<PresetRates> RatesForPrecision(const DevicePreset& preset, Precision precision);

// The datasheet's figures, every class at the roofline: what layer-level plans (simulator/transformer_layers.h,
// fitted on published runs against datasheet peaks) and a graph file's own device list use.
PresetRates DatasheetRates(const DevicePreset& preset);

// A topology read from a file (or a graph's own device list) with each device that carries a preset's datasheet
// figures unchanged (a "preset" entry whose figures were not overridden) given the figures for `precision`; the
// description names them and `source` (the file). Devices with figures of their own keep them.
absl::StatusOr<Topology> WithPresetFigures(const Topology& topology, Precision precision, absl::string_view source);

// `placectl presets`: each preset's datasheet, then the figures a float32 and a bfloat16 job get, marked
// measured, derived or datasheet.
std::string DescribePresetRates();

}  // namespace placement
