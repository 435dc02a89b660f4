#include "graph/topology_json.h"

#include <filesystem>
#include <nlohmann/json.hpp>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "graph/file_io.h"
#include "graph/json_read.h"
#include "graph/json_text.h"
#include "graph/status_macros.h"
#include "graph/topology_json_fields.h"
#include "graph/topology_json_forms.h"

namespace placement {
namespace {

using Json = nlohmann::json;
using json::Err;
using json::Find;
using topology_json::CheckObject;

absl::StatusOr<Topology> ReadTopologyForm(const Json& root, std::string name) {
  const bool hierarchical = root.contains("hosts"), explicit_form = root.contains("devices");
  if (hierarchical && explicit_form) {
    return Err("", "give either 'hosts' (the hierarchical form) or 'devices' (the explicit form), not both");
  }
  if (hierarchical) {
    for (const char* key : {"links", "shared_bus", "resources", "paths"}) {
      if (root.contains(key)) return Err(key, "belongs to the explicit form ('devices'), not to 'hosts'");
    }
    return topology_json::ReadHierarchy(root, std::move(name));
  }
  if (!explicit_form) return Err("", "the topology has no devices: give 'hosts' or 'devices'");
  if (root.contains("network")) return Err("network", "belongs to the hierarchical form ('hosts'), not to 'devices'");
  return topology_json::ReadExplicit(root, std::move(name));
}

absl::StatusOr<Topology> ReadTopology(const Json& root) {
  if (absl::Status s = CheckObject(root, "",
                                   {"name", "description", "hosts", "network", "devices", "links", "shared_bus",
                                    "resources", "paths", "data_parallel_across_hosts"});
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
    if (!a->is_boolean())
      return Err("data_parallel_across_hosts", absl::StrCat("expected true or false, got ", a->type_name()));
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

}  // namespace placement
