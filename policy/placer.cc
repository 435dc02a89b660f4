#include "policy/placer.h"

#include <utility>

#include "absl/status/status.h"

namespace placement {

absl::Status Budget::ExpiredStatus() const {
  if (cancelled != nullptr && cancelled->load(std::memory_order_relaxed)) return absl::CancelledError("the request was cancelled");
  return absl::DeadlineExceededError("the deadline passed before a placement was found");
}

absl::StatusOr<PlacerResult> ScorePlacement(const PlacementProblem& problem, Placement placement, std::string algorithm) {
  absl::StatusOr<Evaluation> evaluation = Evaluate(*problem.costs, placement, problem.objective, problem.simulator);
  if (!evaluation.ok()) return evaluation.status();
  PlacerResult result;
  result.placement = std::move(placement);
  result.evaluation = *std::move(evaluation);
  result.algorithm = std::move(algorithm);
  result.best_bound = result.evaluation.bound.value;
  return result;
}

}  // namespace placement
