// What a parallel plan (simulator/parallel_plan.h) costs: time per sample, time per step, and memory per device.
//
// Our own model (CostModelKind::kDefault). A sample is one run of the graph (one micro-batch). Stage s runs on
// r_s replicas; a replica's compute per micro-batch is its forward and backward operators at their times on that
// device, the slowest replica counting. Its weight gradients (the bytes of the stage's forward operators'
// parameters) are all-reduced over the group on the topology's link resources (simulator/collectives.h), and
// the optimizer's updates (backward operators without outputs) run after it. Without a global batch the
// replicas all-reduce after every round, one micro-batch each, as PipeDream does; the all-reduce of a round runs
// while the replica goes on with the rounds in flight, whose forward passes use weights at most in_flight + 1
// rounds old, so the stage allows one sample per max(forward + backward + update, all-reduce / in_flight) / r_s,
// and the all-reduce's traffic loads the links. A tensor one stage sends another goes once per
// micro-batch, from the replica that ran it to the one that runs its reader, over the path's link resources,
// and a link resource carries one transfer at a time; compute and transfers overlap. A transfer holds every
// resource of its path at once, so a resource whose transfers also need another one (a host's network interface
// and the peer host's) idles while an all-reduce that leaves it free holds that other one: without a global batch
// it allows a sample per its tensors' time plus, for each such peer, its share of them times the seconds the
// peer's all-reduces keep it unavailable (collectives.h, SecondsUnavailable). Time per sample is the busiest
// stage or link resource.
//
// With a global batch G the pipeline flushes every step: replica k of stage s runs ceil(G / r_s) micro-batches
// (fewer for the last replicas), all-reduces once and updates once, as PyTorch's DistributedDataParallel does:
// the gradients in buckets, each all-reduced while the backward pass of the last micro-batch goes on. The step is one micro-batch's way through
// every stage and back, plus the bottleneck stage's other micro-batches, plus what the all-reduces and updates
// of the stages that finish last add; time per sample is the step over G.
//
// Memory per device: the weights (one version per micro-batch in flight under PipeDream's 1F1B without a
// global batch, which stashes them; one with a flush), a gradient buffer as large, the optimizer's state (the
// parameter bytes of backward operators), the activations each micro-batch in flight keeps for its backward
// pass (the bytes of forward tensors the stage's backward operators read), and the largest operator's working
// set (its outputs and temporary bytes), and with a global batch, for a group of replicas, DistributedDataParallel's gradient buckets (a
// second copy of the gradients), with the micro-batches in flight of InFlightMicroBatches
// (simulator/parallel_plan.h). An inference graph has no gradients: no all-reduce, one weight version.
//
// PipeDream's model (CostModelKind::kPipeDream) replaces the times with the formulas of PipeDream's planner
// (pipedream_model.h). Memory is figured as ours but does not constrain the plan: PipeDream's planner leaves it out
// unless told (--use_memory_constraint), and its published plans are made without it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/cost_model.h"
#include "simulator/collectives.h"
#include "simulator/objectives.h"
#include "simulator/parallel_plan.h"

namespace placement {

struct StageScore {
  int32_t replicas = 1;
  double forward = 0;    // one micro-batch's forward operators on the stage's slowest replica
  double backward = 0;   // its backward operators, the optimizer's updates apart
  double update = 0;     // the optimizer's updates, once per all-reduce
  double allreduce = 0;  // one all-reduce of the weight gradients over the group
  // With a global batch: what of the all-reduce runs after the stage's last backward pass ends. The gradients go in
  // DistributedDataParallel's buckets (plan_facts.h), each all-reduced once the backward has produced it, so most
  // of the all-reduce overlaps the backward pass.
  double allreduce_exposed = 0;
  AllReduceKind allreduce_kind = AllReduceKind::kNone;
  double period = 0;  // time per sample the stage allows on its own
  int64_t weight_bytes = 0;
  int64_t gradient_bytes = 0;  // the gradients, and with a global batch on replicas DDP's bucket copy of them
  int64_t optimizer_bytes = 0;
  int64_t stash_bytes = 0;  // kept per micro-batch in flight
  int64_t working_bytes = 0;
  int32_t in_flight = 1;
  int32_t weight_versions = 1;
  int64_t memory_bytes = 0;  // per device of the group
  int64_t capacity = 0;      // the group's smallest device memory; 0 = unlimited
};

struct PlanEvaluation {
  CostModelKind cost_model = CostModelKind::kDefault;
  double time_per_sample = 0;  // the graph's time unit per run of the graph (one micro-batch)
  double step_time = 0;        // one optimizer step of the global batch; 0 without one
  double lower_bound = 0;      // every operator's fastest time over the devices (updates once a step), per sample
  std::string bottleneck;      // what sets time_per_sample: "stage 2", "link host0/nic", ...
  std::vector<StageScore> stages;
  // Per topology device: busy = its compute per sample, load = its stage's period, memory as above.
  std::vector<DeviceScore> devices;
  // Per topology link resource (our model): the seconds it carries transfers per sample (the waits for the peers of
  // its transfers apart).
  std::vector<double> link_busy;
  bool fits_memory = true;
  bool memory_checked = true;  // false under PipeDream's model: the figures are for information
};

// Validates the plan (ValidatePlan), then scores it. UNIMPLEMENTED where PipeDream's model cannot read the
// plan (pipedream_model.h).
// What recomputation keeps of a training step as one stage on the first device runs it (recompute.h): the
// checkpoints' share of the activations it would keep otherwise, and its largest segment's bytes. The planner's
// search scales each candidate stage's activations by the share. {1, 0} for a step with nothing to keep.
struct CheckpointShare {
  double kept = 1;
  int64_t segment_bytes = 0;
};
CheckpointShare WholeStepCheckpoints(const CostModel& costs);

absl::StatusOr<PlanEvaluation> EvaluatePlan(const CostModel& costs, const ParallelPlan& plan,
                                            CostModelKind kind = CostModelKind::kDefault);

// FAILED_PRECONDITION naming the stage most short of memory and by how much; OK when the plan fits, or when
// `enforced` is false (PipeDream's model) and the status is only for the notes.
absl::Status PlanMemoryStatus(const CostModel& costs, const ParallelPlan& plan, const PlanEvaluation& evaluation,
                              bool enforced = true);

// The plan's score as an objective Evaluation (THROUGHPUT, value = time per sample), for what reports placements.
Evaluation PlanAsEvaluation(const PlanEvaluation& evaluation);

// A placement scored under a cost model: ours is the objective's own (Evaluate); PipeDream's scores THROUGHPUT
// only, the placement as a pipeline of one replica per stage (INVALID_ARGUMENT for another objective).
absl::StatusOr<Evaluation> EvaluateUnder(const CostModel& costs, const Placement& placement, Objective objective,
                                         const SimulatorConfig& config, CostModelKind kind);

// True for an optimizer update: a backward operator with no output (it applies a gradient in place).
bool IsOptimizerUpdate(const Graph& graph, OpId op);

}  // namespace placement
