// The placer interface: every algorithm that turns (graph, cluster, objective) into a placement.
//
// A placer honours the budget (deadline and cancellation: an anytime placer returns the best it has found
// when time runs out, a one-shot placer checks between phases and gives up with DEADLINE_EXCEEDED or
// CANCELLED), respects pinned operators, colocation groups and memory capacity, and when nothing it can build
// fits returns FAILED_PRECONDITION saying how much memory is missing on which device.
#pragma once

#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "graph/cost_model.h"
#include "graph/placement.h"
#include "simulator/objectives.h"
#include "simulator/parallel_plan.h"
#include "simulator/plan_model.h"
#include "simulator/simulator.h"

namespace placement {

struct PlacerResult;

struct Budget {
  absl::Time deadline = absl::InfiniteFuture();
  const std::atomic<bool>* cancelled = nullptr;  // set by the caller (a cancelled RPC); may be null
  // Optional listener for answers found before the placer returns (the service streams them to the client).
  // An anytime placer may call Improved with each better answer it finds; the listener keeps what it wants
  // (it must be cheap and thread-safe). Null: nobody listens.
  const std::function<void(const PlacerResult&)>* on_improved = nullptr;

  void Improved(const PlacerResult& result) const {
    if (on_improved != nullptr && *on_improved) (*on_improved)(result);
  }

  bool Expired() const {
    return absl::Now() >= deadline || (cancelled != nullptr && cancelled->load(std::memory_order_relaxed));
  }
  // The status a placer returns when it stops for the budget without an answer.
  absl::Status ExpiredStatus() const;
  static Budget For(absl::Duration d) { return Budget{absl::Now() + d, nullptr}; }
};

// What kind of answer a THROUGHPUT request wants: one device per operator (today's placements), or a plan whose
// stages run data-parallel on device groups (simulator/parallel_plan.h): one stage on every device (data), one
// device per stage (pipeline), or both (hybrid).
enum class Parallelism : uint8_t { kOperator = 0, kData = 1, kPipeline = 2, kHybrid = 3 };

absl::string_view ParallelismName(Parallelism p);  // "operator", "data", "pipeline", "hybrid"
// "" means operator; an unknown name is INVALID_ARGUMENT listing the known ones.
absl::StatusOr<Parallelism> ParseParallelism(absl::string_view name);

struct PlacementProblem {
  const CostModel* costs = nullptr;  // the graph and the topology
  Objective objective = Objective::kStepTime;
  // How the objective is computed (simulator/objectives.h): our own model, Tarnawski's latency model, or for plans
  // (parallelism other than operator) PipeDream's formulas.
  CostModelKind cost_model = CostModelKind::kDefault;
  Parallelism parallelism = Parallelism::kOperator;
  Schedule schedule = Schedule::kOneFOneB;  // plans: the micro-batch schedule
  int64_t global_batch = 0;                 // plans: micro-batches per step; 0: none (PipeDream's)
  Sharding sharding = Sharding::kNone;      // plans with a global batch: what a stage's replicas split
  Recompute recompute = Recompute::kNone;   // plans of a training step: what the backward recomputes
  SimulatorConfig simulator;                // used when the objective simulates
  uint64_t seed = 1;                        // for randomized placers
  const Placement* start = nullptr;         // optional starting point for improving placers (search)

  const Graph& graph() const { return costs->graph(); }
  const Topology& topology() const { return costs->topology(); }
};

// A plan's answer: the plan, its score, and what simulating a few of its micro-batches gave.
struct PlanAnswer {
  ParallelPlan plan;
  PlanEvaluation evaluation;
  double simulated_time_per_sample = -1;  // -1: not simulated yet; 0: could not be simulated
};

struct PlacerResult {
  Placement placement;             // for a plan: every operator on its stage's first replica
  Evaluation evaluation;           // the placement scored under the problem's objective
  std::string algorithm;           // which placer produced it (for AUTO: the winner, e.g. "auto:heft")
  bool proven_optimal = false;     // exact methods that finished
  double best_bound = 0;           // exact methods: the best proven bound on the optimum (else the generic lower bound)
  std::vector<std::string> notes;  // human-readable remarks (e.g. "deadline reached after 1,234 moves")
  std::optional<PlanAnswer> plan;  // set when the answer is a parallel plan (evaluation is then its score)
};

class Placer {
 public:
  virtual ~Placer() = default;
  virtual absl::string_view name() const = 0;
  virtual absl::string_view description() const = 0;      // one line
  virtual std::vector<Objective> objectives() const = 0;  // the objectives it optimizes
  // The cost models it optimizes under; most placers know only the default one.
  virtual std::vector<CostModelKind> cost_models() const { return {CostModelKind::kDefault}; }
  virtual absl::StatusOr<PlacerResult> Place(const PlacementProblem& problem, const Budget& budget) const = 0;
};

// Whether the placer optimizes the problem's objective under the problem's cost model.
bool Optimizes(const Placer& placer, const PlacementProblem& problem);
// INVALID_ARGUMENT saying what the placer optimizes when it does not optimize the problem's objective under its
// cost model (or when the cost model does not score the objective); OK otherwise.
absl::Status CheckPlacerFits(const Placer& placer, Objective objective, CostModelKind cost_model);

// Scores a placement under the problem's objective and fills a result; placers end with this.
absl::StatusOr<PlacerResult> ScorePlacement(const PlacementProblem& problem, Placement placement,
                                            std::string algorithm);

}  // namespace placement
