// AUTO ("auto"): a portfolio of the registered placers chosen by objective and graph size (portfolio.h), run
// one after another within the budget, then local search from the best few answers. Returns the best answer that
// fits memory, so it is never worse than any placer it ran; PlacerResult.algorithm is "auto:<winner>" and the
// notes list every placer with its value and time.
//
// When the registry has the learned policy's policy_finetune and the deadline leaves time after the searches
// (they stop early once converged), it runs in that time, then a search from its answer: AUTO without it would
// have answered already, so it only ever adds to the answer; the notes say what it gained.
//
// With no deadline every candidate runs to its end (exact methods within their size limits, portfolio.h).
//
// Candidates run in sequence on one thread: the answer then depends only on what each placer returns, and
// third-party solvers (Scotch, CBC) are not asked to be reentrant.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "policy/placer.h"

namespace placement {

class PlacerRegistry;

// AUTO takes its candidates from `registry` itself (what was registered before and after it), so the registry
// must outlive the placer (it owns it).
void RegisterAutoPlacer(PlacerRegistry& registry);

namespace portfolio {

struct AutoOptions {
  const PlacerRegistry* registry = nullptr;  // where candidates are looked up; required
  double search_fraction = 0.4;              // share of the budget kept for the final local search
};

// What one placer of the portfolio did, in the order they ran (local search may appear once per start).
struct PortfolioRun {
  std::string placer;
  absl::Status status;  // its error, or OK
  bool fits_memory = false;
  double value = 0;  // under the problem's objective, when OK
  absl::Duration took;
};

// DEADLINE_EXCEEDED (or CANCELLED) when the budget ends before any answer; FAILED_PRECONDITION, from the first
// candidate that said so, when no candidate found a placement that fits memory; INVALID_ARGUMENT without
// options.registry. `runs`, when given, receives what each placer did.
absl::StatusOr<PlacerResult> RunAuto(const PlacementProblem& problem, const Budget& budget, const AutoOptions& options,
                                     std::vector<PortfolioRun>* runs = nullptr);

std::unique_ptr<Placer> MakeAutoPlacer(AutoOptions options);

}  // namespace portfolio
}  // namespace placement
