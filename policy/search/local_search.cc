#include "policy/search/local_search.h"

#include <random>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "policy/search/memory_repair.h"
#include "policy/search/search_loop.h"
#include "policy/search/search_units.h"
#include "policy/search/start_placement.h"

namespace placement::search {
namespace {

constexpr char kName[] = "local_search";

class LocalSearchPlacer : public Placer {
 public:
  explicit LocalSearchPlacer(LocalSearchOptions options) : options_(std::move(options)) {}

  absl::string_view name() const override { return kName; }
  absl::string_view description() const override {
    return "anytime simulator-guided local search (moves, swaps, critical-path runs, annealing) from the best of "
           "heft and m_topo or a given start; never worse than its start";
  }
  std::vector<Objective> objectives() const override {
    return {Objective::kStepTime, Objective::kThroughput, Objective::kLatency};
  }
  absl::StatusOr<PlacerResult> Place(const PlacementProblem& problem, const Budget& budget) const override {
    return RunLocalSearch(problem, budget, options_);
  }

 private:
  LocalSearchOptions options_;
};

}  // namespace

absl::StatusOr<PlacerResult> RunLocalSearch(const PlacementProblem& problem, const Budget& budget,
                                            const LocalSearchOptions& options) {
  if (problem.costs == nullptr)
    return absl::InvalidArgumentError("local_search: the problem has no graph and topology");
  if (budget.Expired()) return budget.ExpiredStatus();
  absl::StatusOr<SearchUnits> units = SearchUnits::Build(*problem.costs);
  if (!units.ok()) return units.status();

  absl::StatusOr<StartPoint> start = ChooseStart(problem, *units, budget, options);
  if (!start.ok()) return start.status();
  absl::StatusOr<Evaluation> first = Evaluate(*problem.costs, start->placement, problem.objective, problem.simulator);
  if (!first.ok()) return first.status();
  std::vector<std::string> notes = std::move(start->notes);
  if (!first->fits_memory) {
    if (absl::Status s = RepairMemory(problem, *units, budget, start->placement); !s.ok()) return s;
    absl::StatusOr<Evaluation> repaired =
        Evaluate(*problem.costs, start->placement, problem.objective, problem.simulator);
    if (!repaired.ok()) return repaired.status();
    notes.push_back(
        absl::StrFormat("the %s start did not fit memory; repaired (%.6g)", start->source, repaired->value));
    first = *std::move(repaired);
  }
  notes.push_back(absl::StrFormat("start: %s (%.6g)", start->source, first->value));

  std::mt19937_64 rng(problem.seed);
  ImprovementReporter reporter(problem, budget);
  reporter.NewBest(start->placement);
  const SearchContext ctx{&problem, &*units, &options, &budget, &reporter};
  absl::StatusOr<SearchOutcome> outcome = problem.objective == Objective::kThroughput
                                              ? SearchThroughput(ctx, start->placement, rng)
                                              : SearchSimulated(ctx, start->placement, rng);
  if (!outcome.ok()) return outcome.status();

  absl::StatusOr<PlacerResult> result = ScorePlacement(problem, std::move(outcome->best), kName);
  if (!result.ok()) return result.status();
  // The loops compare values computed incrementally; the final word is Evaluate's, and the start stands when a
  // rounding difference would make the answer look worse than it.
  if (!result->evaluation.fits_memory || result->evaluation.value > first->value) {
    result->placement = std::move(start->placement);
    result->evaluation = *std::move(first);
  }
  notes.push_back(absl::StrCat(outcome->tried, " moves tried, ", outcome->accepted, " accepted (", outcome->screened,
                               " turned down by a cheap check, ", outcome->improved,
                               " new bests); stopped: ", outcome->stopped_by));
  if (first->value > 0) {
    notes.push_back(absl::StrFormat("%.6g, %.2f%% below the start", result->evaluation.value,
                                    100.0 * (1.0 - result->evaluation.value / first->value)));
  }
  result->notes = std::move(notes);
  return result;
}

std::unique_ptr<Placer> MakeLocalSearchPlacer(LocalSearchOptions options) {
  return std::make_unique<LocalSearchPlacer>(std::move(options));
}

}  // namespace placement::search
