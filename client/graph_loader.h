// Reads the graph and cluster a command names: the graph file (ONNX, our JSON format or a Tarnawski JSON graph,
// told apart by content, not by name), optionally expanded into a training step, and the topology from
// --topology FILE, --devices SPEC, or the devices the graph file itself describes.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/file_io.h"
#include "graph/problem.h"

namespace placement::cli {

struct GraphLoadOptions {
  int64_t batch = 0;            // ONNX: binds the batch dimension; 0 = the importer's default (1)
  int64_t sequence_length = 0;  // ONNX: binds dimensions named like a sequence; 0 = the importer's default
  bool training = false;        // expand the forward graph into a training step
  std::string optimizer = "adam";
  double backward_multiplier = 2.0;
};

struct LoadedGraph {
  Problem problem;
  std::string format;                 // "onnx", "placement.graph/v1" or "tarnawski"
  std::vector<std::string> warnings;  // what the importer assumed
};


absl::StatusOr<LoadedGraph> LoadGraphFile(const std::string& path, const GraphLoadOptions& options = {});

// Chooses the topology: the file, else the shorthand, else the one the graph file carried. Giving both a file and
// a shorthand, or neither for a graph without devices, is an error that says what to pass.
absl::StatusOr<Topology> ResolveTopology(const Problem& problem, const std::string& topology_file,
                                         const std::string& devices_spec);

}  // namespace placement::cli
