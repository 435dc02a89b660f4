// A plan for a cluster beyond one copy of the model: the graph cut into stages that run as a pipeline, each
// stage data-parallel on a group of devices (PipeDream, Piper). Micro-batches go round-robin over a stage's
// replicas, a stage's replicas all-reduce their weight gradients over the topology's links, and the schedule
// says in which order a replica runs the forward and backward passes of the micro-batches it holds.
//
// An operator placement is the special case of one replica per stage (PlanFromPlacement); a plan's first
// replicas form a placement (FirstReplicaPlacement), which is what answers that speak of one device per
// operator report.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/cost_model.h"
#include "graph/placement.h"

namespace placement {

enum class Schedule : uint8_t {
  // PipeDream's one-forward-one-backward: a replica keeps at most as many micro-batches in flight as the
  // devices from its stage to the end can hold, and runs a waiting backward pass before a new forward one.
  // Without a global batch the replicas all-reduce after every round (one micro-batch each) and keep a weight
  // version per micro-batch in flight (weight stashing); with one, the pipeline flushes every step.
  kOneFOneB = 0,
  // GPipe: every forward pass of a step first, then the backward passes, then the flush; needs a global batch.
  kGPipe = 1,
};

absl::string_view ScheduleName(Schedule s);  // "1f1b", "gpipe"
// "" means 1f1b; an unknown name is INVALID_ARGUMENT listing the known ones.
absl::StatusOr<Schedule> ParseSchedule(absl::string_view name);

// What a stage's data-parallel replicas split among them rather than each holding whole (ZeRO's stages): the
// optimizer's state (ZeRO-1), also the gradients (ZeRO-2), also the weights (ZeRO-3, FSDP's full sharding), each a
// 1/r share per replica of a group of r.
enum class Sharding : uint8_t {
  kNone = 0,
  kOptimizer = 1,   // zero1
  kGradients = 2,   // zero2
  kParameters = 3,  // zero3, fsdp
};

absl::string_view ShardingName(Sharding s);  // "none", "zero1", "zero2", "zero3"
// "" means none; "fsdp" is zero3; an unknown name is INVALID_ARGUMENT listing the known ones.
absl::StatusOr<Sharding> ParseSharding(absl::string_view name);

// What a training step's stages recompute in their backward pass rather than keep from the forward.
enum class Recompute : uint8_t {
  kNone = 0,
  kFull = 1,  // each stage's forward in segments, only their inputs kept (torch.utils.checkpoint; recompute.h)
};

absl::string_view RecomputeName(Recompute r);  // "none", "full"
// "" means none; an unknown name is INVALID_ARGUMENT listing the known ones.
absl::StatusOr<Recompute> ParseRecompute(absl::string_view name);

struct PlanStage {
  std::vector<DeviceId> devices;  // its data-parallel group: micro-batch m runs on devices[m % size]
};

struct ParallelPlan {
  std::vector<int32_t> stage_of_op;  // per OpId: an index into stages
  std::vector<PlanStage> stages;     // in pipeline order
  Schedule schedule = Schedule::kOneFOneB;
  // Micro-batches (runs of the graph) per optimizer step; 0: no step boundary, the replicas of a stage
  // all-reduce after every round, as PipeDream does.
  int64_t global_batch = 0;
  Sharding sharding = Sharding::kNone;  // training with a global batch: what replicas split (plan_model.h)
  Recompute recompute = Recompute::kNone;

  int32_t num_stages() const { return static_cast<int32_t>(stages.size()); }
  int32_t replicas(int32_t s) const { return static_cast<int32_t>(stages[s].devices.size()); }
};

// Checks, with errors naming the stage: every operator in a stage that exists, no stage without operators or
// devices, no device in two groups, every operator runs on every device of its group, colocation groups
// within one stage, pinned operators on their device (INVALID_ARGUMENT); a global batch smaller than a
// stage's replica count, or GPipe without a global batch (INVALID_ARGUMENT); a group on several hosts where
// the topology keeps data-parallel groups inside a host (FAILED_PRECONDITION).
absl::Status ValidatePlan(const CostModel& costs, const ParallelPlan& plan);

// "stage 2 (12 operators from 'conv1' to 'fc', 4 replicas on host0/gpu0 .. host0/gpu3)".
std::string DescribeStage(const CostModel& costs, const ParallelPlan& plan, int32_t stage);

// Micro-batches a replica of stage s keeps between their forward and backward passes. GPipe: all its micro-batches
// of a step. 1F1B: twice PipeDream's minimum, ceil(D_s / r_s) with D_s the devices of stages s and after, and no
// more than its micro-batches of a step: the minimum keeps a pipeline busy only when transfers, updates and
// all-reduces take no time, and the simulator ran our plans 20-70% below their bottleneck's rate with it
// (docs/parallel-plans.md). Synchronous steps of one stage (data parallelism with a global batch): one.
int32_t InFlightMicroBatches(const ParallelPlan& plan, int32_t stage);

// Every operator on its stage's first device.
Placement FirstReplicaPlacement(const ParallelPlan& plan);

// One replica per stage: a stage per device that runs operators, ordered by the earliest of its operators in
// the graph's topological order.
ParallelPlan PlanFromPlacement(const Graph& graph, const Placement& placement);

// Every operator in one stage, data-parallel on `devices`.
ParallelPlan OneStagePlan(const Graph& graph, std::vector<DeviceId> devices);

}  // namespace placement
