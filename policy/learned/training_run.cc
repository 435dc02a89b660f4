#include "policy/learned/training_run.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <numeric>
#include <random>
#include <utility>

#include "absl/strings/str_cat.h"
#include "policy/learned/dataset.h"
#include "policy/learned/learned_placers.h"
#include "simulator/objectives.h"

namespace placement::learned {
namespace {

// Recipes of the scheduled decoding's training (models/MANIFEST.json): from existing weights a smaller step and
// less exploration, so that tuning refines what the weights know rather than starting over.
constexpr double kTuneLearningRate = 3e-4, kTuneEntropy = 0.002;
constexpr double kScratchLearningRate = 1e-3, kScratchEntropy = 0.01;
constexpr double kScheduleWeight = 4;

// Which graphs validate: a seeded draw of share x n of them, at least one when the share is positive, and never
// all of them (one graph at least trains).
std::vector<bool> ValidationDraw(size_t n, double share, uint64_t seed) {
  std::vector<bool> validation(n, false);
  if (share <= 0 || n < 2) return validation;
  size_t count = std::clamp<size_t>(static_cast<size_t>(std::lround(share * n)), 1, n - 1);
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 rng(seed);
  std::shuffle(order.begin(), order.end(), rng);
  for (size_t i = 0; i < count; ++i) validation[order[i]] = true;
  return validation;
}

// Why `topology` cannot hold `graph`, or "" when it can (as far as memory alone tells).
std::string CannotHold(const Instance& x) {
  const LowerBound bound = ComputeLowerBound(*x.costs, Objective::kStepTime);
  if (bound.min_devices_for_memory > x.topology.num_devices()) {
    return absl::StrCat("its memory needs at least ", bound.min_devices_for_memory, " such devices, the cluster has ",
                        x.topology.num_devices());
  }
  return "";
}

// The graph on every topology that can hold it; the others are reported.
std::vector<std::unique_ptr<Instance>> InstancesOf(const RunGraph& g, const std::vector<RunTopology>& topologies,
                                                   const TrainingRunOptions& options, TrainingRunReport& report) {
  std::vector<std::unique_ptr<Instance>> out;
  for (const RunTopology& t : topologies) {
    absl::StatusOr<std::unique_ptr<Instance>> x =
        MakeInstanceOn(absl::StrCat(g.source, " on ", t.source), g.source, g.graph, t.topology, CoarseningOptions{});
    std::string why = x.ok() ? CannotHold(**x) : std::string(x.status().message());
    if (why.empty()) {
      out.push_back(*std::move(x));
      continue;
    }
    report.skipped.push_back(absl::StrCat(g.source, " on ", t.source, ": ", why));
    if (options.on_skipped) options.on_skipped(report.skipped.back());
  }
  return out;
}

// The single-shot placer with `policy` on `instances`: the geometric mean of step time / lower bound.
PlacerFigures MeasurePlacer(std::shared_ptr<const LearnedPolicy> policy,
                            const std::vector<const Instance*>& instances) {
  PlacerFigures f;
  f.version = policy->version();
  const std::unique_ptr<Placer> placer = MakePolicyPlacer(policy);
  double log_sum = 0;
  for (const Instance* x : instances) {
    PlacementProblem problem;
    problem.costs = x->costs.get();
    absl::StatusOr<PlacerResult> r = placer->Place(problem, Budget{});
    if (!r.ok() || x->bound <= 0) continue;
    log_sum += std::log(r->evaluation.value / x->bound);
    ++f.instances;
  }
  f.geomean_ratio = f.instances > 0 ? std::exp(log_sum / f.instances) : 0;
  return f;
}

// "gnn-3+f77d43be" -> "gnn-3-tuned"; from scratch "custom".
std::string DefaultVersion(const TrainingRunOptions& options, const std::string& start_version) {
  if (!options.version.empty()) return options.version;
  if (options.init.empty()) return "custom";
  return absl::StrCat(start_version.substr(0, start_version.find('+')), "-tuned");
}

absl::StatusOr<std::shared_ptr<LearnedPolicy>> StartWeights(const TrainingRunOptions& options) {
  if (options.init.empty()) return LearnedPolicy::Create(NetworkOptions{}, options.seed);
  return LearnedPolicy::LoadForTraining(options.init);
}

TrainerOptions TrainerOptionsOf(const TrainingRunOptions& options) {
  const bool scratch = options.init.empty();
  TrainerOptions t;
  t.seed = options.seed;
  t.max_seconds = options.max_seconds;
  t.iterations = options.iterations > 0 ? options.iterations : std::numeric_limits<int32_t>::max();
  t.schedule_by_time = options.iterations <= 0;
  t.learning_rate = options.learning_rate > 0 ? options.learning_rate
                    : scratch                 ? kScratchLearningRate
                                              : kTuneLearningRate;
  t.entropy_bonus = options.entropy_bonus > 0 ? options.entropy_bonus : scratch ? kScratchEntropy : kTuneEntropy;
  t.scheduled_share = 1;
  t.schedule_weight = kScheduleWeight;
  t.eval_every = options.eval_every;
  t.checkpoint = options.out;
  t.version = options.version;
  t.stop = options.stop;
  t.on_iteration = options.on_iteration;
  return t;
}

}  // namespace

namespace {

// The instances of every graph on the clusters that hold it, split by role; the report gets the sources and what
// was skipped.
struct Split {
  std::vector<std::unique_ptr<Instance>> instances;
  std::vector<const Instance*> train, validation;
};

absl::StatusOr<Split> SplitInstances(const std::vector<RunGraph>& graphs, const std::vector<RunTopology>& topologies,
                                     const TrainingRunOptions& options, TrainingRunReport& report) {
  Split split;
  const std::vector<bool> validates = ValidationDraw(graphs.size(), options.validation_share, options.seed);
  for (size_t i = 0; i < graphs.size(); ++i) {
    std::vector<std::unique_ptr<Instance>> of = InstancesOf(graphs[i], topologies, options, report);
    if (of.empty()) continue;
    (validates[i] ? report.validation_sources : report.train_sources).push_back(graphs[i].source);
    for (auto& x : of) (validates[i] ? split.validation : split.train).push_back(x.get());
    std::move(of.begin(), of.end(), std::back_inserter(split.instances));
  }
  if (split.train.empty())
    return absl::InvalidArgumentError("no graph left to train on (every one was skipped or validates)");
  if (options.validation_share <= 0) split.validation = split.train;  // no graph spared: chosen on the training set
  if (split.validation.empty()) {
    return absl::InvalidArgumentError(
        "no validation graph left (the ones drawn were skipped): add graphs, or "
        "--validation_share=0 to choose the checkpoint on the training graphs");
  }
  report.train_instances = static_cast<int32_t>(split.train.size());
  report.validation_instances = static_cast<int32_t>(split.validation.size());
  return split;
}

// The run's figures from its curve.
void Summarize(std::vector<CurvePoint> curve, TrainingRunReport& report) {
  report.curve = std::move(curve);
  if (report.curve.empty()) return;
  report.iterations = report.curve.back().iteration;
  report.seconds = report.curve.back().seconds;
  report.start_validation = report.best_validation = report.curve.front().greedy_ratio;
  for (const CurvePoint& p : report.curve) report.best_validation = std::min(report.best_validation, p.greedy_ratio);
}

}  // namespace

absl::StatusOr<TrainingRunReport> RunTraining(const std::vector<RunGraph>& graphs,
                                              const std::vector<RunTopology>& topologies,
                                              const TrainingRunOptions& options) {
  if (topologies.empty()) return absl::InvalidArgumentError("no cluster to train on");
  TrainingRunReport report;
  absl::StatusOr<Split> split = SplitInstances(graphs, topologies, options, report);
  if (!split.ok()) return split.status();
  absl::StatusOr<std::shared_ptr<LearnedPolicy>> policy = StartWeights(options);
  if (!policy.ok()) return policy.status();
  report.start_version = (*policy)->version();
  absl::StatusOr<std::shared_ptr<LearnedPolicy>> start = (*policy)->CopyForTraining(report.start_version);
  if (!start.ok()) return start.status();
  report.version = DefaultVersion(options, report.start_version);
  TrainerOptions trainer = TrainerOptionsOf(options);
  trainer.version = report.version;
  absl::StatusOr<std::vector<CurvePoint>> curve = Train(**policy, split->train, split->validation, trainer);
  if (!curve.ok()) return curve.status();
  Summarize(*std::move(curve), report);
  report.stopped = options.stop != nullptr && options.stop->load();
  absl::StatusOr<std::shared_ptr<const LearnedPolicy>> written = LearnedPolicy::Load(options.out, "cpu");
  if (!written.ok()) return written.status();
  report.start_placer = MeasurePlacer(*std::move(start), split->validation);
  report.new_placer = MeasurePlacer(*std::move(written), split->validation);
  return report;
}

}  // namespace placement::learned
