// The graphs the policy trains and is evaluated on: the synthetic families (graph_families.h) at several
// sizes and seeds, and the ONNX corpus, each as an inference graph and as a training step (training.h), each
// on a cluster drawn from a fixed list of one-host and two-host, uniform and mixed clusters. Whole families
// can be held out; the held-out ones form the evaluation set.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/cost_model.h"
#include "graph/graph.h"
#include "graph/topology.h"
#include "policy/learned/coarsen.h"
#include "policy/learned/features.h"
#include "simulator/objectives.h"
#include "simulator/simulator.h"

namespace placement::learned {

struct Instance {
  std::string name;    // "layered/120#3/train 4xV100"
  std::string family;  // a synthetic family or the corpus model's file stem
  Graph graph;
  Topology topology;
  // Over graph and topology above (the instance does not move after Make), or over a problem's own graph and
  // cluster (InstanceOfProblem), which the instance then does not own.
  std::shared_ptr<const CostModel> costs;
  Objective objective = Objective::kStepTime;  // what placements are scored by (STEP_TIME or LATENCY)
  SimulatorConfig simulator;
  Coarsening groups;
  PolicyInput input;
  double bound = 0;  // the objective's lower bound
};

struct DatasetOptions {
  uint64_t seed = 1;
  std::vector<std::string> families;  // synthetic families to use (empty: all of them)
  std::vector<int32_t> sizes = {30, 60, 120, 250};
  int32_t seeds_per_size = 2;
  std::vector<std::string> corpus_models;  // file stems under corpus_dir; empty: none
  std::string corpus_dir;
  std::vector<std::string> topologies = {"2xV100", "4xV100", "4xA100", "8xV100", "4xT4", "2xH100+2xT4", "2x2xV100"};
  int32_t topologies_per_graph = 1;
  bool training_graphs = true;  // also the training step of every graph
  CoarseningOptions coarsening;
};

// Instances in a fixed order for the options; skips nothing silently: a graph that fails to build or import
// is an error naming it.
absl::StatusOr<std::vector<std::unique_ptr<Instance>>> MakeDataset(const DatasetOptions& options);

// One instance from a graph and a topology shorthand.
absl::StatusOr<std::unique_ptr<Instance>> MakeInstance(std::string name, std::string family, Graph graph,
                                                       const std::string& topology,
                                                       const CoarseningOptions& coarsening);
// The same with a topology already parsed (a file's).
absl::StatusOr<std::unique_ptr<Instance>> MakeInstanceOn(std::string name, std::string family, Graph graph,
                                                         Topology topology, const CoarseningOptions& coarsening);
// An instance over a problem's own cost model, objective and simulator (not copied: `costs` must outlive it).
absl::StatusOr<std::unique_ptr<Instance>> InstanceOfProblem(std::string name, const CostModel& costs,
                                                            Objective objective, const SimulatorConfig& simulator,
                                                            const CoarseningOptions& coarsening);

}  // namespace placement::learned
