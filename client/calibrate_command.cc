#include "client/calibrate_command.h"

#include <iostream>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "client/profile_fit.h"
#include "graph/calibration.h"
#include "graph/cost_model.h"
#include "graph/file_io.h"
#include "graph/topology_json.h"
#include "graph/units.h"
#include "policy/learned/host_calibration.h"

namespace placement::cli {
namespace {

std::string Report(const Calibration& c) {
  const Device& d = c.device;
  std::string out = absl::StrFormat(
      "%s: peak %s (float32 GEMM), memory %s (copy), launch overhead %s\n\n"
      "%-14s %-40s %12s %12s %11s %11s %8s\n",
      c.source, FormatFlops(d.peak_flops), FormatBandwidth(d.memory_bandwidth), FormatSeconds(d.launch_overhead),
      "class", "layer", "FLOPs", "bytes", "forward", "backward", "of roof");
  for (const CalibrationLine& line : c.lines) {
    const double roof =
        ClassRooflineSeconds(OpClassFromName(line.op_class).value_or(OpClass::kOther), line.flops, line.bytes, d);
    absl::StrAppendFormat(&out, "%-14s %-40s %12.3g %12.3g %11s %11s %7.0f%%\n", line.op_class, line.layer, line.flops,
                          line.bytes, FormatSeconds(line.forward_seconds),
                          line.backward_seconds > 0 ? FormatSeconds(line.backward_seconds) : "-",
                          100 * roof / line.forward_seconds);
  }
  absl::StrAppend(&out, "\nefficiency per class (forward; backward factor):");
  for (int i = 0; i < kNumOpClasses; ++i) {
    absl::StrAppendFormat(&out, " %s %.3g; %.3g%s", OpClassName(static_cast<OpClass>(i)), d.efficiency[i],
                          d.backward_efficiency[i], i + 1 < kNumOpClasses ? "," : "\n");
  }
  return out;
}

// This host timed with LibTorch, or the measurements files hold (scripts/measure_torch_device.py, run where the
// device is; --save_measurements of earlier calibrations): of several, each figure's median.
absl::StatusOr<Calibration> Measure(const CalibrateOptions& options) {
  if (!options.measurements.empty()) {
    const std::vector<std::string> files = absl::StrSplit(options.measurements, ',', absl::SkipEmpty());
    std::vector<Calibration> timings;
    for (const std::string& file : files) {
      absl::StatusOr<std::string> text = ReadWholeFile(file);
      if (!text.ok()) return text.status();
      absl::StatusOr<Calibration> c = ParseMeasurements(*text);
      if (!c.ok()) return absl::InvalidArgumentError(absl::StrCat(file, ": ", c.status().message()));
      timings.push_back(*std::move(c));
    }
    absl::StatusOr<Calibration> merged = MedianOfCalibrations(timings);
    if (!merged.ok()) return absl::InvalidArgumentError(absl::StrCat("--measurements: ", merged.status().message()));
    return merged;
  }
  learned::CalibrationOptions o;
  o.threads = options.threads;
  o.kind = options.kind;
  o.seconds_per_measurement = options.seconds_per_measurement;
  return learned::CalibrateHost(o);
}

}  // namespace

absl::StatusOr<std::string> RunCalibrate(const CalibrateOptions& options) {
  if (options.threads < 1) return absl::InvalidArgumentError("--threads must be at least 1");
  if (!(options.seconds_per_measurement > 0 && options.seconds_per_measurement <= 10)) {
    return absl::InvalidArgumentError("--measure_seconds must be above 0 and at most 10");
  }
  absl::StatusOr<Calibration> c = Measure(options);
  if (!c.ok()) return c.status();
  if (!options.save_measurements.empty()) {
    if (absl::Status s = WriteWholeFile(options.save_measurements, MeasurementsToJson(*c)); !s.ok()) return s;
  }
  std::string fitted;
  if (!options.profiles.empty()) {
    absl::StatusOr<std::string> report = FitToProfiles(options.profiles, &c->device);
    if (!report.ok()) return report.status();
    fitted = *std::move(report);
  }
  TopologySpec spec;
  spec.name = absl::StrCat(c->source, ", calibrated");
  spec.devices.push_back(c->device);
  spec.latency = {0};
  spec.path_resources = {{}};
  absl::StatusOr<Topology> topology = Topology::Create(std::move(spec));
  if (!topology.ok()) return topology.status();
  std::string out = absl::StrCat(Report(*c), fitted);
  const std::string json = TopologyToJson(*topology);
  if (options.output.empty()) {  // the topology alone on stdout, to redirect
    std::cerr << out;
    return json;
  }
  if (absl::Status s = WriteWholeFile(options.output, json); !s.ok()) return s;
  return absl::StrCat(out, "\nwrote ", options.output, " (use it as --topology)\n");
}

}  // namespace placement::cli
