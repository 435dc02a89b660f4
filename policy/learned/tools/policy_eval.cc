// The learned policy against the classical placers on families it never saw in training, and its inference
// cost; prints the tables of docs/BENCHMARKS.md ("Learned policy"):
//
//   build/policy/learned/policy_eval --weights=models/placement_policy.pt --deadline=5s
//
// For each held-out instance: the policy's single-shot step time over the lower bound, over the best one-shot
// classical placer, and over AUTO without the policy (same deadline); the same for policy_iterative and
// policy_search. Then single-shot time on layered graphs of 1k and 50k operators.
#include <algorithm>
#include <iostream>
#include <limits>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/marshalling.h"
#include "absl/flags/parse.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "graph/graph_families.h"
#include "graph/training.h"
#include "policy/learned/dataset.h"
#include "policy/learned/learned_placers.h"
#include "policy/learned/torch_device.h"
#include "policy/placer_families.h"

ABSL_FLAG(std::string, weights, PLACEMENT_SOURCE_DIR "/models/placement_policy.pt", "policy weights");
ABSL_FLAG(absl::Duration, deadline, absl::Seconds(5), "budget of AUTO and of policy_search per instance");
ABSL_FLAG(int32_t, threads, 2, "LibTorch CPU threads");
ABSL_FLAG(std::string, families, "blocks", "held-out synthetic families");
ABSL_FLAG(std::string, corpus_models, "transformer_encoder,transformer_decoder", "held-out corpus models");
ABSL_FLAG(std::string, corpus_dir, PLACEMENT_SOURCE_DIR "/tests/data/corpus", "ONNX corpus");
ABSL_FLAG(bool, timing_only, false, "only the inference-cost table");
ABSL_FLAG(bool, large, true, "also the graphs ten times larger than any in training");
ABSL_FLAG(bool, timing, true, "also the inference-cost table");
ABSL_FLAG(int32_t, guided_samples, 0, "sampled guided decodings of the policy placer (0: none, the default)");
ABSL_FLAG(std::vector<std::string>, guided, std::vector<std::string>({"0.5", "0.1", "0.01", "0.001"}),
          "thresholds of the policy placer's guided decodings (learned_placers.h); 'none' for none");

ABSL_FLAG(int32_t, scheduled_samples, 8,
          "sampled scheduled decodings of the policy placer at the first --scheduled weight (learned_placers.h)");
ABSL_FLAG(std::vector<std::string>, scheduled, std::vector<std::string>({"4", "2", "8", "16", "32"}),
          "weights of the policy placer's scheduled decodings (learned_placers.h); 'none' for none");

namespace {

using namespace placement;
using namespace placement::learned;

constexpr const char* kBaselines[] = {"heft", "m_etf", "m_sct", "critical_path", "m_topo", "single_device"};

double Value(const absl::StatusOr<PlacerResult>& r) {
  return r.ok() && r->evaluation.fits_memory ? r->evaluation.value : std::numeric_limits<double>::infinity();
}

absl::StatusOr<PlacerResult> Run(const PlacerRegistry& registry, const std::string& name, const Instance& x,
                                 absl::Duration budget, double* ms) {
  PlacementProblem problem;
  problem.costs = x.costs.get();
  const absl::Time begin = absl::Now();
  absl::StatusOr<PlacerResult> r = (*registry.Find(name))->Place(problem, Budget::For(budget));
  if (ms != nullptr) *ms = absl::ToDoubleMilliseconds(absl::Now() - begin);
  return r;
}

// Which of the policy placer's decodings won ("greedy", "sample 3", "guided 0.1", "guided sample 2 at 0.01"),
// from its notes.
std::string Winner(const absl::StatusOr<PlacerResult>& r) {
  if (!r.ok()) return "-";
  for (const std::string& note : r->notes) {
    if (!absl::StartsWith(note, "best of greedy, ")) continue;
    const size_t at = note.find(": ");
    if (at != std::string::npos) return note.substr(at + 2);
  }
  return "-";
}

bool Quality(const PlacerRegistry& with_policy, const PlacerRegistry& network_only, const DatasetOptions& data) {
  auto set = MakeDataset(data);
  if (!set.ok()) {
    std::cerr << set.status() << "\n";
    return false;
  }
  std::vector<const Instance*> instances;
  for (const auto& x : *set) instances.push_back(x.get());
  const absl::Duration deadline = absl::GetFlag(FLAGS_deadline);
  std::cout
      << "| instance | ops | groups | policy / LB | policy / best baseline | policy / AUTO | network alone / AUTO | "
         "iterative / AUTO | policy+search / AUTO | best baseline | policy's best decoding | policy placer ms |\n"
         "|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  double wins = 0, within10 = 0;
  std::vector<double> ratios;
  for (const Instance* x : instances) {
    double ms = 0;
    const absl::StatusOr<PlacerResult> answer = Run(with_policy, "policy", *x, deadline, &ms);
    const double policy = Value(answer);
    const double alone = Value(Run(network_only, "policy", *x, deadline, nullptr));
    const double iterative = Value(Run(with_policy, "policy_iterative", *x, deadline, nullptr));
    const double searched = Value(Run(with_policy, "policy_search", *x, deadline, nullptr));
    double best = std::numeric_limits<double>::infinity();
    std::string best_name = "-";
    for (const char* b : kBaselines) {
      const double v = Value(Run(DefaultPlacerRegistry(), b, *x, deadline, nullptr));
      if (v < best) {
        best = v;
        best_name = b;
      }
    }
    const double automatic = Value(Run(DefaultPlacerRegistry(), "auto", *x, deadline, nullptr));
    ratios.push_back(policy / automatic);
    within10 += policy <= 1.1 * automatic;
    wins += searched < automatic * (1 - 1e-9);
    std::cout << absl::StrFormat("| %s | %d | %d | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %s | %s | %.1f |\n",
                                 x->name, x->graph.num_ops(), x->groups.num_groups, policy / x->bound, policy / best,
                                 policy / automatic, alone / automatic, iterative / automatic, searched / automatic,
                                 best_name, Winner(answer), ms)
              << std::flush;
  }
  std::sort(ratios.begin(), ratios.end());
  std::cout << absl::StrFormat(
      "\nsingle shot within 10%% of AUTO (no policy) on %d of %d; policy+search ahead of it on "
      "%d; median policy / AUTO %.3f\n\n",
      static_cast<int>(within10), static_cast<int>(instances.size()), static_cast<int>(wins),
      ratios.empty() ? 0.0 : ratios[ratios.size() / 2]);
  return true;
}

void Timing(const LearnedPolicy& policy, const PlacerRegistry& with_policy) {
  std::cout << "| graph | ops | groups | single shot ms (median of 5) | of which coarsen / features / network ms | "
               "policy placer (with simulation) ms |\n|---|---|---|---|---|---|\n";
  for (int32_t ops : {1000, 10000, 50000}) {
    FamilyOptions o;
    o.approx_ops = ops;
    absl::StatusOr<std::unique_ptr<Instance>> x =
        MakeInstance(absl::StrCat("layered/", ops), "layered", *GenerateFamily("layered", o), "8xV100", {});
    if (!x.ok()) {
      std::cerr << x.status() << "\n";
      continue;
    }
    std::vector<double> times, coarsen, features, network;
    int32_t groups = 0;
    for (int rep = 0; rep < 5; ++rep) {
      const absl::Time begin = absl::Now();
      absl::StatusOr<PolicyAnswer> a = RunPolicy(policy, *(*x)->costs);
      times.push_back(absl::ToDoubleMilliseconds(absl::Now() - begin));
      if (a.ok()) groups = a->groups.num_groups;
      // The same phases one by one, to show where the time goes.
      absl::Time t = absl::Now();
      Coarsening c = *Coarsen(*(*x)->costs);
      coarsen.push_back(absl::ToDoubleMilliseconds(absl::Now() - t));
      t = absl::Now();
      PolicyInput in = BuildPolicyInput(*(*x)->costs, c);
      features.push_back(absl::ToDoubleMilliseconds(absl::Now() - t));
      t = absl::Now();
      (void)policy.Score(in);
      network.push_back(absl::ToDoubleMilliseconds(absl::Now() - t));
    }
    for (auto* v : {&coarsen, &features, &network}) std::sort(v->begin(), v->end());
    std::sort(times.begin(), times.end());
    double placer_ms = 0;
    const absl::StatusOr<PlacerResult> placed = Run(with_policy, "policy", **x, absl::Seconds(60), &placer_ms);
    if (!placed.ok()) std::cerr << "policy placer on " << (*x)->name << ": " << placed.status() << "\n";
    std::cout << absl::StrFormat("| layered, 8xV100 | %d | %d | %.1f | %.1f / %.1f / %.1f | %.1f |\n",
                                 (*x)->graph.num_ops(), groups, times[2], coarsen[2], features[2], network[2],
                                 placer_ms)
              << std::flush;
  }
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  if (absl::Status s = SetTorchThreads(absl::GetFlag(FLAGS_threads)); !s.ok()) {
    std::cerr << s.message() << "\n";
    return 1;
  }
  absl::StatusOr<std::shared_ptr<const LearnedPolicy>> policy = LearnedPolicy::Load(absl::GetFlag(FLAGS_weights));
  if (!policy.ok()) {
    std::cerr << policy.status() << "\n";
    return 1;
  }
  std::cout << "policy " << (*policy)->version() << " on " << (*policy)->device() << "\n\n";
  LearnedPlacerOptions options;
  options.guided_thresholds.clear();
  options.guided_samples = absl::GetFlag(FLAGS_guided_samples);
  options.scheduled_samples = absl::GetFlag(FLAGS_scheduled_samples);
  for (const std::string& t : absl::GetFlag(FLAGS_guided)) {
    double v = 0;
    if (t == "none") continue;
    if (!absl::SimpleAtod(t, &v) || !(v > 0 && v <= 1)) {
      std::cerr << "--guided: '" << t << "' is not a threshold in (0, 1]\n";
      return 2;
    }
    options.guided_thresholds.push_back(v);
  }
  options.scheduled_weights.clear();
  for (const std::string& t : absl::GetFlag(FLAGS_scheduled)) {
    double v = 0;
    if (t == "none") continue;
    if (!absl::SimpleAtod(t, &v) || !(v >= 0 && v <= 1e6)) {
      std::cerr << "--scheduled: '" << t << "' is not a weight in [0, 1e6]\n";
      return 2;
    }
    options.scheduled_weights.push_back(v);
  }
  auto registry = MakeRegistryWithPolicy(*policy, options);
  LearnedPlacerOptions alone_options = options;
  alone_options.guided_thresholds.clear();
  alone_options.guided_samples = 0;
  alone_options.scheduled_weights.clear();
  alone_options.scheduled_samples = 0;
  auto network_only = MakeRegistryWithPolicy(*policy, alone_options);
  if (!absl::GetFlag(FLAGS_timing_only)) {
    DatasetOptions held;
    held.seed = 4242;
    held.families = absl::StrSplit(absl::GetFlag(FLAGS_families), ',', absl::SkipEmpty());
    held.sizes = {60, 250};
    held.seeds_per_size = 1;
    held.corpus_dir = absl::GetFlag(FLAGS_corpus_dir);
    held.corpus_models = absl::StrSplit(absl::GetFlag(FLAGS_corpus_models), ',', absl::SkipEmpty());
    held.topologies = {"4xV100", "2xH100+2xT4", "2x2xV100"};
    std::cout << "Held-out families (never in training):\n\n";
    if (!Quality(*registry, *network_only, held)) return 1;

    if (absl::GetFlag(FLAGS_large)) {
      // Ten times the largest training graph (250-operator forward graphs, about 600 operators as a step).
      DatasetOptions large = held;
      large.sizes = {2500};
      large.corpus_models.clear();
      large.families = {"blocks", "layered"};
      large.topologies = {"8xV100"};
      std::cout << "Graphs 10x larger than any in training:\n\n";
      if (!Quality(*registry, *network_only, large)) return 1;
    }
  }
  if (!absl::GetFlag(FLAGS_timing)) return 0;
  std::cout << "Inference cost (" << absl::GetFlag(FLAGS_threads) << " CPU threads):\n\n";
  Timing(**policy, *registry);
  return 0;
}
