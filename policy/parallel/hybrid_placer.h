// "hybrid_dp": plans for clusters beyond one copy of the model. Stages of operators run data-parallel on device
// groups (simulator/parallel_plan.h), found by the DP over the graph's ideals times replica counts
// (plan_search.h), scored by the plan model under the problem's cost model (simulator/plan_model.h) and, in our
// own model, checked by simulating a few micro-batches (simulator/plan_simulation.h).
//
// The problem's parallelism says which plans: data (one stage on every device), pipeline (one device per
// stage) or hybrid (both; also what kOperator asks of this placer). The placer checks its answer by simulation;
// PlanParallel does not (AUTO simulates only its winner). The answer's placement puts every operator on its
// stage's first replica; PlacerResult.plan holds the plan, its score and the simulated time.
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "policy/placer.h"

namespace placement {

class PlacerRegistry;

inline constexpr char kHybridPlacerName[] = "hybrid_dp";

// Sets the problem's plan options from their names (the flags and request fields): parallelism ("" or operator,
// data, pipeline, hybrid), cost model ("" or default, pipedream), schedule ("" or 1f1b, gpipe), global batch
// (0: none); and checks them against the objective and the algorithm: plans optimize THROUGHPUT, are made by
// AUTO or hybrid_dp, PipeDream's cost model and a global batch or GPipe go with plans, GPipe needs a global
// batch. INVALID_ARGUMENT naming the option otherwise.
absl::Status SetPlanOptions(absl::string_view parallelism, absl::string_view cost_model, absl::string_view schedule,
                            int64_t global_batch, absl::string_view algorithm, PlacementProblem& problem);

// Sets what a plan's stages do to hold less (simulator/parallel_plan.h) once SetPlanOptions has set the rest: what
// their replicas split ("" or none, zero1, zero2, zero3 or fsdp) and what their backward recomputes ("" or none,
// full). Both are plan options (parallelism data, pipeline, hybrid or auto's portfolio); sharding splits a
// synchronous step's state, so it also needs a global batch and our cost model. INVALID_ARGUMENT naming what is
// missing otherwise.
absl::Status SetPlanMemory(absl::string_view sharding, absl::string_view recompute, PlacementProblem& problem);

// INVALID_ARGUMENT for an objective other than THROUGHPUT or plan options out of range (a global batch smaller
// than a data-parallel group it must use, GPipe without a global batch); FAILED_PRECONDITION naming the stage
// when the best plan does not fit memory or a group must span hosts the topology keeps apart; UNIMPLEMENTED
// for clusters the planner cannot read (no accelerators, accelerators of different kinds, PipeDream's cost
// model on hosts of different sizes).
absl::StatusOr<PlacerResult> PlanParallel(const PlacementProblem& problem, const Budget& budget,
                                          Parallelism parallelism);

// How the problem asks a plan to run: its schedule, global batch, sharding and recomputation.
void CopyRunOptions(const PlacementProblem& problem, ParallelPlan& plan);

// The plan's answer for a plan made elsewhere (an operator placement as one replica per stage, say): scored under
// the problem's cost model; the memory check is the caller's.
absl::StatusOr<PlacerResult> PlanResult(const PlacementProblem& problem, ParallelPlan plan, std::string algorithm);

// Simulates a few micro-batches of the answer's plan (our own model only) and records the time and a note; a
// plan whose unrolled graph would pass `max_operators` is not simulated (the note says so).
void CheckBySimulation(const PlacementProblem& problem, PlacerResult& result, int64_t max_operators = 400'000);

// The time per sample a plan's answer can be trusted to reach: the model's, or the simulated one when the
// simulation (run here once, our own model only) measured more.
double ConfirmedTimePerSample(const PlacementProblem& problem, PlacerResult& result);

void RegisterParallelPlacers(PlacerRegistry& registry);

}  // namespace placement
