#include "policy/learned/imitation.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "policy/learned/curve_recorder.h"
#include "policy/learned/decode.h"
#include "policy/learned/network.h"
#include "policy/placer_families.h"
#include "policy/search/local_search.h"
#include "simulator/objectives.h"

namespace placement::learned {
namespace {

// The device holding most of each group's work (by fastest-device time; operators count at least a little so
// that zero-cost groups still follow their operators).
std::vector<int32_t> GroupDevices(const Instance& x, const Placement& placement) {
  const Coarsening& c = x.groups;
  const int32_t D = static_cast<int32_t>(x.topology.num_devices());
  std::vector<int32_t> out(c.num_groups, 0);
  std::vector<double> weight(D);
  for (int32_t g = 0; g < c.num_groups; ++g) {
    std::fill(weight.begin(), weight.end(), 0.0);
    for (int32_t i = c.group_begin[g]; i < c.group_begin[g + 1]; ++i) {
      const OpId op = c.ops[i];
      weight[placement.device[op]] += x.costs->fastest_time(op) + 1e-12;
    }
    out[g] = static_cast<int32_t>(std::max_element(weight.begin(), weight.end()) - weight.begin());
  }
  return out;
}

double StepTime(const Instance& x, const std::vector<int32_t>& group_device) {
  absl::StatusOr<Evaluation> e = Evaluate(*x.costs, x.groups.Expand(group_device), x.objective, x.simulator);
  return e.ok() ? e->value : std::numeric_limits<double>::infinity();
}

// Renames devices within each class (devices with the same class key) in order of first use.
std::vector<int32_t> Rename(const Instance& x, const std::vector<int32_t>& group_device,
                            const std::vector<int64_t>& key) {
  const int32_t D = static_cast<int32_t>(key.size());
  std::vector<int32_t> rename(D, -1);
  std::vector<uint8_t> taken(D, 0);
  auto take = [&](int32_t from) {  // the lowest free device of from's class
    for (int32_t d = 0; d < D; ++d) {
      if (!taken[d] && key[d] == key[from]) {
        taken[d] = 1;
        rename[from] = d;
        return;
      }
    }
  };
  for (int32_t g : x.groups.order) {
    if (rename[group_device[g]] < 0) take(group_device[g]);
  }
  for (int32_t d = 0; d < D; ++d) {  // unused devices take what is left of their class
    if (rename[d] < 0) take(d);
  }
  std::vector<int32_t> out(group_device.size());
  for (size_t g = 0; g < out.size(); ++g) out[g] = rename[group_device[g]];
  return out;
}

}  // namespace

std::vector<int32_t> CanonicalDeviceNames(const Instance& x, const std::vector<int32_t>& group_device) {
  const Topology& t = x.topology;
  const int32_t D = static_cast<int32_t>(t.num_devices());
  std::vector<int64_t> by_kind(D), by_host(D);
  for (int32_t d = 0; d < D; ++d) {
    by_kind[d] = t.kind_index(d);
    by_host[d] = static_cast<int64_t>(t.kind_index(d)) * 1000003 + t.device(d).host;
  }
  const double before = StepTime(x, group_device);
  for (const std::vector<int64_t>* key : {&by_kind, &by_host}) {
    std::vector<int32_t> renamed = Rename(x, group_device, *key);
    // Pins and device kinds: a renamed group must still be allowed where it lands.
    bool allowed = true;
    for (size_t g = 0; g < renamed.size() && allowed; ++g) allowed = x.input.allowed[g * D + renamed[g]] != 0;
    if (allowed && std::abs(StepTime(x, renamed) - before) <= 1e-9 * std::max(1.0, before)) return renamed;
  }
  return group_device;
}

absl::StatusOr<std::vector<Demonstration>> MakeDemonstrations(const std::vector<const Instance*>& instances,
                                                              const TeacherOptions& options, std::ostream* log) {
  std::vector<Demonstration> out;
  out.reserve(instances.size());
  search::LocalSearchOptions search;
  search.registry = &DefaultPlacerRegistry();  // its start placers, heft and m_topo
  search.max_moves = options.max_moves;
  const absl::Time start = absl::Now();
  double ratio_sum = 0;
  for (const Instance* x : instances) {
    PlacementProblem problem;
    problem.costs = x->costs.get();
    problem.seed = options.seed;
    absl::StatusOr<PlacerResult> r = absl::NotFoundError("no placer");
    if (options.placer == "local_search") {
      r = search::RunLocalSearch(problem, Budget{}, search);
    } else if (absl::StatusOr<const Placer*> placer = DefaultPlacerRegistry().Find(options.placer); placer.ok()) {
      r = (*placer)->Place(problem, Budget{});
    } else {
      return placer.status();
    }
    if (!r.ok())
      return absl::Status(r.status().code(), absl::StrCat("teacher on ", x->name, ": ", r.status().message()));
    Demonstration demo;
    demo.group_device = CanonicalDeviceNames(*x, GroupDevices(*x, r->placement));
    demo.ratio = PlacementCost(*x, demo.group_device, TrainerOptions{}.oom_penalty);
    ratio_sum += demo.ratio;
    out.push_back(std::move(demo));
  }
  if (log != nullptr && !out.empty()) {
    *log << absl::StrFormat("%d demonstrations in %.1fs, mean step time / bound %.4f (as groups)\n", out.size(),
                            absl::ToDoubleSeconds(absl::Now() - start), ratio_sum / out.size());
  }
  return out;
}

absl::StatusOr<std::vector<CurvePoint>> Imitate(LearnedPolicy& policy, const std::vector<const Instance*>& train,
                                                const std::vector<Demonstration>& demonstrations,
                                                const std::vector<const Instance*>& validation,
                                                const ImitationOptions& options, double* best, std::ostream* log) {
  if (train.empty()) return absl::InvalidArgumentError("no training instances");
  if (demonstrations.size() != train.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat(demonstrations.size(), " demonstrations for ", train.size(), " instances"));
  }
  for (size_t i = 0; i < train.size(); ++i) {
    if (static_cast<int32_t>(demonstrations[i].group_device.size()) != train[i]->input.num_groups) {
      return absl::InvalidArgumentError(absl::StrCat("demonstration ", i, " does not fit ", train[i]->name));
    }
  }
  try {
    torch::manual_seed(options.seed);
    std::mt19937_64 rng(options.seed);
    LearnedPolicy::Impl& impl = policy.impl();
    impl.net->train();
    torch::optim::Adam optimizer(impl.net->parameters(), torch::optim::AdamOptions(options.learning_rate));
    std::vector<InputTensors> tensors;
    std::vector<torch::Tensor> targets;
    double demo_ratio = 0;
    for (size_t i = 0; i < train.size(); ++i) {
      tensors.push_back(ToTensors(train[i]->input, impl.device, impl.net->options()));
      std::vector<int64_t> labels(demonstrations[i].group_device.begin(), demonstrations[i].group_device.end());
      targets.push_back(torch::tensor(labels, torch::kInt64).to(impl.device));
      demo_ratio += demonstrations[i].ratio / train.size();
    }
    CurveOptions curve_options;
    curve_options.oom_penalty = options.oom_penalty;
    curve_options.checkpoint = options.checkpoint;
    curve_options.version = options.version;
    curve_options.label = "imitate";
    curve_options.loss_name = "cross-entropy";
    curve_options.eval_every = options.eval_every;
    curve_options.fixed_sample_ratio = demo_ratio;
    CurveRecorder recorder(policy, validation, curve_options, log);
    absl::Status st = recorder.Point(0);
    if (!st.ok()) return st;
    for (int64_t it = 0; it < options.iterations; ++it) {
      optimizer.zero_grad();
      double batch_loss = 0, batch_entropy = 0;
      for (int32_t b = 0; b < options.graphs_per_batch; ++b) {
        const size_t index = rng() % train.size();
        torch::Tensor logits = impl.net->forward(tensors[index]);
        torch::Tensor logp = torch::log_softmax(logits, 1);
        torch::Tensor loss = torch::nll_loss(logp, targets[index]);
        (loss / options.graphs_per_batch).backward();
        batch_loss += loss.item<double>();
        batch_entropy += MeanEntropy(logits, logp).item<double>();
      }
      torch::nn::utils::clip_grad_norm_(impl.net->parameters(), options.max_grad_norm);
      optimizer.step();
      st = recorder.EndIteration(it + 1, batch_loss / options.graphs_per_batch,
                                 batch_entropy / options.graphs_per_batch);
      if (!st.ok()) return st;
    }
    impl.net->eval();
    *best = recorder.best();
    return std::move(recorder.curve());
  } catch (const c10::Error& e) {
    return absl::InternalError(absl::StrCat("imitation failed: ", e.what_without_backtrace()));
  }
}

}  // namespace placement::learned
