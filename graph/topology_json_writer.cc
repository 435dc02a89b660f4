#include "graph/topology_json.h"

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "absl/base/casts.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"

namespace placement {
namespace {

using Json = nlohmann::json;

nlohmann::ordered_json ClassFactorsJson(const ClassFactors& factors) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (int i = 0; i < kNumOpClasses; ++i) j[std::string(OpClassName(static_cast<OpClass>(i)))] = factors[i];
  return j;
}

// Names come from C++ callers too, where nothing guarantees valid UTF-8; dump() would throw on it.
template <typename J>
std::string Dump(const J& j) {
  return j.dump(-1, ' ', false, J::error_handler_t::replace);
}

// Every figure of the device, the per-class ones only where they differ from the plain roofline's.
nlohmann::ordered_json DeviceJson(const Device& dev) {
  nlohmann::ordered_json j = {{"name", dev.name},
                              {"kind", dev.kind},
                              {"type", dev.type == DeviceType::kCpu ? "cpu" : "accelerator"},
                              {"peak_flops", dev.peak_flops},
                              {"memory_bandwidth", dev.memory_bandwidth},
                              {"memory", dev.memory_bytes},
                              {"launch_overhead", dev.launch_overhead},
                              {"host", dev.host}};
  if (dev.host_op_overhead > 0) j["host_op_overhead"] = dev.host_op_overhead;
  if (dev.host_backward_op_overhead > 0) j["host_backward_op_overhead"] = dev.host_backward_op_overhead;
  if (dev.efficiency != kUnitFactors) j["efficiency"] = ClassFactorsJson(dev.efficiency);
  if (dev.backward_efficiency != kUnitFactors) j["backward_efficiency"] = ClassFactorsJson(dev.backward_efficiency);
  if (dev.serial_bandwidth != ClassFactors{}) j["serial_bandwidth"] = ClassFactorsJson(dev.serial_bandwidth);
  if (dev.intensity_curves != ClassCurves{}) {
    nlohmann::ordered_json& curves = j["intensity_curves"] = nlohmann::ordered_json::object();
    for (int c = 0; c < kNumOpClasses; ++c) {
      const IntensityCurve& curve = dev.intensity_curves[c];
      if (curve.size == 0) continue;
      nlohmann::ordered_json& points = curves[std::string(OpClassName(static_cast<OpClass>(c)))];
      points = nlohmann::ordered_json::array();
      for (int k = 0; k < curve.size; ++k) points.push_back({curve.intensity[k], curve.factor[k]});
    }
  }
  return j;
}

// The rows of "paths": each a line of the output, indented and comma-separated as the rest of the file.
struct PathMatrices {
  std::string latency;
  std::string resources;
};

// The n x n path matrices are written directly, in the text Dump() gives (compact arrays), with each distinct
// latency formatted once: building a Json value per pair made a 1,024-device topology take a large share of
// a request's time (the server writes the topology into every cache key).
PathMatrices WritePathMatrices(const Topology& t) {
  const int32_t n = t.num_devices();
  PathMatrices m;
  std::string& latency = m.latency;
  std::string& resources = m.resources;
  absl::flat_hash_map<uint64_t, std::string> latency_text;  // by bit pattern: -0.0 and NaN stay exact
  for (DeviceId a = 0; a < n; ++a) {
    latency.append("      [");
    resources.append("      [");
    for (DeviceId b = 0; b < n; ++b) {
      const Path& p = t.path(a, b);
      const double value = a == b ? 0.0 : p.latency;
      auto [it, inserted] = latency_text.try_emplace(absl::bit_cast<uint64_t>(value));
      if (inserted) it->second = Dump(Json(value));
      if (b > 0) {
        latency.push_back(',');
        resources.push_back(',');
      }
      latency.append(it->second);
      resources.push_back('[');
      if (a != b) {
        bool first = true;
        for (int32_t r : t.path_resources(p)) {
          if (!first) resources.push_back(',');
          first = false;
          absl::StrAppend(&resources, r);
        }
      }
      resources.push_back(']');
    }
    const char* end = a + 1 < n ? "],\n" : "]\n";
    latency.append(end);
    resources.append(end);
  }
  return m;
}

}  // namespace

std::string TopologyToJson(const Topology& t) {
  // Written by hand rather than by Json::dump(2) so that each device and each matrix row is one line.
  const int32_t n = t.num_devices();
  std::string out = absl::StrCat("{\n  \"name\": ", Dump(Json(t.name())), ",\n  \"devices\": [\n");
  for (DeviceId d = 0; d < n; ++d)
    absl::StrAppend(&out, "    ", Dump(DeviceJson(t.device(d))), d + 1 < n ? ",\n" : "\n");
  absl::StrAppend(&out, "  ],\n  \"resources\": [\n");
  for (int32_t r = 0; r < t.num_resources(); ++r) {
    nlohmann::ordered_json j = {{"name", t.resource(r).name}, {"bandwidth", t.resource(r).bandwidth}};
    absl::StrAppend(&out, "    ", Dump(j), r + 1 < t.num_resources() ? ",\n" : "\n");
  }
  const PathMatrices paths = WritePathMatrices(t);
  absl::StrAppend(&out, "  ],\n  \"paths\": {\n    \"latency\": [\n", paths.latency, "    ],\n    \"resources\": [\n",
                  paths.resources, "    ]\n  }",
                  t.data_parallel_across_hosts() ? "" : ",\n  \"data_parallel_across_hosts\": false", "\n}\n");
  return out;
}

}  // namespace placement
