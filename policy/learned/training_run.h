// Training the policy on a user's own graphs and clusters (what `placectl train` runs): the graphs are split into
// training and validation by file (a seeded draw of `validation_share` of them, never trained on), each graph goes
// on every cluster that can hold it (the cluster is then drawn per batch with the graph), and the network starts
// from existing weights (the shipped ones by default) or from random ones. Training is the scheduled decoding's
// REINFORCE (trainer.h); the checkpoint kept is the best validation ratio, so the weights written are never worse
// on validation than those it started from. A stop flag (a signal) ends the run early with that checkpoint.
//
// At the end both the start weights and the new ones are measured the way they are served: the single-shot
// placer ("policy") on every validation instance, the geometric mean of its step time over the lower bound.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/graph.h"
#include "graph/topology.h"
#include "policy/learned/trainer.h"

namespace placement::learned {

struct RunGraph {
  std::string source;  // the file it was read from (with "#train" for the training step of a forward graph)
  std::string hash;    // graph/canonical.h GraphHash
  Graph graph;
};

struct RunTopology {
  std::string source;  // the shorthand or the file
  Topology topology;
};

struct TrainingRunOptions {
  std::string init;     // weights to start from; empty: random weights drawn from `seed`
  std::string out;      // the best checkpoint is written here as training goes
  std::string version;  // stored in the weights; empty: the start weights' ("gnn-3-tuned"), or "custom"
  double validation_share = 0.2;
  uint64_t seed = 1;
  double max_seconds = 30 * 60;  // 0: no limit
  int64_t iterations = 0;        // 0: as many as max_seconds allows (the schedules then follow the time)
  double learning_rate = 0;      // 0: 3e-4 from existing weights, 1e-3 from scratch
  double entropy_bonus = 0;      // 0: 0.002 from existing weights, 0.01 from scratch
  int64_t eval_every = 25;
  const std::atomic<bool>* stop = nullptr;
  std::function<void(const TrainerProgress&)> on_iteration;
  // A line per input left out and why (a graph no cluster can hold, a cluster too small for a graph).
  std::function<void(const std::string&)> on_skipped;
};

// The single-shot placer on the validation instances with one set of weights.
struct PlacerFigures {
  std::string version;
  double geomean_ratio = 0;  // geometric mean of step time / lower bound
  int32_t instances = 0;
};

struct TrainingRunReport {
  std::vector<std::string> train_sources, validation_sources;  // graph sources, by role
  std::vector<std::string> skipped;                            // "SOURCE on TOPOLOGY: why", as given to on_skipped
  int32_t train_instances = 0, validation_instances = 0;
  std::vector<CurvePoint> curve;
  bool stopped = false;  // the stop flag ended the run
  int64_t iterations = 0;
  double seconds = 0;
  std::string start_version;    // the weights started from ("untrained" from scratch)
  std::string version;          // stored in the new weights
  double start_validation = 0;  // the curve's ratio (better of greedy and scheduled decoding) at the start
  double best_validation = 0;   // and of the checkpoint written
  PlacerFigures start_placer, new_placer;
};

// INVALID_ARGUMENT when nothing is left to train or validate on (too few graphs, none a cluster can hold);
// the init weights' load error; INTERNAL when LibTorch fails.
absl::StatusOr<TrainingRunReport> RunTraining(const std::vector<RunGraph>& graphs,
                                              const std::vector<RunTopology>& topologies,
                                              const TrainingRunOptions& options);

}  // namespace placement::learned
