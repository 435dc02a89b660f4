#include "graph/calibration.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <nlohmann/json.hpp>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "graph/cost_model.h"
#include "graph/json_text.h"
#include "graph/op_class.h"
#include "graph/status_macros.h"

namespace placement {
namespace {

using Json = nlohmann::json;

bool PositiveFinite(double x) { return std::isfinite(x) && x > 0; }

absl::StatusOr<double> Number(const Json& object, const char* key, absl::string_view where) {
  if (!object.contains(key) || !object[key].is_number()) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": \"", key, "\" must be a number"));
  }
  return object[key].get<double>();
}

absl::StatusOr<CalibrationLine> LineOf(const Json& j, size_t i) {
  const std::string where = absl::StrCat("lines[", i, "]");
  if (!j.is_object()) return absl::InvalidArgumentError(absl::StrCat(where, " must be an object"));
  CalibrationLine line;
  if (!j.contains("op_class") || !j["op_class"].is_string()) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": \"op_class\" must be a string"));
  }
  line.op_class = j["op_class"].get<std::string>();
  line.layer = j.contains("layer") && j["layer"].is_string() ? j["layer"].get<std::string>() : where;
  ASSIGN_OR_RETURN(line.flops, Number(j, "flops", where));
  ASSIGN_OR_RETURN(line.bytes, Number(j, "bytes", where));
  ASSIGN_OR_RETURN(line.forward_seconds, Number(j, "forward_seconds", where));
  if (j.contains("backward_seconds")) {
    ASSIGN_OR_RETURN(line.backward_seconds, Number(j, "backward_seconds", where));
  }
  if (j.contains("backward_ops")) {
    ASSIGN_OR_RETURN(const double ops, Number(j, "backward_ops", where));
    line.backward_ops = static_cast<int>(ops);
  }
  return line;
}

}  // namespace

absl::Status DeriveEfficiencies(Calibration* calibration) {
  Device& d = calibration->device;
  for (double figure : {d.peak_flops, d.memory_bandwidth}) {
    if (!PositiveFinite(figure)) return absl::InvalidArgumentError("peak_flops and memory_bandwidth must be positive");
  }
  std::array<double, kNumOpClasses> roof{}, spent{}, back_model{}, back_spent{};
  for (CalibrationLine& line : calibration->lines) {
    const std::optional<OpClass> named = OpClassFromName(line.op_class);
    if (!named)
      return absl::InvalidArgumentError(absl::StrCat("layer '", line.layer, "': unknown class '", line.op_class, "'"));
    if (!PositiveFinite(line.forward_seconds) || line.flops < 0 || line.bytes < 0 || line.backward_seconds < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("layer '", line.layer, "': times must be positive, counts not negative"));
    }
    // Classed as the cost model classes the importer's operators: by type, then by intensity.
    const OpClass op_class = RefineByIntensity(*named, line.flops, line.bytes);
    line.op_class = std::string(OpClassName(op_class));
    const int c = static_cast<int>(op_class);
    const double roofline = RooflineSeconds(line.flops, line.bytes, d);
    roof[c] += roofline;
    spent[c] += std::max(line.forward_seconds - d.launch_overhead, 0.05 * line.forward_seconds);
    if (line.backward_ops > 0 && line.backward_seconds > 0) {
      back_model[c] += 2 * roofline;  // divided by the forward efficiency below
      back_spent[c] +=
          std::max(line.backward_seconds - line.backward_ops * d.launch_overhead, 0.05 * line.backward_seconds);
    }
  }
  for (int c = 0; c < kNumOpClasses; ++c) {
    if (spent[c] > 0) d.efficiency[c] = ClampEfficiency(roof[c] / spent[c]);
    if (back_spent[c] > 0) d.backward_efficiency[c] = ClampEfficiency(back_model[c] / d.efficiency[c] / back_spent[c]);
  }
  const int other = static_cast<int>(OpClass::kOther), elementwise = static_cast<int>(OpClass::kElementwise);
  d.efficiency[other] = d.efficiency[elementwise];
  d.backward_efficiency[other] = d.backward_efficiency[elementwise];
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
  d.kind = device.contains("kind") && device["kind"].is_string() ? device["kind"].get<std::string>() : "";
  if (d.kind.empty()) return absl::InvalidArgumentError("device: \"kind\" must be a non-empty string");
  d.name = absl::StrCat(absl::AsciiStrToLower(d.kind), "0");
  d.type = absl::EqualsIgnoreCase(d.kind, "cpu") ? DeviceType::kCpu : DeviceType::kAccelerator;
  ASSIGN_OR_RETURN(const double memory, Number(device, "memory_bytes", "device"));
  d.memory_bytes = static_cast<int64_t>(memory);
  ASSIGN_OR_RETURN(d.peak_flops, Number(root, "peak_flops", "the measurements"));
  ASSIGN_OR_RETURN(d.memory_bandwidth, Number(root, "memory_bandwidth", "the measurements"));
  ASSIGN_OR_RETURN(d.launch_overhead, Number(root, "launch_overhead", "the measurements"));
  if (!root.contains("lines") || !root["lines"].is_array() || root["lines"].empty()) {
    return absl::InvalidArgumentError("the measurements need a non-empty \"lines\" array");
  }
  for (size_t i = 0; i < root["lines"].size(); ++i) {
    ASSIGN_OR_RETURN(CalibrationLine line, LineOf(root["lines"][i], i));
    c.lines.push_back(std::move(line));
  }
  const std::string name =
      device.contains("name") && device["name"].is_string() ? device["name"].get<std::string>() : d.kind;
  const std::string torch = root.contains("torch") && root["torch"].is_string() ? root["torch"].get<std::string>() : "";
  c.source = absl::StrCat(name, torch.empty() ? "" : ", PyTorch ", torch);
  RETURN_IF_ERROR(DeriveEfficiencies(&c));
  return c;
}

}  // namespace placement
