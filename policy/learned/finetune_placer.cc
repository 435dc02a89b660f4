#include "policy/learned/finetune_placer.h"

#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "policy/learned/dataset.h"
#include "policy/learned/trainer.h"

namespace placement::learned {
namespace {

// Time kept after training for the tuned copy's single-shot decoding: this multiple of what the first one took,
// plus a margin.
constexpr double kDecodeReserve = 1.5;
constexpr absl::Duration kDecodeMargin = absl::Milliseconds(50);

bool Better(const PlacerResult& a, const PlacerResult& b) {
  if (a.evaluation.fits_memory != b.evaluation.fits_memory) return a.evaluation.fits_memory;
  return a.evaluation.value < b.evaluation.value;
}

// What training on the one graph did.
struct Tuning {
  std::shared_ptr<LearnedPolicy> copy;
  BestSample sample;
  int64_t iterations = 0;
  double seconds = 0;
};

class FinetunePlacer : public Placer {
 public:
  FinetunePlacer(std::shared_ptr<const LearnedPolicy> policy, LearnedPlacerOptions options)
      : policy_(std::move(policy)), options_(std::move(options)), single_(MakePolicyPlacer(policy_, options_)) {}

  const LearnedPlacerInfo& Info() const { return InfoOf(LearnedPlacerKind::kFinetune); }
  absl::string_view name() const override { return Info().name; }
  absl::string_view description() const override { return Info().description; }
  std::vector<Objective> objectives() const override { return Info().objectives; }

  absl::StatusOr<PlacerResult> Place(const PlacementProblem& problem, const Budget& budget) const override {
    if (problem.costs == nullptr) return absl::InvalidArgumentError(absl::StrCat(name(), ": the problem has no graph"));
    const absl::Time begin = absl::Now();
    absl::StatusOr<PlacerResult> single = single_->Place(problem, budget);
    if (!single.ok()) return single.status();
    PlacerResult best = *std::move(single);
    budget.Improved(best);
    const absl::Time end =
        budget.deadline != absl::InfiniteFuture() ? budget.deadline : begin + options_.finetune.budget_without_deadline;
    const absl::Time train_end = end - (absl::Now() - begin) * kDecodeReserve - kDecodeMargin;
    std::vector<std::string> notes = best.notes;
    if (absl::Now() >= train_end || budget.Expired()) {
      notes.push_back("no time left to fine-tune: the served weights' single shot");
      return Named(std::move(best), std::move(notes));
    }
    absl::StatusOr<Tuning> tuning = Tune(problem, budget, train_end);
    if (!tuning.ok()) return tuning.status();
    const double single_value = best.evaluation.value;
    std::string winner = "the served weights' single shot";
    if (absl::StatusOr<PlacerResult> tuned =
            MakePolicyPlacer(tuning->copy, options_)->Place(problem, Budget{end, budget.cancelled});
        tuned.ok() && Better(*tuned, best)) {
      best = *std::move(tuned);
      winner = "the tuned weights' single shot";
      for (const std::string& n : best.notes) notes.push_back(absl::StrCat("tuned: ", n));
    }
    if (absl::StatusOr<PlacerResult> sampled = SampleAnswer(problem, tuning->sample);
        sampled.ok() && Better(*sampled, best)) {
      best = *std::move(sampled);
      winner = absl::StrCat("a training sample (iteration ", tuning->sample.iteration, ")");
    }
    notes.push_back(absl::StrFormat("fine-tuned a copy of policy %s on this graph: %d iterations in %.1f s",
                                    policy_->version(), tuning->iterations, tuning->seconds));
    notes.push_back(absl::StrFormat("single shot %.6g, fine-tuned %.6g (%.2f%% lower): %s", single_value,
                                    best.evaluation.value, 100 * (1 - best.evaluation.value / single_value), winner));
    budget.Improved(best);
    return Named(std::move(best), std::move(notes));
  }

 private:
  // Trains a copy of the served weights on the problem until `train_end`.
  absl::StatusOr<Tuning> Tune(const PlacementProblem& problem, const Budget& budget, absl::Time train_end) const {
    absl::StatusOr<std::unique_ptr<Instance>> x =
        InstanceOfProblem("request", *problem.costs, problem.objective, problem.simulator, options_.coarsening);
    if (!x.ok()) return x.status();
    Tuning tuning;
    absl::StatusOr<std::shared_ptr<LearnedPolicy>> copy =
        policy_->CopyForTraining(absl::StrCat(policy_->version(), "/tuned"));
    if (!copy.ok()) return copy.status();
    tuning.copy = *std::move(copy);
    const FinetuneOptions& f = options_.finetune;
    TrainerOptions t;
    t.seed = problem.seed;
    t.iterations = std::numeric_limits<int32_t>::max();  // the time ends the run
    t.max_seconds = std::max(1e-3, absl::ToDoubleSeconds(train_end - absl::Now()));
    t.schedule_by_time = true;
    t.graphs_per_batch = f.graphs_per_batch;
    t.samples_per_graph = f.samples_per_graph;
    t.learning_rate = f.learning_rate;
    t.entropy_bonus = f.entropy_bonus;
    t.scheduled_share = 1;
    t.schedule_weight = f.schedule_weight;
    t.eval_every = std::numeric_limits<int64_t>::max();  // no validation set: nothing to checkpoint
    t.stop = budget.cancelled;
    t.best_sample = &tuning.sample;
    t.on_iteration = [&tuning](const TrainerProgress& p) {
      tuning.iterations = p.iteration;
      tuning.seconds = p.seconds;
    };
    const std::vector<const Instance*> train = {x->get()};
    absl::StatusOr<std::vector<CurvePoint>> curve = Train(*tuning.copy, train, {}, t);
    if (!curve.ok()) return curve.status();
    return tuning;
  }

  // The best training sample scored as an answer; an error when there is none or it overflows memory.
  absl::StatusOr<PlacerResult> SampleAnswer(const PlacementProblem& problem, const BestSample& sample) const {
    if (sample.placement.device.empty()) return absl::NotFoundError("no sample");
    absl::StatusOr<PlacerResult> r = ScorePlacement(problem, sample.placement, std::string(name()));
    if (r.ok() && !r->evaluation.fits_memory) return absl::FailedPreconditionError("the sample overflows memory");
    return r;
  }

  PlacerResult Named(PlacerResult r, std::vector<std::string> notes) const {
    r.algorithm = std::string(name());
    r.notes = std::move(notes);
    return r;
  }

  std::shared_ptr<const LearnedPolicy> policy_;
  LearnedPlacerOptions options_;
  std::unique_ptr<Placer> single_;
};

}  // namespace

std::unique_ptr<Placer> MakeFinetunePlacer(std::shared_ptr<const LearnedPolicy> policy,
                                           const LearnedPlacerOptions& options) {
  return std::make_unique<FinetunePlacer>(std::move(policy), options);
}

}  // namespace placement::learned
