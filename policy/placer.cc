#include "policy/placer.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace placement {

absl::string_view ParallelismName(Parallelism p) {
  switch (p) {
    case Parallelism::kData: return "data";
    case Parallelism::kPipeline: return "pipeline";
    case Parallelism::kHybrid: return "hybrid";
    case Parallelism::kOperator: break;
  }
  return "operator";
}

absl::StatusOr<Parallelism> ParseParallelism(absl::string_view name) {
  if (name.empty()) return Parallelism::kOperator;
  for (Parallelism p : {Parallelism::kOperator, Parallelism::kData, Parallelism::kPipeline, Parallelism::kHybrid}) {
    if (ParallelismName(p) == name) return p;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown parallelism '", name, "'; known kinds are operator, data, pipeline, hybrid"));
}

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
