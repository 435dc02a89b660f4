#include "policy/auto/auto_placer.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "policy/auto/plan_portfolio.h"
#include "policy/auto/portfolio.h"
#include "policy/registry.h"
#include "policy/search/local_search.h"

namespace placement {
namespace portfolio {
namespace {

constexpr char kName[] = "auto";
constexpr size_t kSearchStarts = 3;
// policy_finetune runs in the time the searches leave when at least this much is left; its answer then gets
// kFinetuneSearchShare of that time for a search from it.
constexpr char kFinetunePlacer[] = "policy_finetune";
constexpr absl::Duration kMinFinetune = absl::Seconds(2);
constexpr double kFinetuneSearchShare = 0.25;
// Placers whose best_bound holds for every placement (not only for the placements they consider), so that
// AUTO may report it. pipeline_dp's bound covers contiguous splits only.
constexpr const char* kGlobalBounds[] = {"ilp_throughput"};

bool ProvesGlobally(absl::string_view name) {
  for (const char* n : kGlobalBounds) {
    if (name == n) return true;
  }
  return false;
}

struct Outcome {
  std::string name;
  absl::StatusOr<PlacerResult> result;
  absl::Duration took;
};

bool Feasible(const Outcome& o) { return o.result.ok() && o.result->evaluation.fits_memory; }

// Lower value wins; equal values go to the smaller name, so the answer does not depend on the run order.
bool Beats(const Outcome& a, const Outcome& b) {
  if (a.result->evaluation.value != b.result->evaluation.value)
    return a.result->evaluation.value < b.result->evaluation.value;
  return a.name < b.name;
}

std::string Describe(const Outcome& o) {
  const std::string ms = absl::StrFormat("%.0f ms", absl::ToDoubleMilliseconds(o.took));
  if (!o.result.ok()) {
    return absl::StrCat(o.name, ": ", absl::StatusCodeToString(o.result.status().code()), " after ", ms, " (",
                        o.result.status().message(), ")");
  }
  return absl::StrFormat("%s: %.6g in %s%s%s", o.name, o.result->evaluation.value, ms,
                         o.result->evaluation.fits_memory ? "" : " (does not fit memory)",
                         !o.result->proven_optimal ? ""
                         : ProvesGlobally(o.name)  ? " (proven optimal)"
                                                   : " (optimal among the placements it considers)");
}

Outcome Run(const Placer& placer, const PlacementProblem& problem, const Budget& budget) {
  const absl::Time begin = absl::Now();
  absl::StatusOr<PlacerResult> r = placer.Place(problem, budget);
  return Outcome{std::string(placer.name()), std::move(r), absl::Now() - begin};
}

// The error AUTO returns when nothing fits: a memory shortfall if any placer reported one (it says what is
// missing), else the budget's status, else the first error.
absl::Status NoAnswer(const std::vector<Outcome>& outcomes, const Budget& budget) {
  for (const Outcome& o : outcomes) {
    if (!o.result.ok() && o.result.status().code() == absl::StatusCode::kFailedPrecondition) return o.result.status();
  }
  for (const Outcome& o : outcomes) {
    if (o.result.ok() && !o.result->evaluation.fits_memory) {
      return absl::FailedPreconditionError(
          absl::StrCat("no placer found a placement that fits memory (", o.name, "'s answer does not)"));
    }
  }
  if (budget.Expired() || outcomes.empty()) return budget.ExpiredStatus();
  for (const Outcome& o : outcomes) {
    if (!o.result.ok() && o.result.status().code() == absl::StatusCode::kDeadlineExceeded) return o.result.status();
  }
  return outcomes.front().result.status();
}

// The best lower bound on every placement: the objective's own bound, raised by placers that prove theirs.
double GlobalBound(const PlacementProblem& problem, const std::vector<Outcome>& outcomes) {
  double bound = ComputeLowerBound(*problem.costs, problem.objective, problem.cost_model).value;
  for (const Outcome& o : outcomes) {
    if (o.result.ok() && ProvesGlobally(o.name)) bound = std::max(bound, o.result->best_bound);
  }
  return bound;
}

// Up to kSearchStarts answers that fit, best first, no two the same placement.
std::vector<size_t> SearchStarts(const std::vector<Outcome>& outcomes) {
  std::vector<size_t> order;
  for (size_t i = 0; i < outcomes.size(); ++i) {
    if (Feasible(outcomes[i])) order.push_back(i);
  }
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return Beats(outcomes[a], outcomes[b]); });
  std::vector<size_t> starts;
  for (size_t i : order) {
    bool seen = false;
    for (size_t j : starts) seen = seen || outcomes[i].result->placement.device == outcomes[j].result->placement.device;
    if (!seen) starts.push_back(i);
    if (starts.size() == kSearchStarts) break;
  }
  // The learned policy's answer is always one of the starts (the last when the others are better): its
  // placements differ in kind from the list schedulers', so a search from it ends in another local optimum.
  for (size_t i : order) {
    if (outcomes[i].name.rfind("policy", 0) != 0) continue;
    bool seen = false;
    for (size_t j : starts) seen = seen || outcomes[i].result->placement.device == outcomes[j].result->placement.device;
    if (seen) break;
    if (starts.size() == kSearchStarts) starts.pop_back();
    starts.push_back(i);
    break;
  }
  return starts;
}

// One AUTO run: the candidates, then the searches, then the answer. Keeps what every placer returned.
class Session {
 public:
  Session(const PlacementProblem& problem, const Budget& budget, const PlacerRegistry& registry)
      : problem_(problem), budget_(budget), registry_(registry) {
    listening_ = budget.on_improved != nullptr && *budget.on_improved;
    forward_ = [this](const PlacerResult& r) { Forward(r); };
  }

  // The one-shot placers, each with its weight's share of what is left of (1 - search_fraction) of the budget.
  void RunCandidates(const Plan& plan, double search_fraction) {
    const bool finite = budget_.deadline != absl::InfiniteFuture();
    const absl::Time phase_end =
        finite ? absl::Now() + (budget_.deadline - absl::Now()) * (plan.search ? 1 - search_fraction : 1.0)
               : absl::InfiniteFuture();
    double weight_left = 0;
    for (const Candidate& c : plan.run) weight_left += c.weight;
    PlacementProblem fresh = problem_;
    for (const Candidate& c : plan.run) {
      fresh.start = c.from_best && best_ ? &outcomes_[*best_].result->placement : nullptr;
      weight_left -= c.weight;
      if (budget_.Expired()) {
        notes_.push_back(absl::StrCat(c.name, ": not run, the budget ran out"));
        continue;
      }
      Budget share = budget_;
      if (finite) {
        const absl::Time now = absl::Now();
        share.deadline = now + std::max(absl::ZeroDuration(), phase_end - now) * (c.weight / (c.weight + weight_left));
      }
      const std::string from = fresh.start != nullptr ? absl::StrCat(" (from ", outcomes_[*best_].name, ")") : "";
      Record(Run(**registry_.Find(c.name), fresh, Listened(share)), from);
    }
  }

  // Local search from the best few distinct answers, best first, while the budget lasts: searches from different
  // starts end in different local optima, and one that has converged stops early and leaves time for the next.
  // Skipped once the best meets a proven bound.
  //
  // The second search starts where local_search on its own would (its start placers' best, with the problem's
  // seed), unless the first already did: a converged search is a function of its start and seed, so AUTO then
  // lands at least where a separate local_search run lands.
  void RunSearches(const std::string& search_placer) {
    search_placer_ = search_placer;
    const double bound = GlobalBound(problem_, outcomes_);
    std::vector<SearchRun> plan;
    for (size_t i : SearchStarts(outcomes_)) plan.push_back(SearchRun{i, problem_.seed + plan.size()});
    if (const std::optional<size_t> own = OwnStart(); own && (plan.empty() || !SamePlacement(plan[0].start, *own))) {
      // On a tie with the best start it goes first: a search cut short by the deadline then matches local_search's.
      const bool tie = !plan.empty() &&
                       outcomes_[*own].result->evaluation.value <= outcomes_[plan[0].start].result->evaluation.value;
      std::erase_if(plan, [&](const SearchRun& r) { return SamePlacement(r.start, *own); });
      plan.insert(plan.begin() + (tie ? 0 : std::min<size_t>(1, plan.size())), SearchRun{*own, problem_.seed});
    }
    outcomes_.reserve(outcomes_.size() + std::max<size_t>(1, plan.size()));  // the starts point into outcomes_
    if (plan.empty()) {  // no answer yet: one search from its own start
      Record(Run(**registry_.Find(search_placer_), problem_, Listened(budget_)), "");
      return;
    }
    for (const SearchRun& run : plan) {
      if (Settled(bound) || budget_.Expired()) break;
      PlacementProblem from = problem_;
      from.start = &outcomes_[run.start].result->placement;
      from.seed = run.seed;
      Outcome searched = Run(**registry_.Find(search_placer_), from, Listened(budget_));
      Record(std::move(searched), absl::StrCat(" (from ", outcomes_[run.start].name, ")"));
    }
  }

  // policy_finetune (the learned policy tuned on this graph) in the time the searches left: AUTO without it
  // would have answered already, so it can only add to the answer. Runs when the registry has it for the
  // objective, the deadline is finite and leaves kMinFinetune, and the best is not proven optimal; then a search
  // from its answer when that is new. The notes say what it gained.
  void RunFinetune() {
    absl::StatusOr<const Placer*> placer = registry_.Find(kFinetunePlacer);
    if (!placer.ok() || budget_.deadline == absl::InfiniteFuture()) return;
    const std::vector<Objective> objectives = (*placer)->objectives();
    if (std::find(objectives.begin(), objectives.end(), problem_.objective) == objectives.end()) return;
    const std::vector<CostModelKind> models = (*placer)->cost_models();
    if (std::find(models.begin(), models.end(), problem_.cost_model) == models.end()) return;
    const absl::Duration left = budget_.deadline - absl::Now();
    if (Settled(GlobalBound(problem_, outcomes_))) {
      notes_.push_back(absl::StrCat(kFinetunePlacer, ": not run, the best answer meets a proven bound"));
      return;
    }
    if (left < kMinFinetune || budget_.Expired()) {
      notes_.push_back(absl::StrCat(kFinetunePlacer, ": not run, ",
                                    left > absl::ZeroDuration() ? absl::StrCat(absl::FormatDuration(left), " left")
                                                                : "no time left",
                                    " after the searches"));
      return;
    }
    const double before = best_ ? outcomes_[*best_].result->evaluation.value : std::numeric_limits<double>::infinity();
    PlacementProblem fresh = problem_;
    fresh.start = nullptr;
    Budget share = budget_;
    share.deadline = absl::Now() + left * (1 - kFinetuneSearchShare);
    Record(Run(**placer, fresh, Listened(share)), "");
    const size_t tuned = outcomes_.size() - 1;
    if (!Feasible(outcomes_[tuned])) return;
    const double value = outcomes_[tuned].result->evaluation.value;
    notes_.push_back(value < before ? absl::StrFormat("%s gained %.2f%% over the best answer before it",
                                                      kFinetunePlacer, 100 * (1 - value / before))
                                    : absl::StrFormat("%s gained nothing over the best answer before it (%.6g)",
                                                      kFinetunePlacer, before));
    const bool seen = std::any_of(outcomes_.begin(), outcomes_.end() - 1, [&](const Outcome& o) {
      return Feasible(o) && o.result->placement.device == outcomes_[tuned].result->placement.device;
    });
    absl::StatusOr<const Placer*> search = registry_.Find(search_placer_);
    if (seen || !search.ok() || budget_.Expired()) return;
    PlacementProblem from = problem_;
    from.start = &outcomes_[tuned].result->placement;
    Outcome searched = Run(**search, from, Listened(budget_));
    Record(std::move(searched), absl::StrCat(" (from ", kFinetunePlacer, ")"));
  }

  absl::StatusOr<PlacerResult> Finish(std::vector<std::string> notes, std::vector<PortfolioRun>* runs) {
    if (runs != nullptr) {
      for (const Outcome& o : outcomes_) {
        runs->push_back(PortfolioRun{o.name, o.result.status(), Feasible(o),
                                     o.result.ok() ? o.result->evaluation.value : 0, o.took});
      }
    }
    if (!best_) return NoAnswer(outcomes_, budget_);
    PlacerResult result = *std::move(outcomes_[*best_].result);
    const std::string winner = outcomes_[*best_].name;
    result.best_bound = std::min(GlobalBound(problem_, outcomes_), result.evaluation.value);
    result.proven_optimal =
        (result.proven_optimal && ProvesGlobally(winner)) || result.evaluation.value <= result.best_bound * (1 + 1e-9);
    notes.insert(notes.end(), notes_.begin(), notes_.end());
    notes.push_back(absl::StrCat("winner: ", winner));
    for (std::string& n : result.notes) notes.push_back(absl::StrCat(winner, ": ", n));
    result.notes = std::move(notes);
    result.algorithm = absl::StrCat(kName, ":", winner);
    return result;
  }

 private:
  // Keeps a placer's outcome; a search result must beat the best strictly (it started from it), a candidate
  // may win a tie by name.
  void Record(Outcome o, const std::string& suffix) {
    const bool search = o.name == search_placer_;
    notes_.push_back(absl::StrCat(Describe(o), suffix));
    if (listening_ && o.result.ok()) Forward(*o.result);
    outcomes_.push_back(std::move(o));
    const Outcome& last = outcomes_.back();
    if (!Feasible(last)) return;
    if (!best_ || (search ? last.result->evaluation.value < outcomes_[*best_].result->evaluation.value
                          : Beats(last, outcomes_[*best_]))) {
      best_ = outcomes_.size() - 1;
    }
  }

  struct SearchRun {
    size_t start;  // index into outcomes_
    uint64_t seed;
  };

  bool SamePlacement(size_t a, size_t b) const {
    return outcomes_[a].result->placement.device == outcomes_[b].result->placement.device;
  }

  // The answer local_search would start from on its own: the first of its start placers with the lowest
  // feasible value among those AUTO ran (search::ChooseStart's rule).
  std::optional<size_t> OwnStart() const {
    std::optional<size_t> own;
    if (search_placer_ != kSearchPlacer) return own;  // the rule is local_search's
    for (const std::string& name : search::LocalSearchOptions{}.start_placers) {
      for (size_t i = 0; i < outcomes_.size(); ++i) {
        if (outcomes_[i].name != name || !Feasible(outcomes_[i])) continue;
        if (!own || outcomes_[i].result->evaluation.value < outcomes_[*own].result->evaluation.value) own = i;
      }
    }
    return own;
  }

  bool Settled(double bound) const {
    if (!best_) return false;
    const PlacerResult& r = *outcomes_[*best_].result;
    return r.evaluation.value <= bound * (1 + 1e-9) || (r.proven_optimal && ProvesGlobally(outcomes_[*best_].name));
  }

  // Answers stream to the caller's listener as AUTO's own: only those better than every one before, named
  // "auto:<placer>". Placers may call it from their own threads.
  void Forward(const PlacerResult& r) {
    if (!r.evaluation.fits_memory) return;
    std::lock_guard<std::mutex> lock(mutex_);
    if (r.evaluation.value >= reported_) return;
    reported_ = r.evaluation.value;
    PlacerResult named = r;
    named.algorithm = absl::StrCat(kName, ":", r.algorithm);
    budget_.Improved(named);
  }
  Budget Listened(Budget b) const {
    b.on_improved = listening_ ? &forward_ : nullptr;
    return b;
  }

  const PlacementProblem& problem_;
  const Budget& budget_;
  const PlacerRegistry& registry_;
  std::string search_placer_ = kSearchPlacer;
  std::vector<Outcome> outcomes_;
  std::optional<size_t> best_;
  std::vector<std::string> notes_;
  bool listening_ = false;
  std::function<void(const PlacerResult&)> forward_;
  std::mutex mutex_;
  double reported_ = std::numeric_limits<double>::infinity();
};

class AutoPlacer : public Placer {
 public:
  explicit AutoPlacer(AutoOptions options) : options_(options) {}
  absl::string_view name() const override { return kName; }
  absl::string_view description() const override {
    return "portfolio by objective, graph size and deadline (exact methods where they finish, heuristics, then "
           "local search from the best); never worse than any placer it ran";
  }
  std::vector<Objective> objectives() const override {
    return {Objective::kStepTime, Objective::kThroughput, Objective::kLatency};
  }
  std::vector<CostModelKind> cost_models() const override {
    return {CostModelKind::kDefault, CostModelKind::kTarnawski, CostModelKind::kPipeDream};
  }
  absl::StatusOr<PlacerResult> Place(const PlacementProblem& problem, const Budget& budget) const override {
    return RunAuto(problem, budget, options_);
  }

 private:
  AutoOptions options_;
};

}  // namespace

absl::StatusOr<PlacerResult> RunAuto(const PlacementProblem& problem, const Budget& budget, const AutoOptions& options,
                                     std::vector<PortfolioRun>* runs) {
  if (problem.costs == nullptr) return absl::InvalidArgumentError("auto: the problem has no graph and topology");
  if (options.registry == nullptr) return absl::InvalidArgumentError("auto: no registry to take the candidates from");
  if (absl::Status s = CheckCostModel(problem.cost_model, problem.objective); !s.ok()) return s;
  if (budget.Expired()) return budget.ExpiredStatus();
  if (problem.parallelism != Parallelism::kOperator) return RunPlanPortfolio(problem, budget, options);
  const PlacerRegistry& registry = *options.registry;
  const Plan plan = PlanPortfolio(problem, registry);
  Session session(problem, budget, registry);
  session.RunCandidates(plan, options.search_fraction);
  if (plan.search) session.RunSearches(plan.search_placer);
  session.RunFinetune();
  return session.Finish(plan.skipped, runs);
}

std::unique_ptr<Placer> MakeAutoPlacer(AutoOptions options) { return std::make_unique<AutoPlacer>(options); }

}  // namespace portfolio

void RegisterAutoPlacer(PlacerRegistry& registry) {
  portfolio::AutoOptions options;
  options.registry = &registry;  // its candidates are whatever this registry holds, the learned placers included
  registry.Register(portfolio::MakeAutoPlacer(options));
}

}  // namespace placement
