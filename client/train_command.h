// placectl train: trains the learned policy on the user's own graphs and clusters (policy/learned/training_run.h),
// in placectl-torch. Graphs come as files and folders (every .onnx and .json file in a folder), in any format
// placectl reads, as inference graphs, training steps (--training), or both (--with_inference too); clusters as
// shorthands (--devices 4xV100,8xV100) and topology files (--topology a.json,b.json), drawn per batch. A graph that
// does not import, a duplicate, or a graph no cluster can hold is reported by file and skipped; a cluster that
// does not parse refuses the run before it starts.
//
// Writes OUT (the weights: the best validation checkpoint, written as training goes, so an interrupted run
// leaves it), and beside it OUT's stem with .json (the manifest: graphs with their hashes and roles, clusters,
// the command, and the validation figures of the new weights beside the start weights'), .tsv (the learning
// curve) and .svg (its chart). SIGINT or SIGTERM ends the run early, keeping the best checkpoint.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "client/graph_loader.h"

namespace placement::cli {

struct TrainOptions {
  std::vector<std::string> inputs;  // graph files and folders
  GraphLoadOptions load;
  bool with_inference = false;          // with --training: the inference graph of each model too
  std::vector<std::string> devices;     // cluster shorthands
  std::vector<std::string> topologies;  // cluster files
  std::string init;                     // start weights; empty: the shipped ones (unless from_scratch)
  bool from_scratch = false;
  std::string out = "policy.pt";
  std::string version;  // stored in the weights; empty: the start weights' version + "-tuned"
  double validation_share = 0.2;
  uint64_t seed = 1;
  int32_t threads = 1;  // LibTorch CPU threads
  std::string time_limit = "30m";
  int64_t iterations = 0;           // 0: as many as the time limit allows
  double learning_rate = 0;         // 0: the recipe's (training_run.h)
  std::string command_line;         // for the manifest
  bool progress_overwrite = false;  // a progress bar redrawn in place (stderr is a terminal)
};

// The summary to print; errors name the input that caused them.
absl::StatusOr<std::string> RunTrain(const TrainOptions& options);

// The graph files the inputs name: files as given, folders expanded to their .onnx and .json files (sorted).
// NOT_FOUND naming an input that does not exist.
absl::StatusOr<std::vector<std::string>> ExpandGraphInputs(const std::vector<std::string>& inputs);

}  // namespace placement::cli
