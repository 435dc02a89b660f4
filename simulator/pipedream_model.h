// PipeDream's cost model, as its planner computes it (Narayanan et al., SOSP 2019; optimizer_graph_hierarchical.py):
// the formulas below are the one home of those figures, read by the plan model and by the hybrid planner's DP.
//
// At a level of the cluster with bandwidth B, a stage of compute C (forward and backward) and parameter bytes P on
// r replicas takes (C + 4 (r - 1) P / (B r) / d) / r, d being the workers inside each replica (1 on a flat
// level). The activations of A bytes crossing a cut take 2 A / (B r) for a stage of r replicas: every stage but
// the first of a level's pipeline pays that for its input, and for its output unless the cut ends the graph.
// A level's pipeline takes its slowest stage or transfer. On one host the plan is one level at the host's link
// bandwidth. On several hosts the plan must nest: consecutive stages on the same hosts form a block whose
// stages use the same number of devices on each of those hosts; each block is a pipeline inside a host (at the
// intra-host bandwidth), and the blocks a pipeline between hosts (at the network bandwidth) whose stages are
// the blocks, their compute the inner pipeline's time and d the devices a block uses on each host.
//
// A is what PipeDream's antichain states charge a cut (AntichainActivations): the outputs of the layers on the
// cut's augmented antichain, which counts some that do not cross it, as the optimizer does.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/cost_model.h"
#include "simulator/parallel_plan.h"

namespace placement {

// (C + 4 (r - 1) P / (B r) / d) / r.
double PipeDreamStageSeconds(double compute, double param_bytes, int32_t replicas, double bandwidth,
                             int32_t inner_workers = 1);

// 2 A / (B r).
double PipeDreamTransferSeconds(double activation_bytes, int32_t replicas, double bandwidth);

// The activations PipeDream's planner charges a cut: the outputs of the layers (forward operators) on its
// augmented antichain, each once: the cut's maximal layers, and every ancestor of one of them with an edge to a
// layer that is neither that one nor one of its ancestors (graph.py's augment_antichain; such an edge may stay
// inside the cut, through another maximal layer's ancestors, and the layer is counted all the same).
class AntichainActivations {
 public:
  explicit AntichainActivations(const Graph& graph);
  // inside[op] != 0 for the operators before the cut (an ideal of the forward graph); other operators are ignored.
  double CutBytes(const std::vector<uint8_t>& inside) const;

 private:
  const Graph* graph_;
  std::vector<int32_t> index_;  // per operator: its place among the forward ones, or -1
  std::vector<OpId> forward_;
  std::vector<double> activation_;
  std::vector<std::vector<int32_t>> successors_;  // forward successors, by place
  int32_t words_ = 0;
  std::vector<uint64_t> ancestors_;  // per place: a bitset of its forward ancestors
};

struct PipeDreamScore {
  double value = 0;                 // the pipeline's time per sample (PipeDream's "time per stage")
  std::vector<double> stage_times;  // per plan stage: what it and its transfers take at its level(s)
  std::string bottleneck;
};

namespace plan_internal {
struct PlanFacts;
}

// UNIMPLEMENTED when the plan's stages on several hosts do not nest as above.
absl::StatusOr<PipeDreamScore> ScorePipeDream(const CostModel& costs, const ParallelPlan& plan,
                                              const plan_internal::PlanFacts& facts);

}  // namespace placement
