#include "policy/placer.h"

#include <algorithm>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace placement {

absl::string_view ParallelismName(Parallelism p) {
  switch (p) {
    case Parallelism::kData:
      return "data";
    case Parallelism::kPipeline:
      return "pipeline";
    case Parallelism::kHybrid:
      return "hybrid";
    case Parallelism::kOperator:
      break;
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
  if (cancelled != nullptr && cancelled->load(std::memory_order_relaxed))
    return absl::CancelledError("the request was cancelled");
  return absl::DeadlineExceededError("the deadline passed before a placement was found");
}

bool Optimizes(const Placer& placer, const PlacementProblem& problem) {
  return CheckPlacerFits(placer, problem.objective, problem.cost_model).ok();
}

absl::Status CheckPlacerFits(const Placer& placer, Objective objective, CostModelKind cost_model) {
  if (absl::Status s = CheckCostModel(cost_model, objective); !s.ok()) return s;
  const std::vector<Objective> objectives = placer.objectives();
  const std::vector<CostModelKind> models = placer.cost_models();
  const bool objective_ok = std::find(objectives.begin(), objectives.end(), objective) != objectives.end();
  const bool model_ok = std::find(models.begin(), models.end(), cost_model) != models.end();
  if (objective_ok && model_ok) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "algorithm '", placer.name(), "' optimizes ",
      absl::StrJoin(objectives, ", ", [](std::string* out, Objective o) { absl::StrAppend(out, ObjectiveName(o)); }),
      " under the ",
      absl::StrJoin(models, " or ", [](std::string* out, CostModelKind k) { absl::StrAppend(out, CostModelName(k)); }),
      " cost model, not ", ObjectiveName(objective), " under the ", CostModelName(cost_model), " cost model"));
}

absl::StatusOr<PlacerResult> ScorePlacement(const PlacementProblem& problem, Placement placement,
                                            std::string algorithm) {
  absl::StatusOr<Evaluation> evaluation =
      Evaluate(*problem.costs, placement, problem.objective, problem.simulator, problem.cost_model);
  if (!evaluation.ok()) return evaluation.status();
  PlacerResult result;
  result.placement = std::move(placement);
  result.evaluation = *std::move(evaluation);
  result.algorithm = std::move(algorithm);
  result.best_bound = result.evaluation.bound.value;
  return result;
}

}  // namespace placement
