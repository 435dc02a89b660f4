// The readers every form of the JSON topology format (topology_json.h) shares: known keys, figures with units,
// device counts, memory sizes, per-class efficiencies, links and matrices of per-pair figures. Each error is
// INVALID_ARGUMENT naming the JSON path. Used only inside the graph library.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/device_presets.h"
#include "graph/json_read.h"
#include "graph/op_class.h"

namespace placement::topology_json {

using Json = nlohmann::json;
// The shared JSON readers (json_read.h), as every topology reader uses them.
using json::Child;
using json::Err;
using json::Find;
using json::Index;
using json::Keys;
using json::UnitParser;

// json::CheckObject with the topology named in its message.
absl::Status CheckObject(const Json& j, absl::string_view path, Keys known);

// A figure: a number in SI base units or a string with units. Figures a device or link divides by must be
// positive.
absl::StatusOr<double> Quantity(const Json& j, absl::string_view path, UnitParser parse, bool positive);

// A count of devices or hosts: a whole number from 1 to kMaxTopologyDevices.
absl::StatusOr<int64_t> Count(const Json& j, absl::string_view path);

// Capacity in bytes; 0 or "unlimited" means no limit.
absl::StatusOr<int64_t> MemoryBytes(const Json& j, absl::string_view path);

// {"conv": 0.7, "elementwise": 0.4}: the classes named get their share of the roofline, the rest keep theirs
// (wide_thin_conv, where absent, thin_conv's; channels_last_thin_conv, where absent, wide_thin_conv's).
absl::Status ReadClassFactors(const Json& j, absl::string_view path, ClassFactors* out);
// {"conv": [[26, 0.8], [528, 2.4]]}: per class, points [FLOPs per byte, factor] (Device::intensity_curves).
absl::Status ReadIntensityCurves(const Json& j, absl::string_view path, ClassCurves* out);

// {"conv": "8 GB/s"}: bytes/s (a number, or a string with units) per class named; the rest keep theirs.
absl::Status ReadClassBandwidths(const Json& j, absl::string_view path, ClassFactors* out);

// Reads {"bandwidth": ..., "latency": ...} (j may be null: the link is not given); a field left out takes the
// preset's figure (its network or its intra-host link), and is required without a preset.
absl::Status ReadLink(const Json* j, absl::string_view path, const DevicePreset* preset, bool network,
                      double* bandwidth, double* latency);

// A matrix of figures, one per ordered device pair, or one figure for every pair. The diagonal is not a
// link, so it may be null and is not read.
absl::StatusOr<std::vector<std::vector<double>>> ReadMatrix(const Json& j, absl::string_view path, size_t n,
                                                            UnitParser parse, bool positive);

}  // namespace placement::topology_json
