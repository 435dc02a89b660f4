#include "client/graph_loader.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "graph/tarnawski.h"
#include "graph/topology_json.h"

namespace placement::cli {

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open '", path, "': ", std::strerror(errno)));
  std::stringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) return absl::DataLossError(absl::StrCat("cannot read '", path, "'"));
  return buffer.str();
}

absl::StatusOr<Problem> LoadGraphFile(const std::string& path) {
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) return text.status();
  if (LooksLikeTarnawskiGraph(*text)) {
    absl::StatusOr<Problem> problem = ParseTarnawskiGraph(*text);
    if (!problem.ok()) return absl::Status(problem.status().code(), absl::StrCat(path, ": ", problem.status().message()));
    return problem;
  }
  return absl::InvalidArgumentError(
      absl::StrCat(path, ": not a graph format placectl reads (expected a Tarnawski JSON graph with 'nodes', 'edges' and 'maxFPGAs')"));
}

absl::StatusOr<Topology> ResolveTopology(const Problem& problem, const std::string& topology_file,
                                         const std::string& devices_spec) {
  if (!topology_file.empty() && !devices_spec.empty()) {
    return absl::InvalidArgumentError("give either --topology or --devices, not both");
  }
  if (!topology_file.empty()) return LoadTopologyFile(topology_file);
  if (!devices_spec.empty()) return ParseTopologyShorthand(devices_spec);
  if (problem.topology.has_value()) return *problem.topology;
  return absl::InvalidArgumentError("the graph does not describe its devices: pass --devices (e.g. 4xA100) or --topology FILE");
}

}  // namespace placement::cli
