#include "graph/topology_json_fields.h"

#include <array>
#include <cmath>
#include <optional>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/status_macros.h"
#include "graph/topology_json.h"
#include "graph/units.h"

namespace placement::topology_json {

absl::Status CheckObject(const Json& j, absl::string_view path, Keys known) {
  return json::CheckObject(j, path, known, "the topology");
}

absl::StatusOr<double> Quantity(const Json& j, absl::string_view path, UnitParser parse, bool positive) {
  absl::StatusOr<double> v = json::Figure(j, path, parse);
  if (v.ok() && positive && *v == 0) return Err(path, "must be positive (got 0)");
  return v;
}

absl::StatusOr<int64_t> Count(const Json& j, absl::string_view path) {
  // Positive JSON integers are stored unsigned and negative ones signed, so each is read as what it is.
  const bool in_range = j.is_number_unsigned()  ? j.get<uint64_t>() >= 1 && j.get<uint64_t>() <= kMaxTopologyDevices
                        : j.is_number_integer() ? j.get<int64_t>() >= 1 && j.get<int64_t>() <= kMaxTopologyDevices
                                                : false;
  if (!in_range)
    return Err(path, absl::StrCat("expected a whole number from 1 to ", kMaxTopologyDevices, ", got ", j.dump()));
  return j.get<int64_t>();
}

absl::StatusOr<int64_t> MemoryBytes(const Json& j, absl::string_view path) {
  if (j.is_string() && absl::EqualsIgnoreCase(j.get_ref<const std::string&>(), "unlimited")) return 0;
  return json::ByteCount(j, path);
}

namespace {

// The class a key of a per-class object names.
absl::StatusOr<OpClass> ClassOfKey(const std::string& name, absl::string_view path) {
  const std::optional<OpClass> c = OpClassFromName(name);
  if (c) return *c;
  std::vector<std::string> names;
  for (int i = 0; i < kNumOpClasses; ++i) names.emplace_back(OpClassName(static_cast<OpClass>(i)));
  return Err(Child(path, name), absl::StrCat("unknown operator class; the classes are ", absl::StrJoin(names, ", ")));
}

bool PositiveFiniteNumber(double x) { return x > 0 && std::isfinite(x); }

}  // namespace

absl::Status ReadClassBandwidths(const Json& j, absl::string_view path, ClassFactors* out) {
  if (!j.is_object()) return Err(path, absl::StrCat("expected an object of operator classes, got ", j.type_name()));
  for (const auto& [name, value] : j.items()) {
    ASSIGN_OR_RETURN(const OpClass c, ClassOfKey(name, path));
    ASSIGN_OR_RETURN((*out)[static_cast<int>(c)], Quantity(value, Child(path, name), ParseBandwidth, false));
  }
  return absl::OkStatus();
}

absl::Status ReadIntensityCurves(const Json& j, absl::string_view path, ClassCurves* out) {
  if (!j.is_object()) return Err(path, absl::StrCat("expected an object of operator classes, got ", j.type_name()));
  for (const auto& [name, points] : j.items()) {
    ASSIGN_OR_RETURN(const OpClass c, ClassOfKey(name, path));
    const std::string at = Child(path, name);
    if (!points.is_array() || points.size() < 2 || points.size() > IntensityCurve::kMaxPoints) {
      return Err(at, absl::StrCat("expected 2 to ", IntensityCurve::kMaxPoints,
                                  " points [FLOPs per byte, factor], got ", points.dump()));
    }
    IntensityCurve& curve = (*out)[static_cast<int>(c)];
    curve = IntensityCurve{};
    for (const Json& point : points) {
      const bool pair = point.is_array() && point.size() == 2 && point[0].is_number() && point[1].is_number();
      const double intensity = pair ? point[0].get<double>() : 0, factor = pair ? point[1].get<double>() : 0;
      const bool rising = curve.size == 0 || intensity > curve.intensity[curve.size - 1];
      if (!PositiveFiniteNumber(intensity) || !PositiveFiniteNumber(factor) || !rising) {
        return Err(at, absl::StrCat("expected points [FLOPs per byte, factor] of positive numbers by increasing "
                                    "intensity, got ", point.dump()));
      }
      curve.intensity[curve.size] = intensity;
      curve.factor[curve.size] = factor;
      ++curve.size;
    }
  }
  return absl::OkStatus();
}

absl::Status ReadClassFactors(const Json& j, absl::string_view path, ClassFactors* out) {
  if (!j.is_object()) return Err(path, absl::StrCat("expected an object of operator classes, got ", j.type_name()));
  for (const auto& [name, value] : j.items()) {
    ASSIGN_OR_RETURN(const OpClass c, ClassOfKey(name, path));
    if (!value.is_number() || !(value.get<double>() > 0) || !std::isfinite(value.get<double>())) {
      return Err(Child(path, name), absl::StrCat("expected a positive number, got ", value.dump()));
    }
    (*out)[static_cast<int>(c)] = value.get<double>();
  }
  // Files written before wide or channels-last convolutions had classes of their own give them the factor of the
  // class they were counted in (kClassFallbacks), where the file gives that one, or it was given so in turn.
  std::array<bool, kNumOpClasses> given{};
  for (int c = 0; c < kNumOpClasses; ++c) given[c] = j.contains(std::string(OpClassName(static_cast<OpClass>(c))));
  for (const auto& [missing, like] : kClassFallbacks) {
    const int m = static_cast<int>(missing), l = static_cast<int>(like);
    if (given[m] || !given[l]) continue;
    (*out)[m] = (*out)[l];
    given[m] = true;
  }
  return absl::OkStatus();
}

absl::Status ReadLink(const Json* j, absl::string_view path, const DevicePreset* preset, bool network,
                      double* bandwidth, double* latency) {
  if (j) {
    RETURN_IF_ERROR(CheckObject(*j, path, {"bandwidth", "latency"}));
  }
  struct Field {
    const char* key;
    UnitParser parse;
    bool positive;
    double preset_value;
    double* out;
  };
  for (const Field& f : {Field{"bandwidth", ParseBandwidth, true,
                               preset ? (network ? preset->network_bandwidth : preset->intra_bandwidth) : 0, bandwidth},
                         Field{"latency", ParseSeconds, false,
                               preset ? (network ? preset->network_latency : preset->intra_latency) : 0, latency}}) {
    const Json* v = j ? Find(*j, f.key) : nullptr;
    if (v) {
      absl::StatusOr<double> q = Quantity(*v, Child(path, f.key), f.parse, f.positive);
      if (!q.ok()) return q.status();
      *f.out = *q;
    } else if (preset) {
      *f.out = f.preset_value;
    } else {
      return Err(Child(path, f.key), "is required");
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::vector<double>>> ReadMatrix(const Json& j, absl::string_view path, size_t n,
                                                            UnitParser parse, bool positive) {
  std::vector<std::vector<double>> m(n, std::vector<double>(n, 0));
  if (!j.is_array()) {
    absl::StatusOr<double> v = Quantity(j, path, parse, positive);
    if (!v.ok()) return v.status();
    for (size_t a = 0; a < n; ++a) {
      for (size_t b = 0; b < n; ++b) m[a][b] = a == b ? 0 : *v;
    }
    return m;
  }
  if (j.size() != n) return Err(path, absl::StrCat("has ", j.size(), " rows but there are ", n, " devices"));
  for (size_t a = 0; a < n; ++a) {
    const std::string row = Index(path, a);
    if (!j[a].is_array() || j[a].size() != n) {
      return Err(row, absl::StrCat("expected a row of ", n, " entries, one per device, got ",
                                   j[a].is_array() ? absl::StrCat(j[a].size(), " entries") : j[a].type_name()));
    }
    for (size_t b = 0; b < n; ++b) {
      if (a == b) continue;
      absl::StatusOr<double> v = Quantity(j[a][b], Index(row, b), parse, positive);
      if (!v.ok()) return v.status();
      m[a][b] = *v;
    }
  }
  return m;
}

}  // namespace placement::topology_json
