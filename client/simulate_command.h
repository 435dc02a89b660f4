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
  std::string output = "table";      // table | json
  std::string priority = "topological";  // topological | upward_rank
  std::string simulator = "default";  // default | placeto (Placeto's published gaps)
  std::string cost_model = "default";  // default | pipedream (throughput only: one replica per device, PipeDream's formulas)
};

// Returns the rendered report; errors name the file or option at fault.
absl::StatusOr<std::string> RunSimulate(const SimulateOptions& options);

}  // namespace placement::cli
