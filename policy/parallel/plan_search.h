// The hybrid planner's searches: the best chain of data-parallel stages for a cost model, exact over the lattice
// (plan_lattice.h) and the plan family each search states.
//
// Both grow a bound T geometrically from the work bound (total work over the devices) until the windowed DP
// (replica_dp.h) finds a chain, capped by the value of pure data parallelism; the run that finds one returns the
// optimum of the family.
//
// - PipeDream's model (SearchPipeDream): on one host, the DP over the accelerators with PipeDream's stage and
//   transfer formulas (simulator/pipedream_model.h); on several hosts of equal size, PipeDream's hierarchy: a DP
//   over hosts whose stages (blocks) are inner pipelines on the same devices of each of their hosts, the inner
//   times from a DP per block start (a backward DP for the last block).
// - Our model (SearchOwn): one DP over the accelerators in host-major order, a stage's group a contiguous run of
//   them (so replicas fill a host before they spill into the next), the stage's cost its compute and all-reduce
//   over its replicas and its transfers over the links its neighbours imply; the plan found is then scored
//   exactly by simulator/plan_model.h.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "policy/parallel/plan_lattice.h"
#include "policy/placer.h"

namespace placement::parallel {

struct PlanSearchOptions {
  Parallelism parallelism = Parallelism::kHybrid;  // kData: one stage; kPipeline: one replica per stage
  Schedule schedule = Schedule::kOneFOneB;
  int64_t global_batch = 0;
  Sharding sharding = Sharding::kNone;  // what a stage's replicas split (simulator/parallel_plan.h)
  Recompute recompute = Recompute::kNone;
};

struct PlanSearchResult {
  ParallelPlan plan;
  double dp_value = 0;          // the chain's value as the DP computed it
  bool proven_optimal = false;  // no plan of the family does better (the lattice was complete)
  int64_t pairs = 0;
  int32_t dp_runs = 0;
  std::vector<std::string> notes;
};

absl::StatusOr<PlanSearchResult> SearchPipeDream(const CostModel& costs, const PlanLattice& lattice,
                                                 const PlanSearchOptions& options, const Budget& budget);
absl::StatusOr<PlanSearchResult> SearchOwn(const CostModel& costs, const PlanLattice& lattice,
                                           const PlanSearchOptions& options, const Budget& budget);

// Pure data parallelism: one stage on every accelerator (the first of each host, then the second...).
PlanSearchResult DataParallel(const CostModel& costs, const PlanLattice& lattice);

// The accelerators of the lattice's model by host, hosts in order.
std::vector<std::vector<DeviceId>> AcceleratorsByHost(const Topology& topology);

// The DP over `devices` devices from the empty ideal to the full one at growing bounds (GrowBound from the work
// bound up to `upper`): sets *chain to the best chain found (left alone when none is) and returns its value;
// counts DP runs and pairs in *counters.
absl::StatusOr<double> SearchChain(const IdealSet& ideals, int32_t devices, int32_t max_replicas, double upper,
                                   StageCostFn cost, const Budget& budget, std::vector<ReplicaStep>* chain,
                                   PlanSearchResult* counters);

// Runs attempt(T) for T = lower + (lower / 256) 2^i, capped at upper, until it finds a value (attempt returns
// kNoPlan for none within T); *runs counts the attempts. The budget's status when it expires first.
absl::StatusOr<double> GrowBound(double lower, double upper, const Budget& budget,
                                 absl::FunctionRef<absl::StatusOr<double>(double bound)> attempt, int32_t* runs);

}  // namespace placement::parallel
