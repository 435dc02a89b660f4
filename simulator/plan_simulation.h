// Runs a few micro-batches of a parallel plan through the event simulator, to check what the plan model predicts
// and to chart the pipeline.
//
// The plan is unrolled into one graph: a copy of every operator per micro-batch, on the replica of its stage that
// runs that micro-batch (micro-batch m on replica m % r), with the graph's own tensors between the copies; the
// all-reduce of each stage as the collective's steps (simulator/collectives.h), each a zero-time operator per
// device whose chunk goes to the next step's operator on its peer, so that the simulator moves it over the link
// resources (the steps run on a collective engine beside each device, which shares its links but not its
// compute queue, as NCCL's own streams do); and the schedule as zero-byte edges on one device: a 1F1B replica starts a
// micro-batch's forward pass only once the one `in_flight` micro-batches before it has finished its backward pass (and,
// without a global batch, once the round before that one has finished its all-reduce and update: a forward pass uses
// weights at most in_flight + 1 rounds old), and every device runs the operator listed first among those ready,
// micro-batch by micro-batch (GPipe: every forward pass first). Weights are resident once per replica.
//
// Without a global batch it runs M and 2M micro-batches (M enough for the pipeline to fill) and reports the
// difference of the two makespans over M, so that filling and draining cancel out; with one it runs one step and
// reports the step (time per sample = step / G).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/cost_model.h"
#include "simulator/parallel_plan.h"
#include "simulator/simulator.h"

namespace placement {

struct PlanSimulationOptions {
  int32_t micro_batches = 0;          // M, without a global batch; 0: enough for the pipeline to fill
  int64_t max_operators = 3'000'000;  // of the unrolled graph; fewer micro-batches are run past it
  bool record_timeline = true;
};

struct PlanSimulation {
  // The unrolled graph, placed, and its simulation on the cluster with a collective engine beside each device.
  std::unique_ptr<Graph> graph;
  std::unique_ptr<Topology> topology;
  std::unique_ptr<CostModel> costs;
  Placement placement;
  SimulationResult result;
  int32_t micro_batches = 0;
  double time_per_sample = 0;
  double step_time = 0;  // with a global batch
};

// RESOURCE_EXHAUSTED when even two rounds (or one step) exceed max_operators; the plan's errors (ValidatePlan).
absl::StatusOr<std::unique_ptr<PlanSimulation>> SimulatePlan(const CostModel& costs, const ParallelPlan& plan,
                                                             const PlanSimulationOptions& options = {});

}  // namespace placement
