// `placectl bench`: a closed-loop load generator against a placement server. `concurrency` calls are kept in
// flight through the callback stub (each one's completion issues the next), for a duration or a number of
// requests; the report gives latency percentiles, requests per second, cache hits and errors by code.
//
// Every request is a Place of one of the graphs (round robin). --unique-fraction F makes that share of them
// new to the cache: their seed is one no earlier request used, which changes the cache key and nothing
// else about the request's validity (for the deterministic placers it does not even change the answer).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "client/graph_loader.h"
#include "client/place_command.h"

namespace placement::cli {

struct BenchOptions {
  std::string server;
  std::vector<std::string> graph_paths;
  GraphLoadOptions load;
  std::string topology_file;
  std::string devices;
  std::string objective = "step_time";
  std::string cost_model = "default";
  std::string algorithm = "auto";
  std::string policy;            // the served policy to ask (PlaceRequest.policy); "" the default
  std::string deadline = "10s";  // each request's placer budget
  int32_t concurrency = 1;
  std::string duration = "10s";  // used when requests == 0
  int64_t requests = 0;
  double unique_fraction = 0;
  bool warmup = true;            // one untimed request per graph first, so that repeats are cache hits
  std::string output = "table";  // table | json
  PlanOptions plan;
};

absl::StatusOr<std::string> RunBench(const BenchOptions& options);

}  // namespace placement::cli
