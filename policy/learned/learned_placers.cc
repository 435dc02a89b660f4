#include "policy/learned/learned_placers.h"

#include <algorithm>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
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

bool Better(const PlacerResult& a, const PlacerResult& b) {
  if (a.evaluation.fits_memory != b.evaluation.fits_memory) return a.evaluation.fits_memory;
  return a.evaluation.value < b.evaluation.value;
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
    absl::StatusOr<PolicyAnswer> answer = RunPolicy(*policy_, *problem.costs, options_.coarsening);
    if (!answer.ok()) return answer.status();
    if (budget.Expired()) return budget.ExpiredStatus();
    const std::string algorithm(name());
    absl::StatusOr<PlacerResult> best = ScorePlacement(problem, answer->groups.Expand(answer->group_device), algorithm);
    if (!best.ok()) return best.status();
    std::vector<std::string> notes = {absl::StrCat("policy ", policy_->version(), " on ", policy_->device(), ": ",
                                                   answer->groups.num_groups, " groups of ", problem.graph().num_ops(),
                                                   " operators")};

    // Sampled mode (GDP samples at inference too): a few placements drawn from the policy, seeded by the
    // problem, compete with the greedy one under the simulator.
    std::vector<int32_t> best_groups = answer->group_device;
    // Past many_ops each draw costs a simulation of a large graph: a quarter of them.
    auto draws = [&](int n) { return problem.graph().num_ops() <= options_.many_ops ? n : n / 4; };
    const int samples = draws(options_.samples);
    std::mt19937_64 rng(problem.seed);
    int drawn = 0;
    std::string winner = "greedy";
    for (; drawn < samples && !budget.Expired(); ++drawn) {
      std::vector<int32_t> sample = DecodeSingleShot(answer->scores, &rng);
      absl::StatusOr<PlacerResult> r = ScorePlacement(problem, answer->groups.Expand(sample), algorithm);
      if (!r.ok()) return r.status();
      if (Better(*r, *best)) {
        best = std::move(r);
        best_groups = std::move(sample);
        winner = absl::StrCat("sample ", drawn + 1);
      }
    }
    // Guided decodings give per-operator placements (the schedule may split a group's operators), so the
    // iterative sweeps below still start from the best group-level answer.
    int guided = 0, guided_sampled = 0, scheduled = 0, scheduled_sampled = 0;  // decodings that gave an answer
    if ((!options_.guided_thresholds.empty() || options_.guided_samples > 0 || !options_.scheduled_weights.empty()) &&
        !budget.Expired()) {
      // Units and upward ranks once; each candidate set is one schedule.
      absl::StatusOr<heuristics::HeftWithCandidates> heft = heuristics::HeftWithCandidates::Prepare(problem, budget);
      if (!heft.ok() && !budget.Expired()) return heft.status();
      const int32_t devices = problem.costs->topology().num_devices();
      // A HEFT-based decoding's answer, counted in *count when there is one; true when it is the best so far.
      // Out of memory on the devices allowed, or out of time, leaves the other answers standing; another error
      // ends the placer.
      auto keep = [&](absl::StatusOr<PlacerResult> r, int* count) -> absl::StatusOr<bool> {
        if (!r.ok()) {
          if (r.status().code() == absl::StatusCode::kFailedPrecondition || budget.Expired()) return false;
          return r.status();
        }
        ++*count;
        if (!Better(*r, *best)) return false;
        best = std::move(r);
        return true;
      };
      // One guided decoding.
      auto try_guided = [&](const std::vector<uint8_t>& group_rows, const std::string& label, int* count) {
        const std::vector<uint8_t> candidates = OperatorCandidates(group_rows, answer->groups, devices);
        absl::StatusOr<bool> kept = keep(heft->Place(candidates, algorithm, budget), count);
        if (!kept.ok()) return kept.status();
        if (*kept) {
          // How far the network narrowed the choice: HEFT alone would have every device for every operator.
          const double per_op = static_cast<double>(std::count(candidates.begin(), candidates.end(), 1)) /
                                std::max<int32_t>(1, problem.graph().num_ops());
          winner = absl::StrFormat("%s (%.1f of %d devices per operator)", label, per_op, devices);
        }
        return absl::OkStatus();
      };
      // Each guided or scheduled decoding is a HEFT run (about 0.7 s at 50k operators): past many_ops only the
      // first quarter of each list, at least one.
      auto first_quarter = [&](size_t n) { return n == 0 ? n : std::max<size_t>(1, draws(static_cast<int>(n))); };
      const size_t thresholds = first_quarter(options_.guided_thresholds.size());
      for (size_t i = 0; i < thresholds; ++i) {
        const double threshold = options_.guided_thresholds[i];
        if (!heft.ok() || budget.Expired()) break;
        absl::Status st = try_guided(GroupCandidates(answer->scores, threshold), absl::StrFormat("guided %g", threshold), &guided);
        if (!st.ok()) return st;
      }
      const double time_scale = ScheduleTimeScale(answer->groups, devices);
      // One scheduled decoding (greedy when sampler is null).
      auto try_scheduled = [&](double weight, std::mt19937_64* sampler, const std::string& label, int* count) {
        absl::StatusOr<bool> kept = keep(
            heft->PlaceChosen(ScheduledChooser(answer->scores, answer->groups, weight, time_scale, sampler, nullptr),
                              algorithm, budget),
            count);
        if (!kept.ok()) return kept.status();
        if (*kept) winner = label;
        return absl::OkStatus();
      };
      const size_t schedules = first_quarter(options_.scheduled_weights.size());
      for (size_t i = 0; i < schedules && heft.ok() && !budget.Expired(); ++i) {
        const double weight = options_.scheduled_weights[i];
        absl::Status st = try_scheduled(weight, nullptr, absl::StrFormat("scheduled %g", weight), &scheduled);
        if (!st.ok()) return st;
      }
      // Past many_ops none: each is a 0.7 s pass at 50k operators, and the greedy scheduled decoding has run.
      const int scheduled_samples = options_.scheduled_weights.empty() || problem.graph().num_ops() > options_.many_ops
                                        ? 0
                                        : options_.scheduled_samples;
      for (int k = 0; k < scheduled_samples && heft.ok() && !budget.Expired(); ++k) {
        const double weight = options_.scheduled_weights.front();
        absl::Status st =
            try_scheduled(weight, &rng, absl::StrFormat("scheduled sample %d at %g", k + 1, weight), &scheduled_sampled);
        if (!st.ok()) return st;
      }
      const int guided_samples = draws(options_.guided_samples);
      for (int k = 0; k < guided_samples && heft.ok() && !budget.Expired(); ++k) {
        const std::vector<uint8_t> rows = SampleGroupCandidates(answer->scores, options_.guided_sample_threshold, rng);
        absl::Status st = try_guided(
            rows, absl::StrFormat("guided sample %d at %g", k + 1, options_.guided_sample_threshold), &guided_sampled);
        if (!st.ok()) return st;
      }
    }
    notes.push_back(absl::StrCat("best of greedy, ", drawn, " samples and ", guided, " guided decodings",
                                 guided_sampled > 0 ? absl::StrCat(" (and ", guided_sampled, " sampled)") : "",
                                 scheduled > 0 ? absl::StrCat(", ", scheduled, " scheduled") : "",
                                 scheduled_sampled > 0 ? absl::StrCat(" (and ", scheduled_sampled, " sampled)") : "", ": ",
                                 winner));

    if (mode_ == Mode::kIterative) {
      std::vector<int32_t> current = best_groups;
      int sweeps = 0;
      for (; sweeps < options_.sweeps && !budget.Expired(); ++sweeps) {
        const std::vector<int32_t> before = current;
        DecodeSweep(answer->scores, answer->input, current, nullptr);
        if (current == before) break;
        absl::StatusOr<PlacerResult> swept = ScorePlacement(problem, answer->groups.Expand(current), algorithm);
        if (!swept.ok()) return swept.status();
        if (Better(*swept, *best)) best = std::move(swept);
      }
      notes.push_back(absl::StrCat(sweeps, " sweeps"));
    }

    if (!best->evaluation.fits_memory) {
      absl::StatusOr<search::SearchUnits> units = search::SearchUnits::Build(*problem.costs);
      if (!units.ok()) return units.status();
      Placement repaired = best->placement;
      absl::Status fit = search::RepairMemory(problem, *units, budget, repaired);
      if (!fit.ok()) return fit;
      best = ScorePlacement(problem, std::move(repaired), algorithm);
      if (!best.ok()) return best.status();
      notes.push_back("memory repaired");
    }

    if (mode_ == Mode::kSearch && !budget.Expired()) {
      PlacementProblem from = problem;
      from.start = &best->placement;
      absl::StatusOr<PlacerResult> searched = search::RunLocalSearch(from, budget);
      if (searched.ok() && Better(*searched, *best)) {
        for (std::string& n : searched->notes) notes.push_back(absl::StrCat("local_search: ", n));
        best = std::move(searched);
      } else if (!searched.ok() && searched.status().code() != absl::StatusCode::kDeadlineExceeded &&
                 searched.status().code() != absl::StatusCode::kCancelled) {
        return searched.status();
      }
    }
    best->algorithm = algorithm;
    best->notes.insert(best->notes.begin(), notes.begin(), notes.end());
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

std::unique_ptr<Placer> MakePolicyPlacer(std::shared_ptr<const LearnedPolicy> policy, const LearnedPlacerOptions& options) {
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
  return MakePlacerRegistry(
      [&](PlacerRegistry& registry) { RegisterLearnedPlacers(registry, policy, options); });
}

}  // namespace placement::learned
