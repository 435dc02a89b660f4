#include "client/calibrate_command.h"

#include <algorithm>
#include <array>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "graph/cost_model.h"
#include "graph/file_io.h"
#include "graph/onnx/onnx_import.h"
#include "graph/topology_json.h"
#include "graph/torch_trace.h"
#include "graph/training.h"
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
    const double roof = RooflineSeconds(line.flops, line.bytes, d);
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

// One profiled operator: its class, its roofline time on the device and its measured time.
struct ProfiledOp {
  int op_class;
  double roofline;
  double seconds;
};

constexpr double kMinProfiledSeconds = 1e-6;
// Below this an operator's weight in the fit stops growing: the profiler's own cost per range is of this order.
constexpr double kFitFloorSeconds = 20e-6;

// A training step profiled: its training graph and what the trace measured of it.
struct TrainingProfile {
  Graph step;                  // forward, backward and Adam's updates
  double forward_seconds = 0;  // all module self time of the forward
  double step_seconds = 0;     // the whole profiled step
};

absl::Status AddProfile(const std::string& folder, const Device& d, std::vector<ProfiledOp>* ops,
                        std::vector<TrainingProfile>* training) {
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
    // An operator that shares its module with others gets a share of the module's time by FLOPs; one without
    // FLOPs beside ones with them gets none, which says nothing of its cost.
    if (times[0].second < kMinProfiledSeconds) continue;
    const OpId op = g.FindOp(name);
    ops->push_back(ProfiledOp{static_cast<int>(ClassOf(g, op)), RooflineSeconds(g.flops(op), g.bytes_accessed(op), d),
                              times[0].second});
  }
  absl::StatusOr<std::string> meta = ReadWholeFile(folder + "/meta.json");
  if (!meta.ok() || meta->find("\"training\": true") == std::string::npos || trace->step_seconds <= 0) {
    return absl::OkStatus();
  }
  absl::StatusOr<Graph> step = BuildTrainingGraph(g);
  if (!step.ok()) return step.status();
  double forward = 0;
  for (const auto& [module, seconds] : trace->self_seconds) forward += seconds;
  training->push_back(TrainingProfile{*std::move(step), forward, trace->step_seconds});
  return absl::OkStatus();
}

// The profiled training steps' backward (the step less the measured forward and the modelled updates) against
// the backward the benchmark factors model: one scale for every class's backward factor, since torch's traces
// do not tie backward kernels to the modules whose gradients they compute.
std::string ScaleBackward(const std::vector<TrainingProfile>& profiles, Device* d) {
  double modelled = 0, measured = 0;
  for (const TrainingProfile& p : profiles) {
    double backward = 0, updates = 0;
    for (OpId op = 0; op < p.step.num_ops(); ++op) {
      if (!p.step.is_backward(op)) continue;
      (IsBackwardType(p.step.op_type(op)) ? backward : updates) += ModelledSeconds(p.step, op, *d);
    }
    modelled += backward;
    measured += std::max(p.step_seconds - p.forward_seconds - updates, 0.1 * backward);
  }
  if (profiles.empty() || measured <= 0) return "";
  const double scale = modelled / measured;
  for (double& factor : d->backward_efficiency) factor = ClampEfficiency(factor * scale);
  return absl::StrFormat("backward factors scaled by %.3g from %d profiled training step(s)\n", scale, profiles.size());
}

// Classes holding at least kMinProfiledShare of the profiled time take the profiles' efficiency.
constexpr double kMinProfiledShare = 0.005;

// Fits seconds ~ overhead + roofline x slowdown[class] over the profiled operators, by least squares weighted by
// 1 / seconds (so that the many small operators, where the overhead shows, count beside the few large ones):
// alternately each class's slowdown with the overhead fixed and the overhead with the slowdowns fixed, both in
// closed form. Classes with too little profiled time keep their benchmark efficiency.
std::string ApplyFit(const std::vector<ProfiledOp>& ops, Device* d) {
  std::array<double, kNumOpClasses> time{}, slowdown{};
  double total = 0;
  for (const ProfiledOp& op : ops) time[op.op_class] += op.seconds, total += op.seconds;
  std::array<bool, kNumOpClasses> fitted{};
  for (int c = 0; c < kNumOpClasses; ++c) {
    fitted[c] = total > 0 && time[c] >= kMinProfiledShare * total;
    slowdown[c] = 1 / d->efficiency[c];
  }
  double overhead = d->launch_overhead;
  for (int round = 0; round < 100; ++round) {
    std::array<double, kNumOpClasses> num{}, den{};
    for (const ProfiledOp& op : ops) {
      const double w = 1 / std::max(op.seconds, kFitFloorSeconds);
      const bool view = op.op_class == static_cast<int>(OpClass::kView);
      num[op.op_class] += w * op.roofline * (op.seconds - (view ? 0.0 : overhead));
      den[op.op_class] += w * op.roofline * op.roofline;
    }
    for (int c = 0; c < kNumOpClasses; ++c) {
      if (fitted[c] && den[c] > 0)
        slowdown[c] = std::clamp(num[c] / den[c], 1e-3, 1e3);  // ClampEfficiency's range, as 1/efficiency
    }
    double residual = 0, weight = 0;
    for (const ProfiledOp& op : ops) {
      if (op.op_class == static_cast<int>(OpClass::kView)) continue;  // views pay no launch overhead
      const double w = 1 / std::max(op.seconds, kFitFloorSeconds);
      residual += w * (op.seconds - op.roofline * slowdown[op.op_class]);
      weight += w;
    }
    overhead = weight > 0 ? std::max(residual / weight, 0.0) : overhead;
  }
  std::string out =
      absl::StrFormat("fitted on %d profiled operators (%s): overhead %s per operator (benchmark %s),", ops.size(),
                      FormatSeconds(total), FormatSeconds(overhead), FormatSeconds(d->launch_overhead));
  d->launch_overhead = overhead;
  for (int c = 0; c < kNumOpClasses; ++c) {
    if (!fitted[c]) continue;
    absl::StrAppendFormat(&out, " %s %.3g (benchmarks %.3g),", OpClassName(static_cast<OpClass>(c)), 1 / slowdown[c],
                          d->efficiency[c]);
    d->efficiency[c] = 1 / slowdown[c];
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
    std::vector<ProfiledOp> ops;
    std::vector<TrainingProfile> training;
    for (const std::string& folder : options.profiles) {
      if (absl::Status s = AddProfile(folder, c->device, &ops, &training); !s.ok()) return s;
    }
    fitted = absl::StrCat(ApplyFit(ops, &c->device), ScaleBackward(training, &c->device));
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
