// AUTO for plans (a problem whose parallelism is not kOperator): weighs pure data parallelism, pure pipelines,
// operator placement (AUTO's own portfolio, its placement scored as one replica per stage) and hybrid plans under
// the problem's cost model, returns the fastest that fits memory, and says in its notes what each gave and which
// won. Data or pipeline parallelism asked for alone is planned alone. The winner is checked by simulation
// (policy/parallel/hybrid_placer.h).
#pragma once

#include "absl/status/statusor.h"
#include "policy/auto/auto_placer.h"
#include "policy/placer.h"

namespace placement::portfolio {

// Errors: the first candidate's error that says memory cannot fit (FAILED_PRECONDITION) when no candidate fits;
// the budget's status when it ends before any answer; the plan options' errors.
absl::StatusOr<PlacerResult> RunPlanPortfolio(const PlacementProblem& problem, const Budget& budget,
                                              const AutoOptions& options);

}  // namespace placement::portfolio
