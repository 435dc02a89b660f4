// `placectl submit --chart FILE`: the schedule chart of a server's answer, drawn here. The graph and cluster
// are loaded locally with the options the request was sent with (so the server and this process see the same
// placed graph), the returned assignment is simulated with the timeline recorded, and client/chart renders it.
// A parallel plan's chart is a few micro-batches of its pipeline (simulator/plan_simulation.h): every replica's
// forward and backward passes, the all-reduces on the collective engines beside the devices, the transfers.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "client/graph_loader.h"
#include "placement/v1/placement.pb.h"

namespace placement::cli {

struct AnswerChartInput {
  std::string graph_path;
  GraphLoadOptions load;
  std::string topology_file;
  std::string devices;
};

// Writes the HTML page to `path`. Errors (starting "--chart: "): the graph or topology cannot be loaded here, or
// the answer names an operator or device the local graph does not have (a server of another version, say).
absl::Status WriteAnswerChart(const std::string& path, const AnswerChartInput& input,
                              const placement::v1::PlaceResponse& answer);

}  // namespace placement::cli
