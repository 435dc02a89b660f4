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

// Keeps `placement` in *best when its cost is the lowest yet (best may be null).
void Offer(BestSample* best, double cost, const Placement& placement, int64_t iteration) {
  if (best == nullptr || !(cost < best->cost)) return;
  best->cost = cost;
  best->placement = placement;
  best->iteration = iteration;
}

// HEFT-based decodings of one instance (guided among candidate devices, or scheduled), its units and ranks
// prepared at the first call. Holds the problem HEFT points to, so it does not move.
class HeftScorer {
 public:
  explicit HeftScorer(const Instance& x) : x_(x), time_scale_(ScheduleTimeScale(x.groups, x.input.num_devices)) {
    problem_.costs = x.costs.get();
    problem_.objective = x.objective;
    problem_.simulator = x.simulator;
  }
  HeftScorer(const HeftScorer&) = delete;
  HeftScorer& operator=(const HeftScorer&) = delete;

  // Step time / lower bound of HEFT's schedule among `group_rows` (groups x devices), as PlacementCost counts;
  // the placement is offered to `best`.
  double Cost(const std::vector<uint8_t>& group_rows, double oom_penalty, BestSample* best = nullptr,
              int64_t iteration = 0) {
    const heuristics::HeftWithCandidates* heft = Heft();
    if (heft == nullptr) return 10 + oom_penalty;
    return CostOf(heft->Place(OperatorCandidates(group_rows, x_.groups, x_.input.num_devices), "guided", Budget{}),
                  oom_penalty, best, iteration);
  }

  // The same for the scheduled decoding of `scores` at `weight` (rng null: greedy), its choices in *trace.
  double ScheduledCost(const PolicyScores& scores, double weight, std::mt19937_64* rng, ScheduledTrace* trace,
                       double oom_penalty, BestSample* best = nullptr, int64_t iteration = 0) {
    const heuristics::HeftWithCandidates* heft = Heft();
    if (heft == nullptr) return 10 + oom_penalty;
    return CostOf(
        heft->PlaceChosen(ScheduledChooser(scores, x_.groups, weight, time_scale_, rng, trace), "scheduled", Budget{}),
        oom_penalty, best, iteration);
  }

 private:
  // Null when HEFT cannot be prepared for the instance.
  const heuristics::HeftWithCandidates* Heft() {
    if (!heft_.has_value()) heft_.emplace(heuristics::HeftWithCandidates::Prepare(problem_, Budget{}));
    return heft_->ok() ? &**heft_ : nullptr;
  }

  double CostOf(const absl::StatusOr<PlacerResult>& r, double oom_penalty, BestSample* best, int64_t iteration) const {
    if (!r.ok()) return 3 + oom_penalty;  // no schedule among the devices allowed fits in memory
    const double cost = RatioCost(x_, r->evaluation, oom_penalty);
    Offer(best, cost, r->placement, iteration);
    return cost;
  }

  const Instance& x_;
  const double time_scale_;
  PlacementProblem problem_;
  std::optional<absl::StatusOr<heuristics::HeftWithCandidates>> heft_;
};

// What the samples of one graph need besides the logits: the training state shared by the run.
struct SampleContext {
  const TrainerOptions& options;
  const torch::Device& device;
  std::mt19937_64& rng;
  int64_t iteration;
};

template <typename T>
torch::Tensor ToDevice(std::vector<T>& v, torch::ScalarType dtype, std::vector<int64_t> shape,
                       const torch::Device& device) {
  return torch::from_blob(v.data(), shape, dtype).clone().to(device);
}

// Scheduled samples: every choice among two or more devices, all samples together: its group's logits less the
// delay penalties, the log-probability of the device taken, averaged per sample. Returns [K].
torch::Tensor ScheduledChosen(HeftScorer& scorer, const torch::Tensor& logits, const PolicyScores& sampled,
                              SampleContext& c, std::vector<double>& costs) {
  const int32_t K = c.options.samples_per_graph, D = sampled.devices;
  ScheduledTrace trace;
  std::vector<int64_t> sample_of;
  std::vector<float> per_choice;  // 1 / (choices of the sample)
  for (int32_t k = 0; k < K; ++k) {
    const size_t before = trace.group.size();
    costs[k] = scorer.ScheduledCost(sampled, c.options.schedule_weight, &c.rng, &trace, c.options.oom_penalty,
                                    c.options.best_sample, c.iteration);
    const size_t m = trace.group.size() - before;
    sample_of.insert(sample_of.end(), m, k);
    per_choice.insert(per_choice.end(), m, 1.0f / static_cast<float>(std::max<size_t>(m, 1)));
  }
  const int64_t M = static_cast<int64_t>(trace.group.size());
  torch::Tensor chosen = torch::zeros({K}, logits.options());
  if (M == 0) return chosen;
  torch::Tensor rows = logits.index_select(0, ToDevice(trace.group, torch::kInt64, {M}, c.device)) -
                       ToDevice(trace.penalty, torch::kFloat32, {M, D}, c.device);
  torch::Tensor lp =
      torch::log_softmax(rows, 1).gather(1, ToDevice(trace.choice, torch::kInt64, {M, 1}, c.device)).squeeze(1);
  return chosen.index_add(0, ToDevice(sample_of, torch::kInt64, {M}, c.device),
                          lp * ToDevice(per_choice, torch::kFloat32, {M}, c.device));
}

// Guided samples: z >= 0 exactly where GroupCandidates keeps the device; the best device's z is constant, so its
// Bernoulli term has no gradient and it is always kept, as in the guided decoding. Returns [K].
torch::Tensor GuideChosen(HeftScorer& scorer, const torch::Tensor& logits, const PolicyScores& sampled,
                          SampleContext& c, std::vector<double>& costs) {
  const int32_t K = c.options.samples_per_graph, G = sampled.groups, D = sampled.devices;
  const float log_threshold = static_cast<float>(LogThreshold(c.options.guide_threshold));
  torch::Tensor z = logits - std::get<0>(logits.max(1, true)) - log_threshold;
  std::vector<float> masks;
  masks.reserve(static_cast<size_t>(K) * G * D);
  for (int32_t k = 0; k < K; ++k) {
    const std::vector<uint8_t> rows = SampleGroupCandidates(sampled, c.options.guide_threshold, c.rng);
    masks.insert(masks.end(), rows.begin(), rows.end());
    costs[k] = scorer.Cost(rows, c.options.oom_penalty, c.options.best_sample, c.iteration);
  }
  torch::Tensor m = ToDevice(masks, torch::kFloat32, {K, G, D}, c.device);
  return (m * torch::log_sigmoid(z) + (1 - m) * torch::log_sigmoid(-z)).sum({1, 2}) / G;
}

// Single-shot samples: the per-group mean log-probability of each. Returns [K].
torch::Tensor SingleShotChosen(const Instance& x, const torch::Tensor& logp, const PolicyScores& sampled,
                               SampleContext& c, std::vector<double>& costs) {
  const int32_t K = c.options.samples_per_graph, G = sampled.groups;
  std::vector<int64_t> actions(static_cast<size_t>(K) * G);
  for (int32_t k = 0; k < K; ++k) {
    std::vector<int32_t> choice = DecodeSingleShot(sampled, &c.rng);
    std::copy(choice.begin(), choice.end(), actions.begin() + static_cast<size_t>(k) * G);
    costs[k] = PlacementCost(x, choice, c.options.oom_penalty);
    if (c.options.best_sample != nullptr) Offer(c.options.best_sample, costs[k], x.groups.Expand(choice), c.iteration);
  }
  torch::Tensor a = ToDevice(actions, torch::kInt64, {K, G}, c.device);
  return logp.gather(1, a.t()).sum(0) / G;
}

// Advantage: lower cost than the other samples of this graph is good; scaled per graph, so that graphs whose
// placements differ by 1% and by 50% teach alike.
torch::Tensor Advantages(const std::vector<double>& costs, const torch::Device& device) {
  const size_t K = costs.size();
  double mean = 0;
  for (double c : costs) mean += c / K;
  double var = 0;
  for (double c : costs) var += (c - mean) * (c - mean) / K;
  std::vector<float> advantage(K);
  for (size_t k = 0; k < K; ++k) advantage[k] = static_cast<float>((mean - costs[k]) / (std::sqrt(var) + 0.02));
  return ToDevice(advantage, torch::kFloat32, {static_cast<int64_t>(K)}, device);
}

// The share of the run done, which the entropy bonus decays over.
double Progress(const TrainerOptions& options, int64_t it, double seconds) {
  double progress = options.iterations > 0 ? static_cast<double>(it) / options.iterations : 0;
  if (options.schedule_by_time && options.max_seconds > 0) progress = std::max(progress, seconds / options.max_seconds);
  return std::min(progress, 1.0);
}

bool StopRequested(const TrainerOptions& options) {
  return options.stop != nullptr && options.stop->load(std::memory_order_relaxed);
}

}  // namespace

double PlacementCost(const Instance& x, const std::vector<int32_t>& group_device, double oom_penalty) {
  absl::StatusOr<Evaluation> e = Evaluate(*x.costs, x.groups.Expand(group_device), x.objective, x.simulator);
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
      if (schedule_weight > 0)
        cost = std::min(cost, heft.ScheduledCost(*s, schedule_weight, nullptr, nullptr, oom_penalty));
    }
    sum += cost;
  }
  return instances.empty() ? 0 : sum / instances.size();
}

namespace {

// One reinforcement run: the network, its optimizer and the per-instance HEFT scorers.
class Reinforce {
 public:
  Reinforce(LearnedPolicy& policy, const std::vector<const Instance*>& train, const TrainerOptions& options)
      : impl_(policy.impl()),
        train_(train),
        options_(options),
        rng_(options.seed),
        optimizer_(impl_.net->parameters(), torch::optim::AdamOptions(options.learning_rate)),
        scorers_(train.size()) {
    tensors_.reserve(train.size());
    for (const Instance* x : train) tensors_.push_back(ToTensors(x->input, impl_.device, impl_.net->options()));
  }

  // One iteration of graphs_per_batch graphs; its mean loss and entropy and the samples' ratio sum and count.
  struct Step {
    double loss = 0, entropy = 0, ratio_sum = 0;
    int64_t ratio_count = 0;
  };
  Step Iterate(int64_t it, double beta) {
    optimizer_.zero_grad();
    Step step;
    for (int32_t b = 0; b < options_.graphs_per_batch; ++b) Graph(it, beta, step);
    torch::nn::utils::clip_grad_norm_(impl_.net->parameters(), options_.max_grad_norm);
    optimizer_.step();
    step.loss /= options_.graphs_per_batch;
    step.entropy /= options_.graphs_per_batch;
    return step;
  }

 private:
  // Samples one graph of the batch and adds its gradient. The draws happen in a fixed order (the graph, then
  // the decoding it trains; the guided and scheduled draws only when their share is set), which keeps the
  // random sequence of runs made before those options existed.
  void Graph(int64_t it, double beta, Step& step) {
    const size_t index = rng_() % train_.size();
    const Instance& x = *train_[index];
    const int32_t G = x.input.num_groups, D = x.input.num_devices, K = options_.samples_per_graph;
    torch::Tensor logits = impl_.net->forward(tensors_[index]);
    const bool scheduled = options_.scheduled_share > 0 && unit_(rng_) < options_.scheduled_share;
    const bool guide = !scheduled && options_.guide_share > 0 && unit_(rng_) < options_.guide_share;
    if (!guide && !scheduled && unit_(rng_) < options_.iterative_share) {
      // The current placement is a single-shot sample; its context adjusts the logits.
      const std::vector<int32_t> current = DecodeSingleShot(ScoresOf(logits, G, D), &rng_);
      std::vector<float> context = ContextFeatures(x.input, current);
      torch::Tensor c = ToDevice(context, torch::kFloat32, {G, D, kContextFeatures}, impl_.device);
      logits = logits + (c * impl_.net->context_weights()).sum(2);
    }
    torch::Tensor logp = torch::log_softmax(logits, 1);
    const PolicyScores sampled = ScoresOf(logits, G, D);
    SampleContext context{options_, impl_.device, rng_, it};
    std::vector<double> costs(K);
    torch::Tensor chosen;  // [K]: per-group mean log-probability of each sample
    if (scheduled || guide) {
      if (scorers_[index] == nullptr) scorers_[index] = std::make_unique<HeftScorer>(x);
      chosen = scheduled ? ScheduledChosen(*scorers_[index], logits, sampled, context, costs)
                         : GuideChosen(*scorers_[index], logits, sampled, context, costs);
    } else {
      chosen = SingleShotChosen(x, logp, sampled, context, costs);
    }
    for (double c : costs) step.ratio_sum += c;
    step.ratio_count += K;
    torch::Tensor entropy = MeanEntropy(logits, logp);
    torch::Tensor loss = -(Advantages(costs, impl_.device) * chosen).mean() - beta * entropy;
    (loss / options_.graphs_per_batch).backward();
    step.loss += loss.item<double>();
    step.entropy += entropy.item<double>();
  }

  LearnedPolicy::Impl& impl_;
  const std::vector<const Instance*>& train_;
  const TrainerOptions& options_;
  std::mt19937_64 rng_;
  std::uniform_real_distribution<double> unit_{0, 1};
  torch::optim::Adam optimizer_;
  std::vector<InputTensors> tensors_;
  std::vector<std::unique_ptr<HeftScorer>> scorers_;
};

CurveOptions CurveOptionsOf(const TrainerOptions& options) {
  CurveOptions c;
  c.oom_penalty = options.oom_penalty;
  c.checkpoint = options.checkpoint;
  c.version = options.version;
  c.to_beat = options.checkpoint_to_beat;
  c.label = "iter";
  c.loss_name = "loss";
  c.eval_every = options.eval_every;
  if (options.guide_share > 0) c.guide_threshold = options.guide_threshold;
  if (options.scheduled_share > 0) c.schedule_weight = options.schedule_weight;
  return c;
}

void Report(const TrainerOptions& options, CurveRecorder& recorder, int64_t done, double seconds) {
  if (!options.on_iteration) return;
  TrainerProgress p;
  p.iteration = done;
  p.seconds = seconds;
  p.fraction = Progress(options, done, seconds);
  if (options.max_seconds > 0) p.fraction = std::max(p.fraction, std::min(1.0, seconds / options.max_seconds));
  if (options.stop_after > 0 && options.iterations > 0) {
    p.fraction = std::max(p.fraction, static_cast<double>(done) / std::min(options.stop_after, options.iterations));
  }
  const std::vector<CurvePoint>& curve = recorder.curve();
  p.start_validation = curve.empty() ? 0 : curve.front().greedy_ratio;
  p.last_validation = curve.empty() ? 0 : curve.back().greedy_ratio;
  p.best_validation = recorder.best();
  options.on_iteration(p);
}

}  // namespace

absl::StatusOr<std::vector<CurvePoint>> Train(LearnedPolicy& policy, const std::vector<const Instance*>& train,
                                              const std::vector<const Instance*>& validation,
                                              const TrainerOptions& options, std::ostream* log) {
  if (train.empty()) return absl::InvalidArgumentError("no training instances");
  if (options.samples_per_graph < 2)
    return absl::InvalidArgumentError("samples_per_graph must be at least 2 (the baseline)");
  try {
    torch::manual_seed(options.seed);
    policy.impl().net->train();
    Reinforce run(policy, train, options);
    CurveRecorder recorder(policy, validation, CurveOptionsOf(options), log);
    const absl::Time start = absl::Now();
    absl::Status st = recorder.Point(0);
    if (!st.ok()) return st;
    int64_t it = 0;
    for (; it < options.iterations; ++it) {
      const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
      if (options.max_seconds > 0 && seconds > options.max_seconds) break;
      if ((options.stop_after > 0 && it >= options.stop_after) || StopRequested(options)) break;
      const double beta = options.entropy_bonus * (1 - 0.9 * Progress(options, it, seconds));
      const Reinforce::Step step = run.Iterate(it, beta);
      st = recorder.EndIteration(it + 1, step.loss, step.entropy, step.ratio_sum, step.ratio_count);
      if (!st.ok()) return st;
      Report(options, recorder, it + 1, absl::ToDoubleSeconds(absl::Now() - start));
    }
    if (recorder.HasPending()) {
      st = recorder.Point(it);
      if (!st.ok()) return st;
    }
    policy.impl().net->eval();
    return std::move(recorder.curve());
  } catch (const c10::Error& e) {
    return absl::InternalError(absl::StrCat("training failed: ", e.what_without_backtrace()));
  }
}

}  // namespace placement::learned
