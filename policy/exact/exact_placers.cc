#include "policy/exact/exact_placers.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "policy/exact/pipeline_dp.h"
#include "policy/registry.h"

namespace placement {
namespace {

class PipelineDpPlacer : public Placer {
 public:
  absl::string_view name() const override { return "pipeline_dp"; }
  absl::string_view description() const override {
    return "optimal contiguous pipeline split over ideals of the DAG (Tarnawski et al. 2020), windowed to the optimum";
  }
  std::vector<Objective> objectives() const override { return {Objective::kThroughput}; }

  absl::StatusOr<PlacerResult> Place(const PlacementProblem& problem, const Budget& budget) const override {
    if (problem.objective != Objective::kThroughput) {
      return absl::InvalidArgumentError(
          absl::StrCat("pipeline_dp optimizes the throughput objective, not ", ObjectiveName(problem.objective)));
    }
    absl::StatusOr<PipelineSolution> sol = SolveContiguousPipeline(*problem.costs, budget);
    if (!sol.ok()) return sol.status();
    absl::StatusOr<PlacerResult> result = ScorePlacement(problem, std::move(sol->placement), std::string(name()));
    if (!result.ok()) return result.status();
    result->proven_optimal = sol->proven_optimal;
    result->best_bound = sol->lower_bound;
    result->notes = std::move(sol->notes);
    if (sol->proven_optimal) result->notes.push_back("optimal among contiguous splits");
    return result;
  }
};

}  // namespace

void RegisterExactPlacers(PlacerRegistry& registry) { registry.Register(std::make_unique<PipelineDpPlacer>()); }

}  // namespace placement
