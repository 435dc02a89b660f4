// Internal to the simulator library: what the plan model (plan_model.h), PipeDream's model (pipedream_model.h)
// and the plan simulation read about a plan's stages, gathered in one pass over the graph.
#pragma once

#include <cstdint>
#include <vector>

#include "graph/cost_model.h"
#include "simulator/collectives.h"
#include "simulator/parallel_plan.h"

namespace placement::plan_internal {

// A bucket of weight gradients all-reduced together, as PyTorch's DistributedDataParallel groups them: in the
// order the backward produces them, the first bucket closing past 1 MiB and the others past 25 MiB (its defaults),
// each all-reduced as soon as its last gradient is ready, one after another.
struct GradientBucket {
  int64_t bytes = 0;
  std::vector<OpId> producers;  // the backward operators that produce its gradients
  double ready = 0;             // seconds into the stage's backward pass when its last gradient is produced
  AllReducePlan allreduce;      // over the stage's group (kNone for a group of one)
};
inline constexpr int64_t kFirstBucketBytes = int64_t{1} << 20;
inline constexpr int64_t kBucketBytes = int64_t{25} << 20;

struct StageFacts {
  double forward = 0, backward = 0, update = 0;  // per micro-batch on the slowest replica (update: per sync)
  double backward_kernels = 0;  // of `backward`, the device's kernels alone (it is at least the host's time to issue)
  double work = 0;                               // every operator's time on the first replica, summed
  int64_t weight_bytes = 0, optimizer_bytes = 0, stash_bytes = 0, working_bytes = 0;
  int64_t largest_weight_bytes = 0;  // the most one forward operator holds: what ZeRO-3 gathers at once
  // Under Recompute::kFull (recompute.h): kept per micro-batch in flight, the largest segment's, the segments.
  int64_t checkpoint_bytes = 0, segment_bytes = 0;
  int32_t segments = 0;
  std::vector<GradientBucket> buckets;  // training only
};

// Tensors stage `from` sends stage `to` per micro-batch, aggregated: those with a measured transfer time, and
// the count and bytes of those whose time follows the path.
struct StageTraffic {
  int32_t from = 0, to = 0;
  double measured_seconds = 0;
  int32_t derived_count = 0;
  double derived_bytes = 0;
  double SecondsOn(const Path& path) const {
    return measured_seconds + derived_count * path.latency + derived_bytes / path.bandwidth;
  }
};

struct PlanFacts {
  bool training = false;  // the graph has backward operators: stages all-reduce weight gradients
  std::vector<StageFacts> stages;
  std::vector<StageTraffic> traffic;  // sorted by (from, to)
};

// The plan must be valid (ValidatePlan).
PlanFacts GatherPlanFacts(const CostModel& costs, const ParallelPlan& plan);

}  // namespace placement::plan_internal
