#include "policy/parallel/hybrid_placer.h"

#include <cmath>
#include <optional>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "policy/parallel/plan_search.h"
#include "policy/registry.h"
#include "simulator/plan_simulation.h"

namespace placement {
namespace {

using parallel::PlanSearchOptions;
using parallel::PlanSearchResult;

absl::Status CheckProblem(const PlacementProblem& problem) {
  if (problem.costs == nullptr) return absl::InvalidArgumentError("the problem has no graph and topology");
  if (problem.objective != Objective::kThroughput) {
    return absl::InvalidArgumentError(
        absl::StrCat("plans of data-parallel stages optimize throughput, not ", ObjectiveName(problem.objective)));
  }
  if (problem.global_batch < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("the global batch must not be negative (got ", problem.global_batch, ")"));
  }
  if (problem.schedule == Schedule::kGPipe && problem.global_batch == 0) {
    return absl::InvalidArgumentError("the gpipe schedule flushes the pipeline every step: give a global batch");
  }
  return absl::OkStatus();
}

// What the plan's stages are, for the notes: "2 stages: 6 + 2 replicas".
std::string StagesNote(const ParallelPlan& plan) {
  std::string out = absl::StrCat(plan.num_stages(), plan.num_stages() == 1 ? " stage" : " stages", " (replicas ");
  for (int32_t s = 0; s < plan.num_stages(); ++s) absl::StrAppend(&out, s > 0 ? "," : "", plan.replicas(s));
  return out + ")";
}

// The DP's plan, and (our model, hybrid plans) pure data parallelism to weigh it against.
absl::StatusOr<PlanSearchResult> Search(const PlacementProblem& problem, const Budget& budget, Parallelism parallelism,
                                        std::vector<std::string>* notes, std::optional<ParallelPlan>* data) {
  const bool pipedream = problem.cost_model == CostModelKind::kPipeDream;
  using Weight = PipelineModelOptions::Weight;
  absl::StatusOr<parallel::PlanLattice> lattice =
      parallel::BuildPlanLattice(*problem.costs, pipedream ? Weight::kForwardBytes : Weight::kBytes, budget);
  if (!lattice.ok()) return lattice.status();
  PlanSearchOptions options;
  options.parallelism = parallelism;
  options.schedule = problem.schedule;
  options.global_batch = problem.global_batch;
  options.sharding = problem.sharding;
  options.recompute = problem.recompute;
  absl::StatusOr<PlanSearchResult> found = pipedream
                                               ? parallel::SearchPipeDream(*problem.costs, *lattice, options, budget)
                                               : parallel::SearchOwn(*problem.costs, *lattice, options, budget);
  // A search the budget cut short answers with pure data parallelism, a plan of the family it knows.
  if (absl::IsDeadlineExceeded(found.status()) && options.parallelism != Parallelism::kPipeline) {
    notes->push_back(
        absl::StrCat("the budget ended the search (", found.status().message(), "): pure data parallelism"));
    found = parallel::DataParallel(*problem.costs, *lattice);
  }
  if (!found.ok()) return found.status();
  notes->insert(notes->end(), lattice->notes.begin(), lattice->notes.end());
  notes->push_back(absl::StrCat(lattice->model().num_units, " units, ", lattice->ideals.size(), " ideals",
                                lattice->complete ? "" : " (prefixes)", ", ", found->dp_runs, " DP runs, ",
                                found->pairs, " stages scored"));
  CopyRunOptions(problem, found->plan);
  if (!pipedream && parallelism == Parallelism::kHybrid) {
    *data = parallel::DataParallel(*problem.costs, *lattice).plan;
    CopyRunOptions(problem, **data);
  }
  return found;
}

}  // namespace

absl::Status SetPlanOptions(absl::string_view parallelism, absl::string_view cost_model, absl::string_view schedule,
                            int64_t global_batch, absl::string_view algorithm, PlacementProblem& problem) {
  absl::StatusOr<Parallelism> p = ParseParallelism(parallelism);
  if (!p.ok()) return p.status();
  absl::StatusOr<CostModelKind> c = ParseCostModel(cost_model);
  if (!c.ok()) return c.status();
  absl::StatusOr<Schedule> s = ParseSchedule(schedule);
  if (!s.ok()) return s.status();
  problem.parallelism = *p;
  problem.cost_model = *c;
  problem.schedule = *s;
  problem.global_batch = global_batch;
  const bool plans = *p != Parallelism::kOperator || algorithm == kHybridPlacerName;
  if (global_batch < 0)
    return absl::InvalidArgumentError(absl::StrCat("global batch: must not be negative (got ", global_batch, ")"));
  if (!plans && (*c == CostModelKind::kPipeDream || global_batch > 0 || *s != Schedule::kOneFOneB)) {
    return absl::InvalidArgumentError(
        "the pipedream cost model, global batch and schedule describe plans of data-parallel stages: give "
        "parallelism data, pipeline or hybrid");
  }
  if (!plans) return absl::OkStatus();
  if (problem.objective != Objective::kThroughput) {
    return absl::InvalidArgumentError(absl::StrCat("parallelism '", ParallelismName(*p),
                                                   "' plans for throughput; the objective is ",
                                                   ObjectiveName(problem.objective),
                                                   ": ask for objective throughput, or leave parallelism unset (the "
                                                   "default plan of a training step on several devices compares "
                                                   "data, pipeline and hybrid plans by their step time)"));
  }
  if (algorithm != "auto" && algorithm != kHybridPlacerName) {
    return absl::InvalidArgumentError(absl::StrCat("algorithm '", algorithm,
                                                   "' places operators; plans of parallelism '", ParallelismName(*p),
                                                   "' come from auto or ", kHybridPlacerName));
  }
  if (*s == Schedule::kGPipe && global_batch == 0) {
    return absl::InvalidArgumentError("schedule gpipe flushes the pipeline every step: give a global batch");
  }
  return absl::OkStatus();
}

absl::Status SetPlanMemory(absl::string_view sharding, absl::string_view recompute, PlacementProblem& problem) {
  absl::StatusOr<Recompute> r = ParseRecompute(recompute);
  if (!r.ok()) return r.status();
  problem.recompute = *r;
  if (*r != Recompute::kNone && problem.parallelism == Parallelism::kOperator) {
    return absl::InvalidArgumentError(absl::StrCat("recompute ", RecomputeName(*r),
                                                   " is a plan option: give parallelism data, pipeline or hybrid"));
  }
  absl::StatusOr<Sharding> s = ParseSharding(sharding);
  if (!s.ok()) return s.status();
  problem.sharding = *s;
  if (*s == Sharding::kNone) return absl::OkStatus();
  const std::string what = absl::StrCat("sharding ", ShardingName(*s), " splits a synchronous training step's state "
                                        "across the replicas of a plan: ");
  if (problem.parallelism == Parallelism::kOperator) {
    return absl::InvalidArgumentError(absl::StrCat(what, "give parallelism data, pipeline or hybrid"));
  }
  if (problem.global_batch <= 0) return absl::InvalidArgumentError(absl::StrCat(what, "give a global batch"));
  if (problem.cost_model != CostModelKind::kDefault) {
    return absl::InvalidArgumentError(absl::StrCat(what, "PipeDream's cost model has no sharding"));
  }
  return absl::OkStatus();
}

void CopyRunOptions(const PlacementProblem& problem, ParallelPlan& plan) {
  plan.schedule = problem.schedule;
  plan.global_batch = problem.global_batch;
  plan.sharding = problem.sharding;
  plan.recompute = problem.recompute;
}

absl::StatusOr<PlacerResult> PlanResult(const PlacementProblem& problem, ParallelPlan plan, std::string algorithm) {
  absl::StatusOr<PlanEvaluation> ev = EvaluatePlan(*problem.costs, plan, problem.cost_model);
  if (!ev.ok()) return ev.status();
  PlacerResult result;
  result.placement = FirstReplicaPlacement(plan);
  result.evaluation = PlanAsEvaluation(*ev);
  result.best_bound = ev->lower_bound;
  result.algorithm = std::move(algorithm);
  result.plan = PlanAnswer{std::move(plan), *std::move(ev), -1};
  return result;
}

namespace {

// Our model's DP estimates; the plan model scores its chain, and pure data parallelism, a plan of the hybrid
// family, is kept when it does better. Where the two differ, both are simulated and the simulator decides (the
// model charges each link resource its load, the simulator also the waits of transfers that hold two network
// interfaces at once, which can make a plan that streams activations between hosts slower than modelled).
absl::StatusOr<PlacerResult> BestOfFamily(const PlacementProblem& problem, const PlanSearchResult& found,
                                          const std::optional<ParallelPlan>& data, std::vector<std::string>* notes) {
  absl::StatusOr<PlacerResult> result = PlanResult(problem, found.plan, kHybridPlacerName);
  if (!result.ok() || !data.has_value() || found.plan.stages.size() == 1) return result;
  absl::StatusOr<PlacerResult> other = PlanResult(problem, *data, kHybridPlacerName);
  const auto fits = [&](const PlacerResult& r) {
    return PlanMemoryStatus(*problem.costs, r.plan->plan, r.plan->evaluation).ok();
  };
  if (!other.ok() || !fits(*other)) return result;
  if (!fits(*result)) return other;
  const double chain = ConfirmedTimePerSample(problem, *result), plain = ConfirmedTimePerSample(problem, *other);
  if (plain < chain) {
    notes->push_back(
        absl::StrFormat("pure data parallelism (%.6g, simulated %.6g) beats the DP's chain (%.6g, simulated "
                        "%.6g)",
                        other->evaluation.value, other->plan->simulated_time_per_sample, result->evaluation.value,
                        result->plan->simulated_time_per_sample));
    return other;
  }
  return result;
}

}  // namespace

absl::StatusOr<PlacerResult> PlanParallel(const PlacementProblem& problem, const Budget& budget,
                                          Parallelism parallelism) {
  if (absl::Status s = CheckProblem(problem); !s.ok()) return s;
  if (budget.Expired()) return budget.ExpiredStatus();
  if (parallelism == Parallelism::kOperator) parallelism = Parallelism::kHybrid;
  std::vector<std::string> notes;
  std::optional<ParallelPlan> data;
  absl::StatusOr<PlanSearchResult> found = Search(problem, budget, parallelism, &notes, &data);
  if (!found.ok()) return found.status();
  absl::StatusOr<PlacerResult> result = BestOfFamily(problem, *found, data, &notes);
  if (!result.ok()) return result.status();
  if (absl::Status s = PlanMemoryStatus(*problem.costs, result->plan->plan, result->plan->evaluation); !s.ok())
    return s;
  const PlanEvaluation& ev = result->plan->evaluation;
  if (!ev.memory_checked) {
    const absl::Status ours = PlanMemoryStatus(*problem.costs, result->plan->plan, ev, /*enforced=*/false);
    notes.push_back(absl::StrCat(
        "PipeDream's cost model leaves memory out, as its planner does by default",
        ours.ok() ? "; the plan fits in our memory model" : absl::StrCat("; in our memory model ", ours.message())));
  }
  // The DP computes PipeDream's figures exactly (proven optimal over the lattice); ours it estimates.
  const bool exact = std::abs(ev.time_per_sample - found->dp_value) <= 1e-9 * std::max(1.0, found->dp_value);
  result->proven_optimal = found->proven_optimal && exact && problem.cost_model == CostModelKind::kPipeDream;
  notes.insert(notes.end(), result->notes.begin(), result->notes.end());  // the simulation's, when it decided
  result->notes = std::move(notes);
  result->notes.push_back(
      absl::StrCat(ParallelismName(parallelism), " plan under the ", CostModelName(problem.cost_model),
                   " cost model: ", StagesNote(result->plan->plan), ", bottleneck ", ev.bottleneck));
  if (!exact && std::isfinite(found->dp_value)) {
    result->notes.push_back(
        absl::StrFormat("the DP estimated %.6g; the plan model scores %.6g", found->dp_value, ev.time_per_sample));
  }
  return result;
}

double ConfirmedTimePerSample(const PlacementProblem& problem, PlacerResult& result) {
  if (!result.plan.has_value()) return result.evaluation.value;
  CheckBySimulation(problem, result);
  const double simulated = result.plan->simulated_time_per_sample;
  return simulated > 0 ? std::max(result.evaluation.value, simulated) : result.evaluation.value;
}

void CheckBySimulation(const PlacementProblem& problem, PlacerResult& result, int64_t max_operators) {
  if (!result.plan.has_value() || problem.cost_model != CostModelKind::kDefault) return;
  if (result.plan->simulated_time_per_sample >= 0) return;  // simulated (or tried) already
  PlanSimulationOptions options;
  options.record_timeline = false;
  options.max_operators = max_operators;
  absl::StatusOr<std::unique_ptr<PlanSimulation>> sim = SimulatePlan(*problem.costs, result.plan->plan, options);
  if (!sim.ok()) {
    result.plan->simulated_time_per_sample = 0;
    result.notes.push_back(absl::StrCat("not simulated: ", sim.status().message()));
    return;
  }
  const double model = result.plan->evaluation.time_per_sample, simulated = (*sim)->time_per_sample;
  result.plan->simulated_time_per_sample = simulated;
  result.notes.push_back(absl::StrFormat("simulated %d micro-batches: %.6g per sample, %+.1f%% from the model's %.6g",
                                         (*sim)->micro_batches, simulated, 100 * (simulated / model - 1), model));
}

namespace {

class HybridPlacer : public Placer {
 public:
  absl::string_view name() const override { return kHybridPlacerName; }
  absl::string_view description() const override {
    return "stages run data-parallel on device groups (data, pipeline or hybrid plans): DP over the graph's ideals "
           "times replica counts, our cost model or PipeDream's";
  }
  std::vector<Objective> objectives() const override { return {Objective::kThroughput}; }
  std::vector<CostModelKind> cost_models() const override {
    return {CostModelKind::kDefault, CostModelKind::kPipeDream};
  }
  absl::StatusOr<PlacerResult> Place(const PlacementProblem& problem, const Budget& budget) const override {
    absl::StatusOr<PlacerResult> result = PlanParallel(problem, budget, problem.parallelism);
    if (result.ok()) CheckBySimulation(problem, *result);
    return result;
  }
};

}  // namespace

void RegisterParallelPlacers(PlacerRegistry& registry) { registry.Register(std::make_unique<HybridPlacer>()); }

}  // namespace placement
