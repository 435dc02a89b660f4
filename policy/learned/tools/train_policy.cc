// Trains the placement policy and writes the weights and the learning curve:
//
//   build/policy/learned/train_policy --seed=2 --imitation_iterations=0 --scheduled_share=1 --schedule_weight=4
//       --iterations=30000 --validation_families=branches,unet --minutes=0 --version=gnn-3
//       --out=models/placement_policy.pt --curve=docs/policy_learning_curve.tsv      (one line; the shipped run,
//       models/MANIFEST.json)
//
// Up to two phases: imitation of local search's placements (imitation.h), then REINFORCE against the simulator
// (trainer.h), for single shot, the guided or the scheduled decoding. The default flags are the single-shot
// recipe of the previous network, gnn-2 (imitation, then single-shot reinforcement).
//
// Data: the synthetic families and the corpus models minus --held_out (whole families, kept for evaluation),
// each as an inference graph and a training step on a cluster drawn from the dataset's list. Validation: the
// same families at other seeds. Runs on --threads CPU threads; the best validation weights are checkpointed to
// --out as training goes, so an interrupted run still leaves usable weights.
#include <algorithm>
#include <fstream>
#include <iostream>
#include <limits>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "graph/graph_families.h"
#include "policy/learned/dataset.h"
#include "policy/learned/imitation.h"
#include "policy/learned/torch_device.h"
#include "policy/learned/trainer.h"

ABSL_FLAG(uint64_t, seed, 1, "seed of the data, the initial weights and the sampling");
ABSL_FLAG(double, minutes, 20, "wall-time limit of the reinforcement loop (0: none)");
ABSL_FLAG(int64_t, iterations, 60000, "reinforcement iteration limit; the entropy bonus decays over it");
ABSL_FLAG(int64_t, stop_after, 0,
          "stop reinforcement after this many iterations without changing its schedule (0: at --iterations; -1: "
          "no reinforcement)");
ABSL_FLAG(int32_t, threads, 1, "LibTorch CPU threads (the weights depend on it: keep it to rebuild a file)");
ABSL_FLAG(std::string, out, "models/placement_policy.pt", "weights file (the best validation checkpoint)");
ABSL_FLAG(std::string, curve, "docs/policy_learning_curve.tsv", "learning curve (TSV)");
ABSL_FLAG(std::string, version, "gnn-2", "version stored in the weights");
ABSL_FLAG(double, entropy_bonus, 0.01, "entropy bonus at the start (decays to a tenth)");
ABSL_FLAG(double, learning_rate, 1e-3, "Adam's learning rate (reinforcement)");
ABSL_FLAG(int64_t, imitation_iterations, 3000,
          "iterations of imitation (cross-entropy against local search's placements) before reinforcement; 0: none");
ABSL_FLAG(std::string, teacher, "local_search", "placer whose answers are imitated");
ABSL_FLAG(int64_t, hidden, 64, "hidden width of the network");
ABSL_FLAG(int64_t, layers, 3, "message passing rounds");
ABSL_FLAG(int64_t, teacher_moves, 1500, "local search moves per training instance for the demonstrations");
ABSL_FLAG(double, imitation_learning_rate, 2e-3, "Adam's learning rate during imitation");
ABSL_FLAG(std::string, init, "",
          "start from these weights instead of fresh ones (imitation is then skipped; the seed still draws the "
          "data and the samples)");
ABSL_FLAG(double, guide_share, 0,
          "share of the batch's graphs that train the network as HEFT's guide (trainer.h); with it, checkpoints "
          "keep the best validation ratio of the better of greedy and the guided decoding");
ABSL_FLAG(double, guide_threshold, 0.1, "the guided decoding's threshold that guide training aims at");
ABSL_FLAG(double, scheduled_share, 0,
          "share of the batch's graphs that train the network for the scheduled decoding (trainer.h); with it, "
          "checkpoints keep the best validation ratio of the better of greedy and the scheduled decoding");
ABSL_FLAG(double, schedule_weight, 2, "the scheduled decoding's weight of delays against logits (scheduled.h)");
ABSL_FLAG(std::string, validation_families, "",
          "synthetic families kept out of training and used only to choose the checkpoint (empty: the training "
          "families at another seed, the shipped run's validation)");
ABSL_FLAG(std::string, families, "layered,nas_cells,fan_out,chain",
          "synthetic families to train on (graph_families.h), less --held_out and --validation_families");
ABSL_FLAG(std::string, sizes, "30,60,120,250", "approximate operator counts of the synthetic training graphs");
ABSL_FLAG(std::string, held_out, "blocks,transformer_encoder,transformer_decoder",
          "families and corpus models kept out of training");
ABSL_FLAG(std::string, corpus_dir, PLACEMENT_SOURCE_DIR "/tests/data/corpus", "ONNX corpus");
ABSL_FLAG(std::string, corpus_models, "resnet50,inception_v3,vgg16,mobilenet_v3_large,lstm_seq2seq,gru_seq2seq,transformer_encoder,transformer_decoder",
          "corpus models (file stems) to use unless held out");

namespace {

std::vector<std::string> Without(const std::vector<std::string>& all, const std::vector<std::string>& out) {
  std::vector<std::string> kept;
  for (const std::string& a : all) {
    if (std::find(out.begin(), out.end(), a) == out.end()) kept.push_back(a);
  }
  return kept;
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  using namespace placement;
  using namespace placement::learned;
  if (absl::Status s = SetTorchThreads(absl::GetFlag(FLAGS_threads)); !s.ok()) {
    std::cerr << s.message() << "\n";
    return 1;
  }
  const uint64_t seed = absl::GetFlag(FLAGS_seed);
  const std::vector<std::string> held = absl::StrSplit(absl::GetFlag(FLAGS_held_out), ',', absl::SkipEmpty());

  DatasetOptions data;
  data.seed = seed;
  const std::vector<std::string> validation_families =
      absl::StrSplit(absl::GetFlag(FLAGS_validation_families), ',', absl::SkipEmpty());
  auto known = [](const std::string& f) {
    return std::find(GraphFamilies().begin(), GraphFamilies().end(), f) != GraphFamilies().end();
  };
  for (const std::string& f : validation_families) {
    if (!known(f) || std::find(held.begin(), held.end(), f) != held.end()) {
      std::cerr << "--validation_families: '" << f << "' is not a synthetic family outside --held_out\n";
      return 2;
    }
  }
  const std::vector<std::string> families = absl::StrSplit(absl::GetFlag(FLAGS_families), ',', absl::SkipEmpty());
  for (const std::string& f : families) {
    if (!known(f)) {
      std::cerr << "--families: '" << f << "' is not a synthetic family (" << absl::StrJoin(GraphFamilies(), ", ") << ")\n";
      return 2;
    }
  }
  data.families = Without(Without(families, held), validation_families);
  data.sizes.clear();
  for (absl::string_view size : absl::StrSplit(absl::GetFlag(FLAGS_sizes), ',', absl::SkipEmpty())) {
    int32_t n = 0;
    if (!absl::SimpleAtoi(size, &n) || n < 2 || n > 100000) {
      std::cerr << "--sizes: '" << size << "' is not an operator count between 2 and 100000\n";
      return 2;
    }
    data.sizes.push_back(n);
  }
  if (data.sizes.empty()) {
    std::cerr << "--sizes: no size given\n";
    return 2;
  }
  if (data.families.empty()) {
    std::cerr << "--families: none left to train on after --held_out and --validation_families\n";
    return 2;
  }
  data.corpus_dir = absl::GetFlag(FLAGS_corpus_dir);
  data.corpus_models = Without(absl::StrSplit(absl::GetFlag(FLAGS_corpus_models), ',', absl::SkipEmpty()), held);
  data.topologies_per_graph = 2;
  auto train = MakeDataset(data);
  if (!train.ok()) {
    std::cerr << "training data: " << train.status() << "\n";
    return 1;
  }
  DatasetOptions val = data;
  val.seed = seed + 7919;
  val.sizes = {60, 200};
  val.seeds_per_size = 1;
  val.corpus_models.clear();
  if (!validation_families.empty()) {
    // Fewer graphs than the training families would give: more sizes and seeds of the unseen ones.
    val.families = validation_families;
    val.sizes = {60, 120, 200};
    val.seeds_per_size = 2;
  }
  val.topologies_per_graph = 1;
  auto validation = MakeDataset(val);
  if (!validation.ok()) {
    std::cerr << "validation data: " << validation.status() << "\n";
    return 1;
  }
  std::vector<const Instance*> t, v;
  for (const auto& x : *train) t.push_back(x.get());
  for (const auto& x : *validation) v.push_back(x.get());
  std::cerr << "training on " << t.size() << " instances (families " << absl::StrJoin(data.families, ",") << "; corpus "
            << absl::StrJoin(data.corpus_models, ",") << "), validating on " << v.size() << " (families "
            << absl::StrJoin(val.families, ",") << "); held out "
            << absl::StrJoin(held, ",") << "\n";

  std::shared_ptr<LearnedPolicy> policy;
  if (absl::GetFlag(FLAGS_init).empty()) {
    policy = LearnedPolicy::Create(NetworkOptions{absl::GetFlag(FLAGS_hidden), absl::GetFlag(FLAGS_layers)}, seed);
  } else {
    auto loaded = LearnedPolicy::LoadForTraining(absl::GetFlag(FLAGS_init));
    if (!loaded.ok()) {
      std::cerr << "--init: " << loaded.status() << "\n";
      return 1;
    }
    policy = *std::move(loaded);
    std::cerr << "starting from " << absl::GetFlag(FLAGS_init) << " (" << policy->version() << ")\n";
  }
  struct Phase {
    std::string name;
    int64_t first_iteration;
    std::vector<CurvePoint> points;
  };
  std::vector<Phase> phases;
  double best = std::numeric_limits<double>::infinity();
  int64_t done = 0;
  if (absl::GetFlag(FLAGS_imitation_iterations) > 0 && absl::GetFlag(FLAGS_init).empty()) {
    TeacherOptions teacher;
    teacher.seed = seed;
    teacher.max_moves = absl::GetFlag(FLAGS_teacher_moves);
    teacher.placer = absl::GetFlag(FLAGS_teacher);
    auto demos = MakeDemonstrations(t, teacher, &std::cerr);
    if (!demos.ok()) {
      std::cerr << demos.status() << "\n";
      return 1;
    }
    ImitationOptions imitation;
    imitation.seed = seed;
    imitation.iterations = absl::GetFlag(FLAGS_imitation_iterations);
    imitation.learning_rate = absl::GetFlag(FLAGS_imitation_learning_rate);
    imitation.checkpoint = absl::GetFlag(FLAGS_out);
    imitation.version = absl::GetFlag(FLAGS_version);
    auto curve = Imitate(*policy, t, *demos, v, imitation, &best, &std::cerr);
    if (!curve.ok()) {
      std::cerr << curve.status() << "\n";
      return 1;
    }
    phases.push_back({"imitation", 0, *std::move(curve)});
    done = imitation.iterations;
  }
  TrainerOptions options;
  options.seed = seed;
  options.iterations = absl::GetFlag(FLAGS_iterations);
  options.max_seconds = absl::GetFlag(FLAGS_minutes) * 60;
  options.stop_after = absl::GetFlag(FLAGS_stop_after);
  options.checkpoint = absl::GetFlag(FLAGS_out);
  options.checkpoint_to_beat = best;
  options.version = absl::GetFlag(FLAGS_version);
  options.entropy_bonus = absl::GetFlag(FLAGS_entropy_bonus);
  options.learning_rate = absl::GetFlag(FLAGS_learning_rate);
  options.guide_share = absl::GetFlag(FLAGS_guide_share);
  options.guide_threshold = absl::GetFlag(FLAGS_guide_threshold);
  options.scheduled_share = absl::GetFlag(FLAGS_scheduled_share);
  options.schedule_weight = absl::GetFlag(FLAGS_schedule_weight);
  if (options.stop_after >= 0) {
    auto curve = Train(*policy, t, v, options, &std::cerr);
    if (!curve.ok()) {
      std::cerr << curve.status() << "\n";
      return 1;
    }
    phases.push_back({"reinforce", done, *std::move(curve)});
  }
  std::ofstream tsv(absl::GetFlag(FLAGS_curve));
  tsv << "phase\titeration\tseconds\tloss\tentropy\tsampled_ratio\tgreedy_validation_ratio\n";
  double offset_seconds = 0;
  for (const Phase& phase : phases) {
    for (const CurvePoint& p : phase.points) {
      tsv << phase.name << '\t' << phase.first_iteration + p.iteration << '\t' << offset_seconds + p.seconds << '\t'
          << p.loss << '\t' << p.entropy << '\t' << p.sample_ratio << '\t' << p.greedy_ratio << '\n';
    }
    if (!phase.points.empty()) offset_seconds += phase.points.back().seconds;
  }
  std::cerr << "wrote " << absl::GetFlag(FLAGS_out) << " and " << absl::GetFlag(FLAGS_curve) << "\n";
  return 0;
}
