#include "policy/learned/trainer.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <random>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "policy/heuristics/heft.h"
#include "policy/learned/curve_recorder.h"
#include "policy/learned/decode.h"
#include "policy/learned/network.h"
#include "policy/learned/scheduled.h"
#include "policy/placer.h"
#include "simulator/objectives.h"

namespace placement::learned {
namespace {

std::vector<float> ToVector(const torch::Tensor& t) {
  torch::Tensor c = t.detach().to(torch::kCPU).contiguous();
  return std::vector<float>(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
}

PolicyScores ScoresOf(const torch::Tensor& logits, int32_t groups, int32_t devices) {
  PolicyScores scores;
  scores.groups = groups;
  scores.devices = devices;
  scores.logits = ToVector(logits);
  return scores;
}

// Step time / lower bound of an evaluated placement of `x`, plus oom_penalty when it overflows memory.
double RatioCost(const Instance& x, const Evaluation& e, double oom_penalty) {
  const double ratio = x.bound > 0 ? e.value / x.bound : 1;
  return ratio + (e.fits_memory ? 0 : oom_penalty);
}

// HEFT-based decodings of one instance (STEP_TIME: guided among candidate devices, or scheduled), its units and
// ranks prepared at the first call. Holds the problem HEFT points to, so it does not move.
class HeftScorer {
 public:
  explicit HeftScorer(const Instance& x)
      : x_(x), time_scale_(ScheduleTimeScale(x.groups, x.input.num_devices)) {
    problem_.costs = x.costs.get();
  }
  HeftScorer(const HeftScorer&) = delete;
  HeftScorer& operator=(const HeftScorer&) = delete;

  // Step time / lower bound of HEFT's schedule among `group_rows` (groups x devices), as PlacementCost counts.
  double Cost(const std::vector<uint8_t>& group_rows, double oom_penalty) {
    const heuristics::HeftWithCandidates* heft = Heft();
    if (heft == nullptr) return 10 + oom_penalty;
    return CostOf(heft->Place(OperatorCandidates(group_rows, x_.groups, x_.input.num_devices), "guided", Budget{}),
                  oom_penalty);
  }

  // The same for the scheduled decoding of `scores` at `weight` (rng null: greedy), its choices in *trace.
  double ScheduledCost(const PolicyScores& scores, double weight, std::mt19937_64* rng, ScheduledTrace* trace,
                       double oom_penalty) {
    const heuristics::HeftWithCandidates* heft = Heft();
    if (heft == nullptr) return 10 + oom_penalty;
    return CostOf(heft->PlaceChosen(ScheduledChooser(scores, x_.groups, weight, time_scale_, rng, trace), "scheduled",
                                    Budget{}),
                  oom_penalty);
  }

 private:
  // Null when HEFT cannot be prepared for the instance.
  const heuristics::HeftWithCandidates* Heft() {
    if (!heft_.has_value()) heft_.emplace(heuristics::HeftWithCandidates::Prepare(problem_, Budget{}));
    return heft_->ok() ? &**heft_ : nullptr;
  }

  double CostOf(const absl::StatusOr<PlacerResult>& r, double oom_penalty) const {
    if (!r.ok()) return 3 + oom_penalty;  // no schedule among the devices allowed fits in memory
    return RatioCost(x_, r->evaluation, oom_penalty);
  }

  const Instance& x_;
  const double time_scale_;
  PlacementProblem problem_;
  std::optional<absl::StatusOr<heuristics::HeftWithCandidates>> heft_;
};

}  // namespace

double PlacementCost(const Instance& x, const std::vector<int32_t>& group_device, double oom_penalty) {
  absl::StatusOr<Evaluation> e = Evaluate(*x.costs, x.groups.Expand(group_device), Objective::kStepTime);
  if (!e.ok()) return 10 + oom_penalty;  // cannot happen for placements the mask allows; keep training alive
  return RatioCost(x, *e, oom_penalty);
}

double GreedyRatio(const LearnedPolicy& policy, const std::vector<const Instance*>& instances, double oom_penalty,
                   double guide_threshold, double schedule_weight) {
  double sum = 0;
  for (const Instance* x : instances) {
    absl::StatusOr<PolicyScores> s = policy.Score(x->input);
    if (!s.ok()) {
      sum += 10 + oom_penalty;
      continue;
    }
    double cost = PlacementCost(*x, DecodeSingleShot(*s, nullptr), oom_penalty);
    if (guide_threshold > 0 || schedule_weight > 0) {
      HeftScorer heft(*x);
      if (guide_threshold > 0) cost = std::min(cost, heft.Cost(GroupCandidates(*s, guide_threshold), oom_penalty));
      if (schedule_weight > 0) cost = std::min(cost, heft.ScheduledCost(*s, schedule_weight, nullptr, nullptr, oom_penalty));
    }
    sum += cost;
  }
  return instances.empty() ? 0 : sum / instances.size();
}

absl::StatusOr<std::vector<CurvePoint>> Train(LearnedPolicy& policy, const std::vector<const Instance*>& train,
                                              const std::vector<const Instance*>& validation,
                                              const TrainerOptions& options, std::ostream* log) {
  if (train.empty()) return absl::InvalidArgumentError("no training instances");
  if (options.samples_per_graph < 2) return absl::InvalidArgumentError("samples_per_graph must be at least 2 (the baseline)");
  try {
    torch::manual_seed(options.seed);
    std::mt19937_64 rng(options.seed);
    LearnedPolicy::Impl& impl = policy.impl();
    impl.net->train();
    torch::optim::Adam optimizer(impl.net->parameters(), torch::optim::AdamOptions(options.learning_rate));
    std::vector<InputTensors> tensors;
    tensors.reserve(train.size());
    for (const Instance* x : train) tensors.push_back(ToTensors(x->input, impl.device, impl.net->options()));

    CurveOptions curve_options;
    curve_options.oom_penalty = options.oom_penalty;
    curve_options.checkpoint = options.checkpoint;
    curve_options.version = options.version;
    curve_options.to_beat = options.checkpoint_to_beat;
    curve_options.label = "iter";
    curve_options.loss_name = "loss";
    curve_options.eval_every = options.eval_every;
    if (options.guide_share > 0) curve_options.guide_threshold = options.guide_threshold;
    if (options.scheduled_share > 0) curve_options.schedule_weight = options.schedule_weight;
    std::vector<std::unique_ptr<HeftScorer>> scorers(train.size());
    const float log_threshold = static_cast<float>(LogThreshold(options.guide_threshold));
    CurveRecorder recorder(policy, validation, curve_options, log);
    std::uniform_real_distribution<double> unit(0, 1);
    const int32_t K = options.samples_per_graph;

    const absl::Time start = absl::Now();
    absl::Status st = recorder.Point(0);
    if (!st.ok()) return st;
    int64_t it = 0;
    for (; it < options.iterations; ++it) {
      if (options.max_seconds > 0 && absl::ToDoubleSeconds(absl::Now() - start) > options.max_seconds) break;
      if (options.stop_after > 0 && it >= options.stop_after) break;
      const double progress = options.iterations > 0 ? static_cast<double>(it) / options.iterations : 0;
      const double beta = options.entropy_bonus * (1 - 0.9 * progress);
      optimizer.zero_grad();
      double batch_loss = 0, batch_entropy = 0, ratio_sum = 0;
      int64_t ratio_count = 0;
      for (int32_t b = 0; b < options.graphs_per_batch; ++b) {
        const size_t index = rng() % train.size();
        const Instance& x = *train[index];
        const int32_t G = x.input.num_groups, D = x.input.num_devices;
        torch::Tensor logits = impl.net->forward(tensors[index]);
        std::vector<double> costs(K);
        torch::Tensor chosen;  // [K]: per-group mean log-probability of each sample
        // (The draw is skipped without guide training, which keeps the random sequence of runs without it.)
        // (As is the scheduled draw without scheduled training.)
        const bool scheduled = options.scheduled_share > 0 && unit(rng) < options.scheduled_share;
        const bool guide = !scheduled && options.guide_share > 0 && unit(rng) < options.guide_share;
        if (!guide && !scheduled && unit(rng) < options.iterative_share) {
          // The current placement is a single-shot sample; its context adjusts the logits.
          const std::vector<int32_t> current = DecodeSingleShot(ScoresOf(logits, G, D), &rng);
          std::vector<float> context = ContextFeatures(x.input, current);
          torch::Tensor c = torch::from_blob(context.data(), {G, D, kContextFeatures}).clone().to(impl.device);
          logits = logits + (c * impl.net->context_weights()).sum(2);
        }
        torch::Tensor logp = torch::log_softmax(logits, 1);
        const PolicyScores sampled = ScoresOf(logits, G, D);
        if (scheduled) {
          if (scorers[index] == nullptr) scorers[index] = std::make_unique<HeftScorer>(x);
          // Every choice among two or more devices, all samples together: its group's logits less the delay
          // penalties, the log-probability of the device taken, averaged per sample.
          ScheduledTrace trace;
          std::vector<int64_t> sample_of;
          std::vector<float> per_choice;  // 1 / (choices of the sample)
          for (int32_t k = 0; k < K; ++k) {
            const size_t before = trace.group.size();
            costs[k] = scorers[index]->ScheduledCost(sampled, options.schedule_weight, &rng, &trace, options.oom_penalty);
            const size_t m = trace.group.size() - before;
            sample_of.insert(sample_of.end(), m, k);
            per_choice.insert(per_choice.end(), m, 1.0f / static_cast<float>(std::max<size_t>(m, 1)));
          }
          const int64_t M = static_cast<int64_t>(trace.group.size());
          chosen = torch::zeros({K}, logits.options());
          if (M > 0) {
            auto tensor = [&](auto& v, auto dtype, std::vector<int64_t> shape) {
              return torch::from_blob(v.data(), shape, dtype).clone().to(impl.device);
            };
            torch::Tensor rows = logits.index_select(0, tensor(trace.group, torch::kInt64, {M})) -
                                 tensor(trace.penalty, torch::kFloat32, {M, D});
            torch::Tensor lp = torch::log_softmax(rows, 1).gather(1, tensor(trace.choice, torch::kInt64, {M, 1})).squeeze(1);
            chosen = chosen.index_add(0, tensor(sample_of, torch::kInt64, {M}), lp * tensor(per_choice, torch::kFloat32, {M}));
          }
        } else if (guide) {
          if (scorers[index] == nullptr) scorers[index] = std::make_unique<HeftScorer>(x);
          // z >= 0 exactly where GroupCandidates keeps the device; the best device's z is constant, so its
          // Bernoulli term has no gradient and it is always kept, as in the guided decoding.
          torch::Tensor z = logits - std::get<0>(logits.max(1, true)) - log_threshold;
          std::vector<float> masks;
          masks.reserve(static_cast<size_t>(K) * G * D);
          for (int32_t k = 0; k < K; ++k) {
            const std::vector<uint8_t> rows = SampleGroupCandidates(sampled, options.guide_threshold, rng);
            masks.insert(masks.end(), rows.begin(), rows.end());
            costs[k] = scorers[index]->Cost(rows, options.oom_penalty);
          }
          torch::Tensor m = torch::from_blob(masks.data(), {K, G, D}).clone().to(impl.device);
          chosen = (m * torch::log_sigmoid(z) + (1 - m) * torch::log_sigmoid(-z)).sum({1, 2}) / G;
        } else {
          std::vector<int64_t> actions(static_cast<size_t>(K) * G);
          for (int32_t k = 0; k < K; ++k) {
            std::vector<int32_t> choice = DecodeSingleShot(sampled, &rng);
            std::copy(choice.begin(), choice.end(), actions.begin() + static_cast<size_t>(k) * G);
            costs[k] = PlacementCost(x, choice, options.oom_penalty);
          }
          torch::Tensor a = torch::from_blob(actions.data(), {K, G}, torch::kInt64).clone().to(impl.device);
          chosen = logp.gather(1, a.t()).sum(0) / G;
        }
        double mean = 0;
        for (double c : costs) {
          mean += c / K;
          ratio_sum += c;
          ++ratio_count;
        }
        double var = 0;
        for (double c : costs) var += (c - mean) * (c - mean) / K;
        // Advantage: lower cost than the other samples of this graph is good; scaled per graph, so that graphs
        // whose placements differ by 1% and by 50% teach alike.
        std::vector<float> advantage(K);
        for (int32_t k = 0; k < K; ++k) advantage[k] = static_cast<float>((mean - costs[k]) / (std::sqrt(var) + 0.02));
        torch::Tensor adv = torch::from_blob(advantage.data(), {K}).clone().to(impl.device);
        torch::Tensor entropy = MeanEntropy(logits, logp);
        torch::Tensor loss = -(adv * chosen).mean() - beta * entropy;
        (loss / options.graphs_per_batch).backward();
        batch_loss += loss.item<double>();
        batch_entropy += entropy.item<double>();
      }
      torch::nn::utils::clip_grad_norm_(impl.net->parameters(), options.max_grad_norm);
      optimizer.step();
      st = recorder.EndIteration(it + 1, batch_loss / options.graphs_per_batch, batch_entropy / options.graphs_per_batch,
                                 ratio_sum, ratio_count);
      if (!st.ok()) return st;
    }
    if (recorder.HasPending()) {
      st = recorder.Point(it);
      if (!st.ok()) return st;
    }
    impl.net->eval();
    return std::move(recorder.curve());
  } catch (const c10::Error& e) {
    return absl::InternalError(absl::StrCat("training failed: ", e.what_without_backtrace()));
  }
}

}  // namespace placement::learned
