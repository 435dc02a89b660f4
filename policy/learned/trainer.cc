#include "policy/learned/trainer.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "policy/learned/curve_recorder.h"
#include "policy/learned/decode.h"
#include "policy/learned/network.h"
#include "simulator/objectives.h"

namespace placement::learned {
namespace {

std::vector<float> ToVector(const torch::Tensor& t) {
  torch::Tensor c = t.detach().to(torch::kCPU).contiguous();
  return std::vector<float>(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
}

}  // namespace

double PlacementCost(const Instance& x, const std::vector<int32_t>& group_device, double oom_penalty) {
  absl::StatusOr<Evaluation> e = Evaluate(*x.costs, x.groups.Expand(group_device), Objective::kStepTime);
  if (!e.ok()) return 10 + oom_penalty;  // cannot happen for placements the mask allows; keep training alive
  const double ratio = x.bound > 0 ? e->value / x.bound : 1;
  return ratio + (e->fits_memory ? 0 : oom_penalty);
}

double GreedyRatio(const LearnedPolicy& policy, const std::vector<const Instance*>& instances, double oom_penalty) {
  double sum = 0;
  for (const Instance* x : instances) {
    absl::StatusOr<PolicyScores> s = policy.Score(x->input);
    sum += s.ok() ? PlacementCost(*x, DecodeSingleShot(*s, nullptr), oom_penalty) : 10 + oom_penalty;
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
        torch::Tensor logits = impl.net->forward(tensors[index]);
        if (unit(rng) < options.iterative_share) {
          // The current placement is a single-shot sample; its context adjusts the logits.
          PolicyScores scores;
          scores.groups = x.input.num_groups;
          scores.devices = x.input.num_devices;
          scores.logits = ToVector(logits);
          const std::vector<int32_t> current = DecodeSingleShot(scores, &rng);
          std::vector<float> context = ContextFeatures(x.input, current);
          torch::Tensor c = torch::from_blob(context.data(), {scores.groups, scores.devices, kContextFeatures}).clone().to(impl.device);
          logits = logits + (c * impl.net->context_weights()).sum(2);
        }
        torch::Tensor logp = torch::log_softmax(logits, 1);
        PolicyScores sampled;
        sampled.groups = x.input.num_groups;
        sampled.devices = x.input.num_devices;
        sampled.logits = ToVector(logits);
        std::vector<int64_t> actions(static_cast<size_t>(K) * sampled.groups);
        std::vector<double> costs(K);
        double mean = 0;
        for (int32_t k = 0; k < K; ++k) {
          std::vector<int32_t> choice = DecodeSingleShot(sampled, &rng);
          std::copy(choice.begin(), choice.end(), actions.begin() + static_cast<size_t>(k) * sampled.groups);
          costs[k] = PlacementCost(x, choice, options.oom_penalty);
          mean += costs[k] / K;
          ratio_sum += costs[k];
          ++ratio_count;
        }
        double var = 0;
        for (double c : costs) var += (c - mean) * (c - mean) / K;
        // Advantage: lower cost than the other samples of this graph is good; scaled per graph, so that graphs
        // whose placements differ by 1% and by 50% teach alike.
        std::vector<float> advantage(K);
        for (int32_t k = 0; k < K; ++k) advantage[k] = static_cast<float>((mean - costs[k]) / (std::sqrt(var) + 0.02));
        torch::Tensor a = torch::from_blob(actions.data(), {K, sampled.groups}, torch::kInt64).clone().to(impl.device);
        torch::Tensor adv = torch::from_blob(advantage.data(), {K}).clone().to(impl.device);
        torch::Tensor chosen = logp.gather(1, a.t()).sum(0) / sampled.groups;  // [K], per-group mean log-prob
        torch::Tensor entropy = -(torch::softmax(logits, 1) * logp).sum(1).mean();
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
