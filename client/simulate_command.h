// `placectl simulate`: scores a given placement of a graph on a cluster, in-process.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "client/graph_loader.h"

namespace placement::cli {

struct SimulateOptions {
  std::string graph_path;
  GraphLoadOptions load;
  std::string placement_path;
  std::string topology_file;
  std::string devices;
  std::string objective = "step_time";
  bool objective_given = false;        // --objective on the command line (a plan file takes only throughput)
  std::string cost_model = "default";  // default | tarnawski (latency) | pipedream (throughput: one replica per device)
  std::string output = "table";        // table | json
  std::string priority = "topological";  // topological | upward_rank
  std::string simulator = "default";     // default | placeto (Placeto's published gaps)
  std::string chart_path;                // when set, the placement's schedule chart (HTML) is written there
};

// Returns the rendered report; errors name the file or option at fault (under the tarnawski cost model, a split
// that model forbids is INVALID_ARGUMENT naming the accelerators).
absl::StatusOr<std::string> RunSimulate(const SimulateOptions& options);

}  // namespace placement::cli
