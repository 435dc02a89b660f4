#include "client/calibrate_command.h"

#include <algorithm>
#include <array>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "graph/file_io.h"
#include "graph/onnx/onnx_import.h"
#include "graph/torch_trace.h"
#include "graph/topology_json.h"
#include "graph/units.h"
#include "policy/learned/host_calibration.h"

namespace placement::cli {
namespace {

std::string Report(const learned::Calibration& c, int threads) {
  const Device& d = c.device;
  std::string out = absl::StrFormat(
      "host: %d thread(s); peak %s (float32 GEMM), memory %s (copy), launch overhead %s\n\n"
      "%-14s %-40s %12s %12s %11s %11s %8s\n",
      threads, FormatFlops(d.peak_flops), FormatBandwidth(d.memory_bandwidth), FormatSeconds(d.launch_overhead),
      "class", "layer", "FLOPs", "bytes", "forward", "backward", "of roof");
  for (const learned::CalibrationLine& line : c.lines) {
    const double roof = std::max(line.flops / d.peak_flops, line.bytes / d.memory_bandwidth);
    absl::StrAppendFormat(&out, "%-14s %-40s %12.3g %12.3g %11s %11s %7.0f%%\n", line.op_class, line.layer,
                          line.flops, line.bytes, FormatSeconds(line.forward_seconds),
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

// Roofline and measured seconds per operator class over the profiled operators.
struct ClassFit {
  std::array<double, kNumOpClasses> roofline{};
  std::array<double, kNumOpClasses> measured{};
  int32_t operators = 0;
};

absl::Status AddProfile(const std::string& folder, const Device& d, ClassFit* fit) {
  absl::StatusOr<OnnxImportResult> model = ImportOnnxFile(folder + "/model.onnx", OnnxImportOptions{});
  if (!model.ok()) return model.status();
  absl::StatusOr<std::string> text = ReadWholeFile(folder + "/trace.json");
  if (!text.ok()) return text.status();
  absl::StatusOr<ModuleTimes> trace = ParseTorchTrace(*text);
  if (!trace.ok()) return absl::InvalidArgumentError(absl::StrCat(folder, "/trace.json: ", trace.status().message()));
  const Graph& g = model->problem.graph;
  std::vector<std::string> warnings;
  const MeasuredCosts costs = MatchModuleTimes(g, *trace, "*", &warnings);
  for (const auto& [name, times] : costs.times) {
    const OpId op = g.FindOp(name);
    const int c = static_cast<int>(ClassOf(g, op));
    fit->roofline[c] += std::max(g.flops(op) / d.peak_flops, g.bytes_accessed(op) / d.memory_bandwidth);
    fit->measured[c] += std::max(times[0].second - d.launch_overhead, 0.0);
    ++fit->operators;
  }
  return absl::OkStatus();
}

// Classes holding at least kMinProfiledShare of the profiled time take the profiles' efficiency.
constexpr double kMinProfiledShare = 0.005;

std::string ApplyFit(const ClassFit& fit, Device* d) {
  double total = 0;
  for (double t : fit.measured) total += t;
  std::string out = absl::StrCat("fitted on ", fit.operators, " profiled operators (", FormatSeconds(total), "):");
  for (int c = 0; c < kNumOpClasses; ++c) {
    if (total <= 0 || fit.measured[c] < kMinProfiledShare * total || fit.roofline[c] <= 0) continue;
    const double efficiency = std::clamp(fit.roofline[c] / fit.measured[c], 1e-3, 1e3);
    absl::StrAppendFormat(&out, " %s %.3g (benchmarks %.3g),", OpClassName(static_cast<OpClass>(c)), efficiency,
                          d->efficiency[c]);
    d->efficiency[c] = efficiency;
  }
  out.back() = '\n';
  return out;
}

}  // namespace

absl::StatusOr<std::string> RunCalibrate(const CalibrateOptions& options) {
  if (options.threads < 1) return absl::InvalidArgumentError("--threads must be at least 1");
  if (!(options.seconds_per_measurement > 0 && options.seconds_per_measurement <= 10)) {
    return absl::InvalidArgumentError("--measure_seconds must be above 0 and at most 10");
  }
  learned::CalibrationOptions o;
  o.threads = options.threads;
  o.kind = options.kind;
  o.seconds_per_measurement = options.seconds_per_measurement;
  absl::StatusOr<learned::Calibration> c = learned::CalibrateHost(o);
  if (!c.ok()) return c.status();
  std::string fitted;
  if (!options.profiles.empty()) {
    ClassFit fit;
    for (const std::string& folder : options.profiles) {
      if (absl::Status s = AddProfile(folder, c->device, &fit); !s.ok()) return s;
    }
    fitted = ApplyFit(fit, &c->device);
  }
  TopologySpec spec;
  spec.name = absl::StrCat("this host, ", options.threads, " thread(s), calibrated");
  spec.devices.push_back(c->device);
  spec.latency = {0};
  spec.path_resources = {{}};
  absl::StatusOr<Topology> topology = Topology::Create(std::move(spec));
  if (!topology.ok()) return topology.status();
  std::string out = absl::StrCat(Report(*c, options.threads), fitted);
  const std::string json = TopologyToJson(*topology);
  if (options.output.empty()) {  // the topology alone on stdout, to redirect
    std::cerr << out;
    return json;
  }
  if (absl::Status s = WriteWholeFile(options.output, json); !s.ok()) return s;
  return absl::StrCat(out, "\nwrote ", options.output, " (use it as --topology)\n");
}

}  // namespace placement::cli
