// Reads the graph and cluster a command names: the graph file (its format detected from its content) and the
// topology from --topology FILE, --devices SPEC, or the devices the graph file itself describes.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "graph/problem.h"

namespace placement::cli {

absl::StatusOr<std::string> ReadFile(const std::string& path);

// Accepts a Tarnawski JSON graph.
absl::StatusOr<Problem> LoadGraphFile(const std::string& path);

// Chooses the topology: the file, else the shorthand, else the one the graph file carried. Giving both a file and
// a shorthand, or neither for a graph without devices, is an error that says what to pass.
absl::StatusOr<Topology> ResolveTopology(const Problem& problem, const std::string& topology_file,
                                         const std::string& devices_spec);

}  // namespace placement::cli
