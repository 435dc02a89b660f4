#include "graph/topology_json.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

#include "absl/base/casts.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "graph/device_presets.h"
#include "graph/file_io.h"
#include "graph/json_read.h"
#include "graph/json_text.h"
#include "graph/status_macros.h"
#include "graph/units.h"

namespace placement {
namespace {

using Json = nlohmann::json;
using json::Keys;
using json::UnitParser;

using json::Child;
using json::Err;
using json::Find;
using json::Index;

absl::Status CheckObject(const Json& j, absl::string_view path, Keys known) {
  return json::CheckObject(j, path, known, "the topology");
}

// A figure: a number in SI base units or a string with units. Figures a device or link divides by must be
// positive.
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

// Capacity in bytes; 0 or "unlimited" means no limit.
absl::StatusOr<int64_t> MemoryBytes(const Json& j, absl::string_view path) {
  if (j.is_string() && absl::EqualsIgnoreCase(j.get_ref<const std::string&>(), "unlimited")) return 0;
  return json::ByteCount(j, path);
}

// {"conv": 0.7, "elementwise": 0.4}: the classes named get their share of the roofline, the rest keep theirs.
absl::Status ReadClassFactors(const Json& j, absl::string_view path, ClassFactors* out) {
  if (!j.is_object()) return Err(path, absl::StrCat("expected an object of operator classes, got ", j.type_name()));
  for (const auto& [name, value] : j.items()) {
    const std::optional<OpClass> c = OpClassFromName(name);
    if (!c) {
      std::vector<std::string> names;
      for (int i = 0; i < kNumOpClasses; ++i) names.emplace_back(OpClassName(static_cast<OpClass>(i)));
      return Err(Child(path, name), absl::StrCat("unknown operator class; the classes are ", absl::StrJoin(names, ", ")));
    }
    if (!value.is_number() || !(value.get<double>() > 0) || !std::isfinite(value.get<double>())) {
      return Err(Child(path, name), absl::StrCat("expected a positive number, got ", value.dump()));
    }
    (*out)[static_cast<int>(*c)] = value.get<double>();
  }
  return absl::OkStatus();
}

nlohmann::ordered_json ClassFactorsJson(const ClassFactors& factors) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (int i = 0; i < kNumOpClasses; ++i) j[std::string(OpClassName(static_cast<OpClass>(i)))] = factors[i];
  return j;
}

// One entry of a "devices" list, before it is expanded into `count` named devices.
struct DeviceEntry {
  Device device;
  int64_t count = 1;
  bool named = false;
  const DevicePreset* preset = nullptr;
};

absl::StatusOr<DeviceEntry> ReadDeviceEntry(const Json& j, absl::string_view path, bool explicit_form) {
  absl::Status s = explicit_form ? CheckObject(j, path,
                                               {"preset", "count", "name", "kind", "type", "peak_flops",
                                                "memory_bandwidth", "memory", "launch_overhead", "efficiency",
                                                "backward_efficiency", "host"})
                                 : CheckObject(j, path,
                                               {"preset", "count", "name", "kind", "type", "peak_flops",
                                                "memory_bandwidth", "memory", "launch_overhead", "efficiency",
                                                "backward_efficiency"});
  if (!s.ok()) return s;
  DeviceEntry e;
  if (const Json* p = Find(j, "preset")) {
    if (!p->is_string()) return Err(Child(path, "preset"), absl::StrCat("expected a string, got ", p->type_name()));
    absl::StatusOr<const DevicePreset*> preset = FindDevicePreset(p->get_ref<const std::string&>());
    if (!preset.ok()) return Err(Child(path, "preset"), preset.status().message());
    e.preset = *preset;
    e.device = MakeDevice(**preset, "");
  } else {
    // Without a preset every figure the cost model reads must be given; memory too, so that "no limit" is a
    // decision written down rather than a default.
    for (const char* key : {"kind", "peak_flops", "memory_bandwidth", "memory"}) {
      if (!j.contains(key)) {
        return Err(path, absl::StrCat("'", key, "' is required when no 'preset' is given",
                                      absl::string_view(key) == "memory" ? " (0 or \"unlimited\" for no limit)" : ""));
      }
    }
  }
  for (const char* key : {"name", "kind"}) {
    if (const Json* v = Find(j, key)) {
      if (!v->is_string() || v->get_ref<const std::string&>().empty()) {
        return Err(Child(path, key), "expected a non-empty string");
      }
      (absl::string_view(key) == "name" ? e.device.name : e.device.kind) = v->get<std::string>();
    }
  }
  e.named = j.contains("name");
  if (const Json* v = Find(j, "type")) {
    if (*v == "accelerator") {
      e.device.type = DeviceType::kAccelerator;
    } else if (*v == "cpu") {
      e.device.type = DeviceType::kCpu;
    } else {
      return Err(Child(path, "type"), absl::StrCat("expected \"accelerator\" or \"cpu\", got ", v->dump()));
    }
  }
  struct Figure {
    const char* key;
    UnitParser parse;
    bool positive;
    double* out;
  };
  for (const Figure& f : {Figure{"peak_flops", ParseFlops, true, &e.device.peak_flops},
                          Figure{"memory_bandwidth", ParseBandwidth, true, &e.device.memory_bandwidth},
                          Figure{"launch_overhead", ParseSeconds, false, &e.device.launch_overhead}}) {
    if (const Json* v = Find(j, f.key)) {
      absl::StatusOr<double> q = Quantity(*v, Child(path, f.key), f.parse, f.positive);
      if (!q.ok()) return q.status();
      *f.out = *q;
    }
  }
  for (auto [key, factors] : {std::pair{"efficiency", &e.device.efficiency},
                              std::pair{"backward_efficiency", &e.device.backward_efficiency}}) {
    if (const Json* v = Find(j, key)) {
      RETURN_IF_ERROR(ReadClassFactors(*v, Child(path, key), factors));
    }
  }
  if (const Json* v = Find(j, "memory")) {
    absl::StatusOr<int64_t> m = MemoryBytes(*v, Child(path, "memory"));
    if (!m.ok()) return m.status();
    e.device.memory_bytes = *m;
  }
  if (const Json* v = Find(j, "host")) {
    if (!v->is_number_integer() || v->get<int64_t>() < 0 || v->get<int64_t>() >= kMaxTopologyDevices) {
      return Err(Child(path, "host"),
                 absl::StrCat("expected a host index from 0 to ", kMaxTopologyDevices - 1, ", got ", v->dump()));
    }
    e.device.host = v->get<int32_t>();
  }
  if (const Json* v = Find(j, "count")) {
    absl::StatusOr<int64_t> c = Count(*v, Child(path, "count"));
    if (!c.ok()) return c.status();
    e.count = *c;
  }
  return e;
}

// Expands a "devices" list. Unnamed devices are gpu0, gpu1, ... and cpu0, ... in list order; a named entry
// with a count gets the index appended ("worker" x 2 -> worker0, worker1).
absl::StatusOr<std::vector<Device>> ReadDevices(const Json& j, absl::string_view path, bool explicit_form,
                                                int64_t* total, std::vector<const DevicePreset*>* presets) {
  if (!j.is_array() || j.empty()) return Err(path, "expected a non-empty list of devices");
  std::vector<Device> out;
  int64_t gpus = 0, cpus = 0;
  for (size_t i = 0; i < j.size(); ++i) {
    absl::StatusOr<DeviceEntry> e = ReadDeviceEntry(j[i], Index(path, i), explicit_form);
    if (!e.ok()) return e.status();
    if ((*total += e->count) > kMaxTopologyDevices) {
      return Err(Index(path, i), absl::StrCat("the topology has more than ", kMaxTopologyDevices, " devices"));
    }
    if (e->preset) presets->push_back(e->preset);
    for (int64_t c = 0; c < e->count; ++c) {
      Device d = e->device;
      if (!e->named) {
        d.name = d.type == DeviceType::kCpu ? absl::StrCat("cpu", cpus++) : absl::StrCat("gpu", gpus++);
      } else if (e->count > 1) {
        absl::StrAppend(&d.name, c);
      }
      out.push_back(std::move(d));
    }
  }
  return out;
}

// Reads {"bandwidth": ..., "latency": ...}; a field left out takes the preset's figure.
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

absl::StatusOr<Topology> ReadHierarchy(const Json& root, std::string name) {
  const Json& hosts = root["hosts"];
  if (!hosts.is_array() || hosts.empty()) return Err("hosts", "expected a non-empty list of hosts");
  HierarchySpec spec;
  spec.name = std::move(name);
  int64_t total = 0;
  std::vector<const DevicePreset*> all_presets;
  absl::flat_hash_set<std::string> host_names;
  for (size_t h = 0; h < hosts.size(); ++h) {
    const std::string path = Index("hosts", h);
    const Json& host = hosts[h];
    RETURN_IF_ERROR(CheckObject(host, path, {"name", "count", "devices", "intra_host_link"}));
    const Json* devices = Find(host, "devices");
    if (!devices) return Err(path, "'devices' is required");
    std::vector<const DevicePreset*> presets;
    absl::StatusOr<std::vector<Device>> devs = ReadDevices(*devices, Child(path, "devices"), false, &total, &presets);
    if (!devs.ok()) return devs.status();
    HostSpec host_spec;
    host_spec.devices = *std::move(devs);
    const Json* link = Find(host, "intra_host_link");
    if (host_spec.devices.size() > 1 || link) {
      absl::Status s = ReadLink(link, Child(path, "intra_host_link"), LinkPresetFor(presets), false,
                                &host_spec.intra_bandwidth, &host_spec.intra_latency);
      if (!s.ok()) return s;
    }
    int64_t copies = 1;
    if (const Json* c = Find(host, "count")) {
      absl::StatusOr<int64_t> n = Count(*c, Child(path, "count"));
      if (!n.ok()) return n.status();
      copies = *n;
    }
    if ((total += static_cast<int64_t>(host_spec.devices.size()) * (copies - 1)) > kMaxTopologyDevices) {
      return Err(path, absl::StrCat("the topology has more than ", kMaxTopologyDevices, " devices"));
    }
    std::string base;
    if (const Json* n = Find(host, "name")) {
      if (!n->is_string() || n->get_ref<const std::string&>().empty()) {
        return Err(Child(path, "name"), "expected a non-empty string");
      }
      base = n->get<std::string>();
    }
    for (int64_t c = 0; c < copies; ++c) {
      host_spec.name =
          base.empty() ? absl::StrCat("host", spec.hosts.size()) : (copies > 1 ? absl::StrCat(base, c) : base);
      if (!host_names.insert(host_spec.name).second) {
        return Err(path, absl::StrCat("duplicate host name '", host_spec.name, "'"));
      }
      spec.hosts.push_back(host_spec);
    }
    all_presets.insert(all_presets.end(), presets.begin(), presets.end());
  }
  const Json* network = Find(root, "network");
  if (spec.hosts.size() > 1 || network) {
    absl::Status s =
        ReadLink(network, "network", LinkPresetFor(all_presets), true, &spec.network_bandwidth, &spec.network_latency);
    if (!s.ok()) return s;
  }
  return BuildHierarchy(spec);
}

// A matrix of figures, one per ordered device pair, or one figure for every pair. The diagonal is not a
// link, so it may be null and is not read.
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

// "resources" + "paths": link resources shared between paths, the lossless form TopologyToJson writes.
absl::StatusOr<Topology> ReadPaths(const Json& root, std::string name, std::vector<Device> devices) {
  TopologySpec spec;
  spec.name = std::move(name);
  const size_t n = devices.size();
  const Json* resources = Find(root, "resources");
  if (!resources || !resources->is_array())
    return Err("resources", "a list of link resources is required with 'paths'");
  absl::flat_hash_map<std::string, int32_t> by_name;
  for (size_t r = 0; r < resources->size(); ++r) {
    const std::string path = Index("resources", r);
    const Json& res = (*resources)[r];
    RETURN_IF_ERROR(CheckObject(res, path, {"name", "bandwidth"}));
    LinkResource link;
    if (const Json* nm = Find(res, "name")) {
      if (!nm->is_string()) return Err(Child(path, "name"), "expected a string");
      link.name = nm->get<std::string>();
    }
    const Json* bw = Find(res, "bandwidth");
    if (!bw) return Err(path, "'bandwidth' is required");
    absl::StatusOr<double> v = Quantity(*bw, Child(path, "bandwidth"), ParseBandwidth, true);
    if (!v.ok()) return v.status();
    link.bandwidth = *v;
    // A name used twice cannot be referred to by name; such resources are still reachable by index.
    if (auto [it, inserted] = by_name.emplace(link.name, static_cast<int32_t>(r)); !inserted) it->second = -1;
    spec.resources.push_back(std::move(link));
  }
  const Json& paths = root["paths"];
  RETURN_IF_ERROR(CheckObject(paths, "paths", {"latency", "resources"}));
  for (const char* key : {"latency", "resources"}) {
    if (!paths.contains(key)) return Err("paths", absl::StrCat("'", key, "' is required"));
  }
  absl::StatusOr<std::vector<std::vector<double>>> latency =
      ReadMatrix(paths["latency"], "paths.latency", n, ParseSeconds, false);
  if (!latency.ok()) return latency.status();
  const Json& ids = paths["resources"];
  if (!ids.is_array() || ids.size() != n)
    return Err("paths.resources", absl::StrCat("expected ", n, " rows, one per device"));
  spec.latency.assign(n * n, 0);
  spec.path_resources.assign(n * n, {});
  for (size_t a = 0; a < n; ++a) {
    const std::string row = Index("paths.resources", a);
    if (!ids[a].is_array() || ids[a].size() != n) return Err(row, absl::StrCat("expected a row of ", n, " entries"));
    for (size_t b = 0; b < n; ++b) {
      if (a == b) continue;
      spec.latency[a * n + b] = (*latency)[a][b];
      const std::string cell = Index(row, b);
      const Json& list = ids[a][b];
      if (!list.is_array() || list.empty()) return Err(cell, "expected a non-empty list of resource indices or names");
      for (const Json& r : list) {
        int64_t id = -1;
        if (r.is_number_integer()) {
          id = r.get<int64_t>();
        } else if (r.is_string()) {
          auto it = by_name.find(r.get<std::string>());
          if (it == by_name.end() || it->second < 0) {
            return Err(cell, absl::StrCat("no resource is uniquely named ", r.dump()));
          }
          id = it->second;
        }
        if (id < 0 || id >= static_cast<int64_t>(spec.resources.size())) {
          return Err(cell, absl::StrCat(r.dump(), " is not a resource (there are ", spec.resources.size(), ")"));
        }
        std::vector<int32_t>& used = spec.path_resources[a * n + b];
        // A path crosses each link once; a resource listed twice is a slip in the file, not a slower link.
        if (std::find(used.begin(), used.end(), id) != used.end()) {
          return Err(cell, absl::StrCat("lists resource ", id, " twice"));
        }
        used.push_back(static_cast<int32_t>(id));
      }
    }
  }
  spec.devices = std::move(devices);
  return Topology::Create(std::move(spec));
}

absl::StatusOr<Topology> ReadExplicit(const Json& root, std::string name) {
  int64_t total = 0;
  std::vector<const DevicePreset*> presets;
  absl::StatusOr<std::vector<Device>> devices = ReadDevices(root["devices"], "devices", true, &total, &presets);
  if (!devices.ok()) return devices.status();
  const size_t n = devices->size();
  const int forms = root.contains("links") + root.contains("shared_bus") + root.contains("paths");
  if (forms > 1) return Err("", "give only one of 'links', 'shared_bus' or 'paths'");
  if (root.contains("resources") && !root.contains("paths")) return Err("resources", "is only read with 'paths'");
  if (forms == 0) {
    if (n > 1)
      return Err("", absl::StrCat("one of 'links', 'shared_bus' or 'paths' is required to connect ", n, " devices"));
    return BuildMatrix(std::move(name), *std::move(devices), {{0}}, {{0}});
  }
  if (const Json* links = Find(root, "links")) {
    RETURN_IF_ERROR(CheckObject(*links, "links", {"bandwidth", "latency"}));
    for (const char* key : {"bandwidth", "latency"}) {
      if (!links->contains(key)) return Err("links", absl::StrCat("'", key, "' is required"));
    }
    auto bandwidth = ReadMatrix((*links)["bandwidth"], "links.bandwidth", n, ParseBandwidth, true);
    if (!bandwidth.ok()) return bandwidth.status();
    auto latency = ReadMatrix((*links)["latency"], "links.latency", n, ParseSeconds, false);
    if (!latency.ok()) return latency.status();
    return BuildMatrix(std::move(name), *std::move(devices), *bandwidth, *latency);
  }
  if (const Json* bus = Find(root, "shared_bus")) {
    double bandwidth = 0, latency = 0;
    RETURN_IF_ERROR(ReadLink(bus, "shared_bus", nullptr, false, &bandwidth, &latency));
    return BuildSharedBus(std::move(name), *std::move(devices), bandwidth, latency);
  }
  return ReadPaths(root, std::move(name), *std::move(devices));
}

absl::StatusOr<Topology> ReadTopologyForm(const Json& root, std::string name) {
  const bool hierarchical = root.contains("hosts"), explicit_form = root.contains("devices");
  if (hierarchical && explicit_form) {
    return Err("", "give either 'hosts' (the hierarchical form) or 'devices' (the explicit form), not both");
  }
  if (hierarchical) {
    for (const char* key : {"links", "shared_bus", "resources", "paths"}) {
      if (root.contains(key)) return Err(key, "belongs to the explicit form ('devices'), not to 'hosts'");
    }
    return ReadHierarchy(root, std::move(name));
  }
  if (!explicit_form) return Err("", "the topology has no devices: give 'hosts' or 'devices'");
  if (root.contains("network")) return Err("network", "belongs to the hierarchical form ('hosts'), not to 'devices'");
  return ReadExplicit(root, std::move(name));
}

absl::StatusOr<Topology> ReadTopology(const Json& root) {
  if (absl::Status s = CheckObject(
          root, "",
          {"name", "description", "hosts", "network", "devices", "links", "shared_bus", "resources", "paths",
           "data_parallel_across_hosts"});
      !s.ok()) {
    return s;
  }
  std::string name;
  if (const Json* n = Find(root, "name")) {
    if (!n->is_string()) return Err("name", absl::StrCat("expected a string, got ", n->type_name()));
    name = n->get<std::string>();
  }
  if (const Json* d = Find(root, "description"); d && !d->is_string()) return Err("description", "expected a string");
  bool across_hosts = true;
  if (const Json* a = Find(root, "data_parallel_across_hosts")) {
    if (!a->is_boolean()) return Err("data_parallel_across_hosts", absl::StrCat("expected true or false, got ", a->type_name()));
    across_hosts = a->get<bool>();
  }
  absl::StatusOr<Topology> t = ReadTopologyForm(root, std::move(name));
  if (!t.ok() || across_hosts) return t;
  return t->WithGroupsInsideHosts();
}

}  // namespace

absl::StatusOr<Topology> ParseTopologyJson(absl::string_view json_text) {
  try {
    RETURN_IF_ERROR(CheckJsonText(json_text, "the topology"));
    const Json root = Json::parse(json_text.begin(), json_text.end());
    return ReadTopology(root);
  } catch (const Json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("the topology is not valid JSON: ", e.what()));
  } catch (const std::exception& e) {  // std::bad_alloc and the like: still never past this edge
    return absl::InvalidArgumentError(absl::StrCat("cannot read the topology: ", e.what()));
  }
}

absl::StatusOr<Topology> LoadTopologyFile(const std::string& path) {
  // A directory opens as a stream and reads as empty, which would surface as "not valid JSON".
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    return absl::NotFoundError(absl::StrCat("cannot read topology file '", path, "': ",
                                            std::filesystem::exists(path, ec) ? "not a regular file" : "no such file"));
  }
  absl::StatusOr<std::string> text = ReadWholeFile(path);
  if (!text.ok()) return absl::NotFoundError(absl::StrCat("cannot read topology file '", path, "'"));
  absl::StatusOr<Topology> t = ParseTopologyJson(*text);
  if (!t.ok()) return absl::Status(t.status().code(), absl::StrCat(path, ": ", t.status().message()));
  return t;
}

absl::StatusOr<Topology> ParseTopologyArgument(absl::string_view spec) {
  const absl::string_view s = absl::StripAsciiWhitespace(spec);
  if (absl::StartsWith(s, "{")) return ParseTopologyJson(s);
  if (absl::EndsWithIgnoreCase(s, ".json") || absl::StrContains(s, '/')) return LoadTopologyFile(std::string(s));
  return ParseTopologyShorthand(s);
}

namespace {

// Names come from C++ callers too, where nothing guarantees valid UTF-8; dump() would throw on it.
template <typename J>
std::string Dump(const J& j) {
  return j.dump(-1, ' ', false, J::error_handler_t::replace);
}

}  // namespace

std::string TopologyToJson(const Topology& t) {
  // Written by hand rather than by Json::dump(2) so that each device and each matrix row is one line.
  const int32_t n = t.num_devices();
  std::string out = absl::StrCat("{\n  \"name\": ", Dump(Json(t.name())), ",\n  \"devices\": [\n");
  for (DeviceId d = 0; d < n; ++d) {
    const Device& dev = t.device(d);
    nlohmann::ordered_json j = {{"name", dev.name},
                                {"kind", dev.kind},
                                {"type", dev.type == DeviceType::kCpu ? "cpu" : "accelerator"},
                                {"peak_flops", dev.peak_flops},
                                {"memory_bandwidth", dev.memory_bandwidth},
                                {"memory", dev.memory_bytes},
                                {"launch_overhead", dev.launch_overhead},
                                {"host", dev.host}};
    if (dev.efficiency != kUnitFactors) j["efficiency"] = ClassFactorsJson(dev.efficiency);
    if (dev.backward_efficiency != kUnitFactors) j["backward_efficiency"] = ClassFactorsJson(dev.backward_efficiency);
    absl::StrAppend(&out, "    ", Dump(j), d + 1 < n ? ",\n" : "\n");
  }
  absl::StrAppend(&out, "  ],\n  \"resources\": [\n");
  for (int32_t r = 0; r < t.num_resources(); ++r) {
    nlohmann::ordered_json j = {{"name", t.resource(r).name}, {"bandwidth", t.resource(r).bandwidth}};
    absl::StrAppend(&out, "    ", Dump(j), r + 1 < t.num_resources() ? ",\n" : "\n");
  }
  // The n x n path matrices are written directly, in the text Dump() gives (compact arrays), with each distinct
  // latency formatted once: building a Json value per pair made a 1,024-device topology take a large share of
  // a request's time (the server writes the topology into every cache key).
  std::string latency, resources;
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
  absl::StrAppend(&out, "  ],\n  \"paths\": {\n    \"latency\": [\n", latency, "    ],\n    \"resources\": [\n",
                  resources, "    ]\n  }", t.data_parallel_across_hosts() ? "" : ",\n  \"data_parallel_across_hosts\": false",
                  "\n}\n");
  return out;
}

}  // namespace placement
