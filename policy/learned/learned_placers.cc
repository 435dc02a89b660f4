#include "policy/learned/learned_placers.h"

#include <algorithm>
#include <functional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "graph/status_macros.h"
#include "policy/heuristics/heft.h"
#include "policy/learned/decode.h"
#include "policy/learned/finetune_placer.h"
#include "policy/learned/scheduled.h"
#include "policy/placer_families.h"
#include "policy/search/local_search.h"
#include "policy/search/memory_repair.h"
#include "policy/search/search_units.h"

namespace placement::learned {
namespace {

using Mode = LearnedPlacerKind;
using heuristics::HeftWithCandidates;

bool Better(const PlacerResult& a, const PlacerResult& b) {
  if (a.evaluation.fits_memory != b.evaluation.fits_memory) return a.evaluation.fits_memory;
  return a.evaluation.value < b.evaluation.value;
}

// One decoding's answer scored under the simulator, or why there is none.
struct Contender {
  absl::StatusOr<PlacerResult> result;
  std::string label;            // how the notes name it when it wins
  std::vector<int32_t> groups;  // its device per group; empty for the HEFT-based decodings, which place operators
};

// How many decodings of each kind gave an answer, for the notes.
struct DecodingCounts {
  int samples = 0;
  int guided = 0;
  int guided_sampled = 0;
  int scheduled = 0;
  int scheduled_sampled = 0;
};

// What a failed decoding means. A sample is scored like the greedy answer, so its failure is the placer's; a
// HEFT-based decoding out of memory on the devices it was allowed (FAILED_PRECONDITION), or out of time,
// leaves the other answers standing.
enum class OnFailure { kEndPlacer, kSkipInfeasible };

// The decodings of one forward pass competing under the simulator, the greedy answer first. The best answer so
// far is kept with the name of the decoding that gave it. Every family of decodings runs through Run, so they
// all stop on the same terms when the budget runs out.
class DecodingTournament {
 public:
  DecodingTournament(const PlacementProblem& problem, const Budget& budget, const PolicyAnswer& answer,
                     const LearnedPlacerOptions& options, std::string algorithm, PlacerResult greedy)
      : problem_(problem),
        budget_(budget),
        answer_(answer),
        options_(options),
        algorithm_(std::move(algorithm)),
        rng_(problem.seed),  // seeded by the problem: the same request draws the same samples
        best_(std::move(greedy)),
        best_groups_(answer.group_device) {}

  // Placements sampled from the policy's scores (GDP samples at inference too).
  absl::Status DrawSamples() {
    return Run(Draws(options_.samples), OnFailure::kEndPlacer, &counts_.samples, [this](int k) { return Sample(k); });
  }

  // The decodings that hand the scores to HEFT's list scheduler: guided, scheduled, and their sampled variants.
  absl::Status RunScheduleDecodings();

  // "best of greedy, N samples and M guided decodings ...: <winner>".
  std::string Summary() const;
  // The best group-level answer: the guided and scheduled decodings may split a group's operators, so the
  // iterative sweeps start from here rather than from the best answer.
  const std::vector<int32_t>& best_groups() const { return best_groups_; }
  PlacerResult TakeBest() { return std::move(best_); }

 private:
  absl::Status Run(int n, OnFailure on_failure, int* count, const std::function<Contender(int)>& decode);
  Contender Sample(int k);
  Contender Guided(const HeftWithCandidates& heft, const std::vector<uint8_t>& group_rows,
                   absl::string_view label) const;
  Contender Scheduled(const HeftWithCandidates& heft, double weight, double time_scale, std::mt19937_64* sampler,
                      std::string label) const;

  // Past many_ops each decoding costs a simulation or a HEFT run over a large graph: a quarter of them.
  int Draws(int n) const { return problem_.graph().num_ops() <= options_.many_ops ? n : n / 4; }
  // Each guided or scheduled decoding is a HEFT run (about 0.7 s at 50k operators): past many_ops only the first
  // quarter of each list, at least one.
  int FirstQuarter(size_t n) const {
    return n == 0 ? 0 : static_cast<int>(std::max<size_t>(1, Draws(static_cast<int>(n))));
  }
  // Past many_ops none: each is a 0.7 s pass at 50k operators, and the greedy scheduled decoding has run.
  int ScheduledSamples() const {
    return options_.scheduled_weights.empty() || problem_.graph().num_ops() > options_.many_ops
               ? 0
               : options_.scheduled_samples;
  }

  const PlacementProblem& problem_;
  const Budget& budget_;
  const PolicyAnswer& answer_;
  const LearnedPlacerOptions& options_;
  const std::string algorithm_;
  std::mt19937_64 rng_;  // every sampled decoding draws from it, in the order they run
  PlacerResult best_;
  std::vector<int32_t> best_groups_;
  std::string winner_ = "greedy";
  DecodingCounts counts_;
};

// The one decoding loop: decode(k) for k = 0 .. n-1 while the budget lasts, each answer counted in *count and
// kept when it beats the best so far.
absl::Status DecodingTournament::Run(int n, OnFailure on_failure, int* count,
                                     const std::function<Contender(int)>& decode) {
  for (int k = 0; k < n && !budget_.Expired(); ++k) {
    Contender contender = decode(k);
    if (!contender.result.ok()) {
      const bool infeasible =
          contender.result.status().code() == absl::StatusCode::kFailedPrecondition || budget_.Expired();
      if (on_failure == OnFailure::kSkipInfeasible && infeasible) continue;
      return contender.result.status();
    }
    ++*count;
    if (!Better(*contender.result, best_)) continue;
    best_ = *std::move(contender.result);
    winner_ = std::move(contender.label);
    if (!contender.groups.empty()) best_groups_ = std::move(contender.groups);
  }
  return absl::OkStatus();
}

absl::Status DecodingTournament::RunScheduleDecodings() {
  const bool wanted =
      !options_.guided_thresholds.empty() || options_.guided_samples > 0 || !options_.scheduled_weights.empty();
  if (!wanted || budget_.Expired()) return absl::OkStatus();
  // Units and upward ranks once; each candidate set is one schedule.
  absl::StatusOr<HeftWithCandidates> prepared = HeftWithCandidates::Prepare(problem_, budget_);
  if (!prepared.ok()) return budget_.Expired() ? absl::OkStatus() : prepared.status();
  const HeftWithCandidates& heft = *prepared;
  constexpr OnFailure kSkip = OnFailure::kSkipInfeasible;

  RETURN_IF_ERROR(Run(FirstQuarter(options_.guided_thresholds.size()), kSkip, &counts_.guided, [&](int i) {
    const double threshold = options_.guided_thresholds[i];
    return Guided(heft, GroupCandidates(answer_.scores, threshold), absl::StrFormat("guided %g", threshold));
  }));
  const double time_scale = ScheduleTimeScale(answer_.groups, problem_.costs->topology().num_devices());
  RETURN_IF_ERROR(Run(FirstQuarter(options_.scheduled_weights.size()), kSkip, &counts_.scheduled, [&](int i) {
    const double weight = options_.scheduled_weights[i];
    return Scheduled(heft, weight, time_scale, nullptr, absl::StrFormat("scheduled %g", weight));
  }));
  RETURN_IF_ERROR(Run(ScheduledSamples(), kSkip, &counts_.scheduled_sampled, [&](int k) {
    const double weight = options_.scheduled_weights.front();
    return Scheduled(heft, weight, time_scale, &rng_, absl::StrFormat("scheduled sample %d at %g", k + 1, weight));
  }));
  const double sample_threshold = options_.guided_sample_threshold;
  return Run(Draws(options_.guided_samples), kSkip, &counts_.guided_sampled, [&](int k) {
    std::vector<uint8_t> rows = SampleGroupCandidates(answer_.scores, sample_threshold, rng_);
    return Guided(heft, rows, absl::StrFormat("guided sample %d at %g", k + 1, sample_threshold));
  });
}

// A placement drawn from the softmax of each group's scores.
Contender DecodingTournament::Sample(int k) {
  std::vector<int32_t> sample = DecodeSingleShot(answer_.scores, &rng_);
  absl::StatusOr<PlacerResult> scored = ScorePlacement(problem_, answer_.groups.Expand(sample), algorithm_);
  return Contender{std::move(scored), absl::StrCat("sample ", k + 1), std::move(sample)};
}

// HEFT among the devices `group_rows` leaves each group (decode.h).
Contender DecodingTournament::Guided(const HeftWithCandidates& heft, const std::vector<uint8_t>& group_rows,
                                     absl::string_view label) const {
  const int32_t devices = problem_.costs->topology().num_devices();
  const std::vector<uint8_t> candidates = OperatorCandidates(group_rows, answer_.groups, devices);
  absl::StatusOr<PlacerResult> placed = heft.Place(candidates, algorithm_, budget_);
  // How far the network narrowed the choice: HEFT alone would have every device for every operator.
  const double per_op = static_cast<double>(std::count(candidates.begin(), candidates.end(), 1)) /
                        std::max<int32_t>(1, problem_.graph().num_ops());
  return Contender{
      std::move(placed), absl::StrFormat("%s (%.1f of %d devices per operator)", label, per_op, devices), {}};
}

// HEFT's schedule taking each unit's device from the scores less weighted delays (scheduled.h); greedy when
// `sampler` is null.
Contender DecodingTournament::Scheduled(const HeftWithCandidates& heft, double weight, double time_scale,
                                        std::mt19937_64* sampler, std::string label) const {
  const heuristics::DeviceChooser chooser =
      ScheduledChooser(answer_.scores, answer_.groups, weight, time_scale, sampler, nullptr);
  return Contender{heft.PlaceChosen(chooser, algorithm_, budget_), std::move(label), {}};
}

std::string DecodingTournament::Summary() const {
  const DecodingCounts& c = counts_;
  return absl::StrCat("best of greedy, ", c.samples, " samples and ", c.guided, " guided decodings",
                      c.guided_sampled > 0 ? absl::StrCat(" (and ", c.guided_sampled, " sampled)") : "",
                      c.scheduled > 0 ? absl::StrCat(", ", c.scheduled, " scheduled") : "",
                      c.scheduled_sampled > 0 ? absl::StrCat(" (and ", c.scheduled_sampled, " sampled)") : "", ": ",
                      winner_);
}

// policy_iterative: sweeps group by group from `groups` (Placeto), keeping the best simulated sweep in *best.
// Returns how many sweeps ran; they stop early when one changes nothing.
absl::StatusOr<int> SweepGroups(const PlacementProblem& problem, const Budget& budget, const PolicyAnswer& answer,
                                const std::string& algorithm, int max_sweeps, std::vector<int32_t> groups,
                                PlacerResult* best) {
  int sweeps = 0;
  for (; sweeps < max_sweeps && !budget.Expired(); ++sweeps) {
    const std::vector<int32_t> before = groups;
    DecodeSweep(answer.scores, answer.input, groups, nullptr);
    if (groups == before) break;
    ASSIGN_OR_RETURN(PlacerResult swept, ScorePlacement(problem, answer.groups.Expand(groups), algorithm));
    if (Better(swept, *best)) *best = std::move(swept);
  }
  return sweeps;
}

// An answer that overflows a device, repaired the way local search repairs its own.
absl::StatusOr<PlacerResult> RepairedToFit(const PlacementProblem& problem, const Budget& budget,
                                           const std::string& algorithm, const PlacerResult& best) {
  ASSIGN_OR_RETURN(const search::SearchUnits units, search::SearchUnits::Build(*problem.costs));
  Placement repaired = best.placement;
  RETURN_IF_ERROR(search::RepairMemory(problem, units, budget, repaired));
  return ScorePlacement(problem, std::move(repaired), algorithm);
}

// policy_search: local search from *best for the rest of the budget, taking its answer when it is better. Its
// running out of time or being cancelled keeps *best; another error ends the placer.
absl::Status ImproveByLocalSearch(const PlacementProblem& problem, const Budget& budget, PlacerResult* best,
                                  std::vector<std::string>* notes) {
  PlacementProblem from = problem;
  from.start = &best->placement;
  absl::StatusOr<PlacerResult> searched = search::RunLocalSearch(from, budget);
  if (searched.ok() && Better(*searched, *best)) {
    for (std::string& n : searched->notes) notes->push_back(absl::StrCat("local_search: ", n));
    *best = *std::move(searched);
  } else if (!searched.ok() && searched.status().code() != absl::StatusCode::kDeadlineExceeded &&
             searched.status().code() != absl::StatusCode::kCancelled) {
    return searched.status();
  }
  return absl::OkStatus();
}

class PolicyPlacer : public Placer {
 public:
  PolicyPlacer(Mode mode, std::shared_ptr<const LearnedPolicy> policy, LearnedPlacerOptions options)
      : mode_(mode), policy_(std::move(policy)), options_(options) {}

  const LearnedPlacerInfo& Info() const { return InfoOf(mode_); }
  absl::string_view name() const override { return Info().name; }
  absl::string_view description() const override { return Info().description; }
  std::vector<Objective> objectives() const override { return Info().objectives; }

  absl::StatusOr<PlacerResult> Place(const PlacementProblem& problem, const Budget& budget) const override {
    if (problem.costs == nullptr) return absl::InvalidArgumentError(absl::StrCat(name(), ": the problem has no graph"));
    if (budget.Expired()) return budget.ExpiredStatus();
    ASSIGN_OR_RETURN(const PolicyAnswer answer, RunPolicy(*policy_, *problem.costs, options_.coarsening));
    if (budget.Expired()) return budget.ExpiredStatus();
    const std::string algorithm(name());
    ASSIGN_OR_RETURN(PlacerResult greedy,
                     ScorePlacement(problem, answer.groups.Expand(answer.group_device), algorithm));
    std::vector<std::string> notes = {absl::StrCat("policy ", policy_->version(), " on ", policy_->device(), ": ",
                                                   answer.groups.num_groups, " groups of ", problem.graph().num_ops(),
                                                   " operators")};

    DecodingTournament tournament(problem, budget, answer, options_, algorithm, std::move(greedy));
    RETURN_IF_ERROR(tournament.DrawSamples());
    RETURN_IF_ERROR(tournament.RunScheduleDecodings());
    notes.push_back(tournament.Summary());
    PlacerResult best = tournament.TakeBest();

    if (mode_ == Mode::kIterative) {
      ASSIGN_OR_RETURN(const int sweeps, SweepGroups(problem, budget, answer, algorithm, options_.sweeps,
                                                     tournament.best_groups(), &best));
      notes.push_back(absl::StrCat(sweeps, " sweeps"));
    }
    if (!best.evaluation.fits_memory) {
      ASSIGN_OR_RETURN(best, RepairedToFit(problem, budget, algorithm, best));
      notes.push_back("memory repaired");
    }
    if (mode_ == Mode::kSearch && !budget.Expired()) {
      RETURN_IF_ERROR(ImproveByLocalSearch(problem, budget, &best, &notes));
    }
    best.algorithm = algorithm;
    best.notes.insert(best.notes.begin(), notes.begin(), notes.end());
    return best;
  }

 private:
  Mode mode_;
  std::shared_ptr<const LearnedPolicy> policy_;
  LearnedPlacerOptions options_;
};

}  // namespace

absl::StatusOr<PolicyAnswer> RunPolicy(const LearnedPolicy& policy, const CostModel& costs,
                                       const CoarseningOptions& coarsening) {
  absl::StatusOr<Coarsening> groups = Coarsen(costs, coarsening);
  if (!groups.ok()) return groups.status();
  PolicyAnswer answer;
  answer.groups = *std::move(groups);
  answer.input = BuildPolicyInput(costs, answer.groups);
  absl::StatusOr<PolicyScores> scores = policy.Score(answer.input);
  if (!scores.ok()) return scores.status();
  answer.scores = *std::move(scores);
  answer.group_device = DecodeSingleShot(answer.scores, nullptr);
  return answer;
}

std::unique_ptr<Placer> MakePolicyPlacer(std::shared_ptr<const LearnedPolicy> policy,
                                         const LearnedPlacerOptions& options) {
  return std::make_unique<PolicyPlacer>(Mode::kSingleShot, std::move(policy), options);
}

void RegisterLearnedPlacers(PlacerRegistry& registry, std::shared_ptr<const LearnedPolicy> policy,
                            const LearnedPlacerOptions& options) {
  for (Mode mode : {Mode::kSingleShot, Mode::kIterative, Mode::kSearch}) {
    registry.Register(std::make_unique<PolicyPlacer>(mode, policy, options));
  }
  if (options.register_finetune) registry.Register(MakeFinetunePlacer(policy, options));
}

std::unique_ptr<PlacerRegistry> MakeRegistryWithPolicy(std::shared_ptr<const LearnedPolicy> policy,
                                                       const LearnedPlacerOptions& options) {
  return MakePlacerRegistry([&](PlacerRegistry& registry) { RegisterLearnedPlacers(registry, policy, options); });
}

}  // namespace placement::learned
