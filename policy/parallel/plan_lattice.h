// The ideals the hybrid planner chains stages along, with what a stage between two of them holds.
//
// The graph is reduced to units as for pipeline_dp (policy/exact/pipeline_model.h: colocation groups, so a
// layer's backward operators go with it, fused where a split would close a cycle, zero-cost units merged or
// floated), with every tensor weighing its bytes (or, for PipeDream's cost model, only the forward ones), so that
// the bytes crossing an ideal and a stage are IdealSet's cross_weight and Comm; for PipeDream's model each ideal
// also has the activations its planner charges the cut (simulator/pipedream_model.h). Each ideal also sums the
// parameter bytes of the forward operators (the weights a stage all-reduces), the optimizer state and the
// activations backward operators read. When the ideals are more than memory or the limit allow, the family is
// the prefixes of two topological orders (the search beyond the exact lattice).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "policy/exact/ideal_set.h"
#include "policy/exact/pipeline_model.h"
#include "policy/parallel/replica_dp.h"
#include "policy/placer.h"

namespace placement::parallel {

struct LatticeLimits {
  // Past this many ideals the family is the prefixes of topological orders: a DP with replica counts over more
  // takes seconds (InceptionV3 as a training step has 382,318).
  int64_t max_ideals = 100'000;
  int64_t max_bytes = int64_t{256} << 20;
};

struct PlanLattice {
  const PipelineModel& model() const { return *model_ptr; }
  std::unique_ptr<PipelineModel> model_ptr;  // where the ideals point: it stays put when the lattice moves
  IdealSet ideals;
  bool complete = false;                // every ideal of the unit DAG (else prefixes of topological orders)
  std::vector<double> weight_bytes;     // per ideal
  std::vector<double> optimizer_bytes;  // per ideal
  std::vector<double> stash_bytes;      // per ideal, per micro-batch
  double working_bytes = 0;             // the largest operator's outputs and temporary bytes
  // For PipeDream's cost model: what its planner charges the cut each ideal makes (AntichainActivations).
  std::vector<double> pipedream_cut;
  std::vector<std::string> notes;
};

absl::StatusOr<PlanLattice> BuildPlanLattice(const CostModel& costs, PipelineModelOptions::Weight weight,
                                             const Budget& budget, const LatticeLimits& limits = {});

// The stage of every operator for a chain of steps from the empty ideal to the full one.
std::vector<int32_t> StagesOfOps(const PlanLattice& lattice, const std::vector<ReplicaStep>& chain);

}  // namespace placement::parallel
