// The two forms of the JSON topology format (topology_json.h), each built into a Topology: hierarchical
// ("hosts" and "network") and explicit ("devices" connected by "links" matrices, a "shared_bus", or
// "resources" + "paths"). Used only inside the graph library.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "graph/topology.h"
#include "graph/topology_json_fields.h"

namespace placement::topology_json {

// `root` has "hosts" and none of the explicit form's keys.
absl::StatusOr<Topology> ReadHierarchy(const Json& root, std::string name);

// `root` has "devices" and none of the hierarchical form's keys.
absl::StatusOr<Topology> ReadExplicit(const Json& root, std::string name);

}  // namespace placement::topology_json
