// Canonical serialization and content hash of a graph.
//
// The canonical form lists operators by name and edges by (producer, output, consumer) names, with every number
// in a fixed binary encoding, so it does not depend on the order the input listed things in, and any change of
// structure or cost changes it. The hash is SHA-256 of that form; it keys the answer cache.
#pragma once

#include <string>

#include "absl/strings/string_view.h"
#include "graph/graph.h"

namespace placement {

// The canonical bytes (binary; stable across runs, machines and versions of this format).
std::string CanonicalSerialization(const Graph& graph);

// Lower-case hex SHA-256 of CanonicalSerialization(graph), computed without materializing it.
std::string GraphHash(const Graph& graph);

// Lower-case hex SHA-256 of any bytes (cache keys, checksums, the x-graph-hash routing header).
std::string Sha256Hex(absl::string_view bytes);

}  // namespace placement
