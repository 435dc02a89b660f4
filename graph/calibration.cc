#include "graph/calibration.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <nlohmann/json.hpp>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "graph/cost_model.h"
#include "graph/json_read.h"
#include "graph/json_text.h"
#include "graph/op_class.h"
#include "graph/status_macros.h"

namespace placement {
namespace {

// An accelerator's host thread issues each operator of eager PyTorch in a multiple of the time one tiny operator
// takes from Python (the measured launch overhead): the module call and autograd's bookkeeping forward, the
// autograd engine's node, its gradient accumulation and the optimizer's share of the parameters backward. The
// multiples were fitted on one H100 host (PyTorch 2.11, fifteen torchvision models at batch 32, bench/fidelity/h100)
// and hold on an H200 host whose launches took 7.2 us against 11.3 (docs/BENCHMARKS.md, "The host's dispatch").
// A CPU runs its operators on the thread that issues them: no overlap, nothing to add.
constexpr double kHostForwardPerLaunch = 3.5;
constexpr double kHostBackwardPerLaunch = 8.9;

void SetHostOverheads(Device& d) {
  if (d.type == DeviceType::kCpu) return;
  d.host_op_overhead = kHostForwardPerLaunch * d.launch_overhead;
  d.host_backward_op_overhead = kHostBackwardPerLaunch * d.launch_overhead;
}

using Json = nlohmann::json;

bool PositiveFinite(double x) { return std::isfinite(x) && x > 0; }

// A figure the file must give: a finite, non-negative number (json_read.h's Figure, without units).
absl::StatusOr<double> RequiredFigure(const Json& object, absl::string_view path, const char* key) {
  const Json* v = json::Find(object, key);
  if (v == nullptr) return json::Err(json::Child(path, key), "is required");
  return json::Figure(*v, json::Child(path, key), nullptr);
}

// An optional string, `fallback` where it is absent.
absl::StatusOr<std::string> OptionalString(const Json& object, absl::string_view path, const char* key,
                                           std::string fallback) {
  const Json* v = json::Find(object, key);
  return v == nullptr ? fallback : json::String(*v, json::Child(path, key));
}

absl::StatusOr<CalibrationLine> LineOf(const Json& j, absl::string_view path) {
  if (!j.is_object()) return json::Err(path, absl::StrCat("expected an object, got ", j.type_name()));
  CalibrationLine line;
  const Json* op_class = json::Find(j, "op_class");
  if (op_class == nullptr) return json::Err(json::Child(path, "op_class"), "is required");
  ASSIGN_OR_RETURN(line.op_class, json::String(*op_class, json::Child(path, "op_class")));
  ASSIGN_OR_RETURN(line.layer, OptionalString(j, path, "layer", std::string(path)));
  ASSIGN_OR_RETURN(line.flops, RequiredFigure(j, path, "flops"));
  ASSIGN_OR_RETURN(line.bytes, RequiredFigure(j, path, "bytes"));
  ASSIGN_OR_RETURN(line.forward_seconds, RequiredFigure(j, path, "forward_seconds"));
  if (j.contains("backward_seconds")) {
    ASSIGN_OR_RETURN(line.backward_seconds, RequiredFigure(j, path, "backward_seconds"));
  }
  if (j.contains("backward_ops")) {
    ASSIGN_OR_RETURN(const double ops, RequiredFigure(j, path, "backward_ops"));
    line.backward_ops = static_cast<int>(ops);
  }
  if (j.contains("window")) {
    ASSIGN_OR_RETURN(const double window, RequiredFigure(j, path, "window"));
    line.window = static_cast<int32_t>(std::min(window, 1e9));
  }
  RETURN_IF_ERROR(json::OptionalBool(j, path, "channels_last", &line.channels_last));
  return line;
}

// A narrow-window matrix product or convolution measured on a GPU: its intensity and the roofline's share it
// reached.
struct CurvePoint {
  double intensity = 0;
  double efficiency = 0;
};

// The curves of a GPU's matrix products and dense convolutions (Device::intensity_curves), from the layers of
// each class at 1x1 and 3x3 windows: the 7x7 stem convolution on three channels runs at a quarter of the rate of a
// 1x1 one of lower intensity, which says more about its three channels than about intensity. A CPU keeps one
// factor per class: its profiles fit serial bandwidths per class instead (placectl calibrate --profiles).
void SetIntensityCurves(std::array<std::vector<CurvePoint>, kNumOpClasses> points, Device& d) {
  if (d.type != DeviceType::kAccelerator) return;
  for (OpClass c : {OpClass::kConv}) {
    std::vector<CurvePoint>& p = points[static_cast<int>(c)];
    std::sort(p.begin(), p.end(), [](const CurvePoint& a, const CurvePoint& b) { return a.intensity < b.intensity; });
    // Layers of one intensity are one point, at their geometric mean.
    std::vector<CurvePoint> merged;
    for (size_t i = 0; i < p.size();) {
      size_t j = i;
      double log_sum = 0;
      for (; j < p.size() && p[j].intensity == p[i].intensity; ++j) log_sum += std::log(p[j].efficiency);
      merged.push_back({p[i].intensity, std::exp(log_sum / static_cast<double>(j - i))});
      i = j;
    }
    if (merged.size() < 2) continue;
    IntensityCurve& curve = d.intensity_curves[static_cast<int>(c)];
    const size_t n = std::min<size_t>(merged.size(), IntensityCurve::kMaxPoints);
    curve.size = static_cast<int32_t>(n);
    for (size_t k = 0; k < n; ++k) {  // evenly over the points, both ends kept, where there are more than fit
      const CurvePoint& point = merged[n == merged.size() ? k : k * (merged.size() - 1) / (n - 1)];
      curve.intensity[k] = point.intensity;
      curve.factor[k] = point.efficiency / d.efficiency[static_cast<int>(c)];
    }
  }
}

}  // namespace

double MedianRatio(std::vector<double> ratios) {
  if (ratios.empty()) return 0;
  std::sort(ratios.begin(), ratios.end());
  const size_t n = ratios.size();
  return n % 2 == 1 ? ratios[n / 2] : std::sqrt(ratios[n / 2 - 1] * ratios[n / 2]);
}

absl::Status DeriveEfficiencies(Calibration* calibration) {
  Device& d = calibration->device;
  for (double figure : {d.peak_flops, d.memory_bandwidth}) {
    if (!PositiveFinite(figure)) return absl::InvalidArgumentError("peak_flops and memory_bandwidth must be positive");
  }
  std::array<double, kNumOpClasses> roof{}, spent{};
  std::array<std::vector<double>, kNumOpClasses> back_ratios;  // per layer: backward over forward
  std::array<std::vector<CurvePoint>, kNumOpClasses> curve_points;
  for (CalibrationLine& line : calibration->lines) {
    const std::optional<OpClass> named = OpClassFromName(line.op_class);
    if (!named)
      return absl::InvalidArgumentError(absl::StrCat("layer '", line.layer, "': unknown class '", line.op_class, "'"));
    if (!PositiveFinite(line.forward_seconds) || line.flops < 0 || line.bytes < 0 || line.backward_seconds < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("layer '", line.layer, "': times must be positive, counts not negative"));
    }
    // Classed as the cost model classes the importer's operators: by type, then by intensity.
    const OpClass op_class = RefineByIntensity(*named, line.flops, line.bytes, line.window, line.channels_last);
    line.op_class = std::string(OpClassName(op_class));
    const int c = static_cast<int>(op_class);
    const double roofline = ClassRooflineSeconds(op_class, line.flops, line.bytes, d);
    const double forward = std::max(line.forward_seconds - d.launch_overhead, 0.05 * line.forward_seconds);
    roof[c] += roofline;
    spent[c] += forward;
    if (line.flops > 0 && line.bytes > 0 && line.window <= kMaxNarrowWindow) {
      curve_points[c].push_back({line.flops / line.bytes, roofline / forward});
    }
    const bool timed_backward = line.backward_ops > 0 && line.backward_seconds > 0;
    const double backward =
        std::max(line.backward_seconds - line.backward_ops * d.launch_overhead, 0.05 * line.backward_seconds);
    if (timed_backward) back_ratios[c].push_back(backward / forward);
    // The eval-mode batch normalization layer was the normalization class's before it had a class of its own, and
    // stays among its layers: a training step's batch normalizations keep the figures they had.
    if (op_class == OpClass::kInferenceBatchNorm) {
      const int n = static_cast<int>(OpClass::kNormalization);
      roof[n] += roofline;
      spent[n] += forward;
      if (timed_backward) back_ratios[n].push_back(backward / forward);
    }
  }
  for (int c = 0; c < kNumOpClasses; ++c) {
    if (spent[c] > 0) d.efficiency[c] = ClampEfficiency(roof[c] / spent[c]);
    // The model's backward is twice the forward's work: at factor 1 it takes twice the forward's time. The
    // median layer's ratio rather than the pooled one: a kernel that now and then runs in a slow mode (torch 1.13's
    // 5x5 depthwise backward on two threads, 27 to 37 ms or 80 to 110 ms for the same layer) moves it less.
    if (!back_ratios[c].empty()) d.backward_efficiency[c] = ClampEfficiency(2 / MedianRatio(back_ratios[c]));
  }
  const int other = static_cast<int>(OpClass::kOther), elementwise = static_cast<int>(OpClass::kElementwise);
  d.efficiency[other] = d.efficiency[elementwise];
  d.backward_efficiency[other] = d.backward_efficiency[elementwise];
  // Measurements without a wide convolution (made before windows were recorded) leave it as the thin ones, and
  // those without a channels-last one (made before layouts were) leave that as the wide ones.
  for (const auto& [missing, like] : kClassFallbacks) {
    const int m = static_cast<int>(missing), l = static_cast<int>(like);
    if (spent[m] == 0) d.efficiency[m] = d.efficiency[l];
    if (back_ratios[m].empty()) d.backward_efficiency[m] = d.backward_efficiency[l];
  }
  SetIntensityCurves(std::move(curve_points), d);
  return absl::OkStatus();
}

absl::StatusOr<Calibration> ParseMeasurements(absl::string_view text) {
  RETURN_IF_ERROR(CheckJsonText(text, "the measurements"));
  const Json root = Json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (!root.is_object()) return absl::InvalidArgumentError("the measurements must be a JSON object");
  if (!root.contains("device") || !root["device"].is_object()) {
    return absl::InvalidArgumentError("the measurements need a \"device\" object");
  }
  const Json& device = root["device"];
  Calibration c;
  Device& d = c.device;
  ASSIGN_OR_RETURN(d.kind, OptionalString(device, "device", "kind", ""));
  if (d.kind.empty()) return json::Err("device.kind", "is required, a non-empty string");
  // "cpu0", "h200_0": a kind that ends in a digit keeps it apart from the device's number.
  d.name = absl::StrCat(absl::AsciiStrToLower(d.kind), absl::ascii_isdigit(d.kind.back()) ? "_0" : "0");
  d.type = absl::EqualsIgnoreCase(d.kind, "cpu") ? DeviceType::kCpu : DeviceType::kAccelerator;
  const Json* memory = json::Find(device, "memory_bytes");
  if (memory == nullptr) return json::Err("device.memory_bytes", "is required");
  ASSIGN_OR_RETURN(d.memory_bytes, json::ByteCount(*memory, "device.memory_bytes"));
  ASSIGN_OR_RETURN(d.peak_flops, RequiredFigure(root, "", "peak_flops"));
  ASSIGN_OR_RETURN(d.memory_bandwidth, RequiredFigure(root, "", "memory_bandwidth"));
  ASSIGN_OR_RETURN(d.launch_overhead, RequiredFigure(root, "", "launch_overhead"));
  SetHostOverheads(d);
  const Json* lines = json::Find(root, "lines");
  if (lines == nullptr || !lines->is_array() || lines->empty()) {
    return absl::InvalidArgumentError("the measurements need a non-empty \"lines\" array");
  }
  for (size_t i = 0; i < lines->size(); ++i) {
    ASSIGN_OR_RETURN(CalibrationLine line, LineOf((*lines)[i], json::Index("lines", i)));
    c.lines.push_back(std::move(line));
  }
  ASSIGN_OR_RETURN(const std::string name, OptionalString(device, "device", "name", d.kind));
  ASSIGN_OR_RETURN(const std::string torch, OptionalString(root, "", "torch", ""));
  c.source = absl::StrCat(name, torch.empty() ? "" : ", PyTorch ", torch);
  RETURN_IF_ERROR(DeriveEfficiencies(&c));
  return c;
}

absl::StatusOr<Calibration> MedianOfCalibrations(const std::vector<Calibration>& timings) {
  if (timings.empty()) return absl::InvalidArgumentError("no measurements to take the median of");
  Calibration merged = timings[0];
  for (size_t t = 1; t < timings.size(); ++t) {
    const Calibration& other = timings[t];
    if (other.device.kind != merged.device.kind || other.lines.size() != merged.lines.size()) {
      return absl::InvalidArgumentError(absl::StrCat("measurements ", t, " are of ", other.device.kind, " with ",
                                                     other.lines.size(), " layers, measurements 0 of ",
                                                     merged.device.kind, " with ", merged.lines.size()));
    }
    for (size_t i = 0; i < other.lines.size(); ++i) {
      const CalibrationLine &a = merged.lines[i], &b = other.lines[i];
      // Whether a backward was timed is backward_ops: a backward_seconds of 0 is also what a layer's backward too
      // short to tell from the timing's noise comes out as (its time less the forward's, clamped at 0).
      if (a.layer != b.layer || a.flops != b.flops || a.bytes != b.bytes || a.backward_ops != b.backward_ops) {
        return absl::InvalidArgumentError(absl::StrCat("measurements ", t, ", layer ", i, " '", b.layer, "' (", b.flops,
                                                       " FLOPs, ", b.bytes, " bytes, ", b.backward_ops,
                                                       " backward operators): not measurements 0's '", a.layer, "' (",
                                                       a.flops, " FLOPs, ", a.bytes, " bytes, ", a.backward_ops, ")"));
      }
    }
  }
  const auto median_of = [&timings](auto figure) {
    std::vector<double> values;
    for (const Calibration& c : timings) values.push_back(figure(c));
    return MedianRatio(std::move(values));
  };
  Device& d = merged.device;
  d.peak_flops = median_of([](const Calibration& c) { return c.device.peak_flops; });
  d.memory_bandwidth = median_of([](const Calibration& c) { return c.device.memory_bandwidth; });
  d.launch_overhead = median_of([](const Calibration& c) { return c.device.launch_overhead; });
  SetHostOverheads(d);
  for (size_t i = 0; i < merged.lines.size(); ++i) {
    merged.lines[i].forward_seconds = median_of([i](const Calibration& c) { return c.lines[i].forward_seconds; });
    // Of the timings whose backward came out above 0 (see above); 0, not timed, where none did.
    std::vector<double> backward;
    for (const Calibration& c : timings) {
      if (c.lines[i].backward_seconds > 0) backward.push_back(c.lines[i].backward_seconds);
    }
    merged.lines[i].backward_seconds = MedianRatio(std::move(backward));
  }
  if (timings.size() > 1) absl::StrAppend(&merged.source, ", median of ", timings.size(), " timings");
  RETURN_IF_ERROR(DeriveEfficiencies(&merged));
  return merged;
}

std::string MeasurementsToJson(const Calibration& calibration) {
  const Device& d = calibration.device;
  Json root = {{"device", {{"name", calibration.source}, {"kind", d.kind}, {"memory_bytes", d.memory_bytes}}},
               {"peak_flops", d.peak_flops},
               {"memory_bandwidth", d.memory_bandwidth},
               {"launch_overhead", d.launch_overhead},
               {"lines", Json::array()}};
  for (const CalibrationLine& line : calibration.lines) {
    root["lines"].push_back({{"op_class", line.op_class},
                             {"layer", line.layer},
                             {"flops", line.flops},
                             {"bytes", line.bytes},
                             {"forward_seconds", line.forward_seconds},
                             {"backward_seconds", line.backward_seconds},
                             {"backward_ops", line.backward_ops},
                             {"window", line.window}});
    if (line.channels_last) root["lines"].back()["channels_last"] = true;
  }
  return root.dump(2);
}

}  // namespace placement
