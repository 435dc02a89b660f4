#include "graph/topology_json_forms.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "graph/device_presets.h"
#include "graph/status_macros.h"
#include "graph/topology_json.h"
#include "graph/topology_json_devices.h"
#include "graph/units.h"

namespace placement::topology_json {
namespace {

// One entry of "hosts", before it is copied `copies` times under its names.
struct HostEntry {
  HostSpec spec;
  int64_t copies = 1;
  std::string base_name;  // empty: host0, host1, ... by position
  std::vector<const DevicePreset*> presets;
};

absl::StatusOr<HostEntry> ReadHost(const Json& host, const std::string& path, int64_t* total) {
  RETURN_IF_ERROR(CheckObject(host, path, {"name", "count", "devices", "intra_host_link"}));
  const Json* devices = Find(host, "devices");
  if (!devices) return Err(path, "'devices' is required");
  HostEntry e;
  ASSIGN_OR_RETURN(e.spec.devices, ReadDevices(*devices, Child(path, "devices"), false, total, &e.presets));
  const Json* link = Find(host, "intra_host_link");
  if (e.spec.devices.size() > 1 || link) {
    RETURN_IF_ERROR(ReadLink(link, Child(path, "intra_host_link"), LinkPresetFor(e.presets), false,
                             &e.spec.intra_bandwidth, &e.spec.intra_latency));
  }
  if (const Json* c = Find(host, "count")) {
    ASSIGN_OR_RETURN(e.copies, Count(*c, Child(path, "count")));
  }
  if ((*total += static_cast<int64_t>(e.spec.devices.size()) * (e.copies - 1)) > kMaxTopologyDevices) {
    return Err(path, absl::StrCat("the topology has more than ", kMaxTopologyDevices, " devices"));
  }
  if (const Json* n = Find(host, "name")) {
    if (!n->is_string() || n->get_ref<const std::string&>().empty()) {
      return Err(Child(path, "name"), "expected a non-empty string");
    }
    e.base_name = n->get<std::string>();
  }
  return e;
}

// The host's copies, named after it ("worker" x 2 -> worker0, worker1) or by position; names must be unique.
absl::Status AddHostCopies(const HostEntry& e, const std::string& path, absl::flat_hash_set<std::string>& names,
                           HierarchySpec& spec) {
  HostSpec host = e.spec;
  for (int64_t c = 0; c < e.copies; ++c) {
    host.name = e.base_name.empty() ? absl::StrCat("host", spec.hosts.size())
                                    : (e.copies > 1 ? absl::StrCat(e.base_name, c) : e.base_name);
    if (!names.insert(host.name).second) return Err(path, absl::StrCat("duplicate host name '", host.name, "'"));
    spec.hosts.push_back(host);
  }
  return absl::OkStatus();
}

// "resources" of the paths form, and each one's index by name; a name used twice indexes -1.
absl::Status ReadResources(const Json& root, TopologySpec& spec, absl::flat_hash_map<std::string, int32_t>& by_name) {
  const Json* resources = Find(root, "resources");
  if (!resources || !resources->is_array())
    return Err("resources", "a list of link resources is required with 'paths'");
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
    ASSIGN_OR_RETURN(link.bandwidth, Quantity(*bw, Child(path, "bandwidth"), ParseBandwidth, true));
    // A name used twice cannot be referred to by name; such resources are still reachable by index.
    if (auto [it, inserted] = by_name.emplace(link.name, static_cast<int32_t>(r)); !inserted) it->second = -1;
    spec.resources.push_back(std::move(link));
  }
  return absl::OkStatus();
}

// One cell of "paths.resources": the resources, by index or unique name, one path crosses.
absl::Status ReadPathCell(const Json& list, const std::string& cell,
                          const absl::flat_hash_map<std::string, int32_t>& by_name, size_t num_resources,
                          std::vector<int32_t>& used) {
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
    if (id < 0 || id >= static_cast<int64_t>(num_resources)) {
      return Err(cell, absl::StrCat(r.dump(), " is not a resource (there are ", num_resources, ")"));
    }
    // A path crosses each link once; a resource listed twice is a slip in the file, not a slower link.
    if (std::find(used.begin(), used.end(), id) != used.end()) {
      return Err(cell, absl::StrCat("lists resource ", id, " twice"));
    }
    used.push_back(static_cast<int32_t>(id));
  }
  return absl::OkStatus();
}

// "resources" + "paths": link resources shared between paths, the lossless form TopologyToJson writes.
absl::StatusOr<Topology> ReadPaths(const Json& root, std::string name, std::vector<Device> devices) {
  TopologySpec spec;
  spec.name = std::move(name);
  const size_t n = devices.size();
  absl::flat_hash_map<std::string, int32_t> by_name;
  RETURN_IF_ERROR(ReadResources(root, spec, by_name));
  const Json& paths = root["paths"];
  RETURN_IF_ERROR(CheckObject(paths, "paths", {"latency", "resources"}));
  for (const char* key : {"latency", "resources"}) {
    if (!paths.contains(key)) return Err("paths", absl::StrCat("'", key, "' is required"));
  }
  ASSIGN_OR_RETURN(const std::vector<std::vector<double>> latency,
                   ReadMatrix(paths["latency"], "paths.latency", n, ParseSeconds, false));
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
      spec.latency[a * n + b] = latency[a][b];
      RETURN_IF_ERROR(
          ReadPathCell(ids[a][b], Index(row, b), by_name, spec.resources.size(), spec.path_resources[a * n + b]));
    }
  }
  spec.devices = std::move(devices);
  return Topology::Create(std::move(spec));
}

// "links": a bandwidth and a latency matrix (or one figure each for every pair).
absl::StatusOr<Topology> ReadLinks(const Json& links, std::string name, std::vector<Device> devices) {
  const size_t n = devices.size();
  RETURN_IF_ERROR(CheckObject(links, "links", {"bandwidth", "latency"}));
  for (const char* key : {"bandwidth", "latency"}) {
    if (!links.contains(key)) return Err("links", absl::StrCat("'", key, "' is required"));
  }
  auto bandwidth = ReadMatrix(links["bandwidth"], "links.bandwidth", n, ParseBandwidth, true);
  if (!bandwidth.ok()) return bandwidth.status();
  auto latency = ReadMatrix(links["latency"], "links.latency", n, ParseSeconds, false);
  if (!latency.ok()) return latency.status();
  return BuildMatrix(std::move(name), std::move(devices), *bandwidth, *latency);
}

}  // namespace

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
    ASSIGN_OR_RETURN(const HostEntry host, ReadHost(hosts[h], path, &total));
    RETURN_IF_ERROR(AddHostCopies(host, path, host_names, spec));
    all_presets.insert(all_presets.end(), host.presets.begin(), host.presets.end());
  }
  // The network's figures default to the first accelerator preset of the cluster.
  const Json* network = Find(root, "network");
  if (spec.hosts.size() > 1 || network) {
    RETURN_IF_ERROR(
        ReadLink(network, "network", LinkPresetFor(all_presets), true, &spec.network_bandwidth, &spec.network_latency));
  }
  return BuildHierarchy(spec);
}

absl::StatusOr<Topology> ReadExplicit(const Json& root, std::string name) {
  int64_t total = 0;
  std::vector<const DevicePreset*> presets;
  ASSIGN_OR_RETURN(std::vector<Device> devices, ReadDevices(root["devices"], "devices", true, &total, &presets));
  const size_t n = devices.size();
  const int forms = root.contains("links") + root.contains("shared_bus") + root.contains("paths");
  if (forms > 1) return Err("", "give only one of 'links', 'shared_bus' or 'paths'");
  if (root.contains("resources") && !root.contains("paths")) return Err("resources", "is only read with 'paths'");
  if (forms == 0) {
    if (n > 1)
      return Err("", absl::StrCat("one of 'links', 'shared_bus' or 'paths' is required to connect ", n, " devices"));
    return BuildMatrix(std::move(name), std::move(devices), {{0}}, {{0}});
  }
  if (const Json* links = Find(root, "links")) return ReadLinks(*links, std::move(name), std::move(devices));
  if (const Json* bus = Find(root, "shared_bus")) {
    double bandwidth = 0, latency = 0;
    RETURN_IF_ERROR(ReadLink(bus, "shared_bus", nullptr, false, &bandwidth, &latency));
    return BuildSharedBus(std::move(name), std::move(devices), bandwidth, latency);
  }
  return ReadPaths(root, std::move(name), std::move(devices));
}

}  // namespace placement::topology_json
