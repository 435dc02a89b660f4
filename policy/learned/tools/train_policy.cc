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
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "graph/graph_families.h"
#include "graph/status_macros.h"
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
ABSL_FLAG(
    std::string, corpus_models,
    "resnet50,inception_v3,vgg16,mobilenet_v3_large,lstm_seq2seq,gru_seq2seq,transformer_encoder,transformer_decoder",
    "corpus models (file stems) to use unless held out");

namespace {

using namespace placement;
using namespace placement::learned;

using Instances = std::vector<std::unique_ptr<Instance>>;

// A flag that cannot be used is INVALID_ARGUMENT and exits 2, as a usage error; anything else that stops the
// run exits 1. The message is what the tool prints.
int ExitCodeFor(const absl::Status& status) { return status.code() == absl::StatusCode::kInvalidArgument ? 2 : 1; }
absl::Status RunFailed(absl::string_view what, const absl::Status& status) {
  return absl::InternalError(absl::StrCat(what, status.ToString()));
}

std::vector<std::string> ListFlag(const std::string& value) { return absl::StrSplit(value, ',', absl::SkipEmpty()); }

std::vector<std::string> Without(const std::vector<std::string>& all, const std::vector<std::string>& out) {
  std::vector<std::string> kept;
  for (const std::string& a : all) {
    if (std::find(out.begin(), out.end(), a) == out.end()) kept.push_back(a);
  }
  return kept;
}

bool IsSyntheticFamily(const std::string& family) {
  return std::find(GraphFamilies().begin(), GraphFamilies().end(), family) != GraphFamilies().end();
}

// Which families and corpus models the run trains and validates on, from the flags.
struct DataSplit {
  std::vector<std::string> held_out;
  std::vector<std::string> validation_families;
  std::vector<std::string> training_families;  // --families less the two above
};

absl::StatusOr<DataSplit> SplitFromFlags() {
  DataSplit split;
  split.held_out = ListFlag(absl::GetFlag(FLAGS_held_out));
  split.validation_families = ListFlag(absl::GetFlag(FLAGS_validation_families));
  for (const std::string& f : split.validation_families) {
    if (!IsSyntheticFamily(f) || std::find(split.held_out.begin(), split.held_out.end(), f) != split.held_out.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--validation_families: '", f, "' is not a synthetic family outside --held_out"));
    }
  }
  const std::vector<std::string> families = ListFlag(absl::GetFlag(FLAGS_families));
  for (const std::string& f : families) {
    if (!IsSyntheticFamily(f)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--families: '", f, "' is not a synthetic family (", absl::StrJoin(GraphFamilies(), ", "), ")"));
    }
  }
  split.training_families = Without(Without(families, split.held_out), split.validation_families);
  return split;
}

absl::StatusOr<std::vector<int32_t>> SizesFromFlag() {
  std::vector<int32_t> sizes;
  for (absl::string_view size : absl::StrSplit(absl::GetFlag(FLAGS_sizes), ',', absl::SkipEmpty())) {
    int32_t n = 0;
    if (!absl::SimpleAtoi(size, &n) || n < 2 || n > 100000) {
      return absl::InvalidArgumentError(
          absl::StrCat("--sizes: '", size, "' is not an operator count between 2 and 100000"));
    }
    sizes.push_back(n);
  }
  if (sizes.empty()) return absl::InvalidArgumentError("--sizes: no size given");
  return sizes;
}

absl::StatusOr<DatasetOptions> TrainingDataOptions(uint64_t seed, const DataSplit& split) {
  DatasetOptions data;
  data.seed = seed;
  data.families = split.training_families;
  ASSIGN_OR_RETURN(data.sizes, SizesFromFlag());
  if (data.families.empty()) {
    return absl::InvalidArgumentError("--families: none left to train on after --held_out and --validation_families");
  }
  data.corpus_dir = absl::GetFlag(FLAGS_corpus_dir);
  data.corpus_models = Without(ListFlag(absl::GetFlag(FLAGS_corpus_models)), split.held_out);
  data.topologies_per_graph = 2;
  return data;
}

// The training families at another seed and other sizes, or the --validation_families never trained on.
DatasetOptions ValidationDataOptions(const DatasetOptions& training, const DataSplit& split) {
  DatasetOptions val = training;
  val.seed = training.seed + 7919;
  val.sizes = {60, 200};
  val.seeds_per_size = 1;
  val.corpus_models.clear();
  if (!split.validation_families.empty()) {
    // Fewer graphs than the training families would give: more sizes and seeds of the unseen ones.
    val.families = split.validation_families;
    val.sizes = {60, 120, 200};
    val.seeds_per_size = 2;
  }
  val.topologies_per_graph = 1;
  return val;
}

// The instances training and validation read; they own what the pointer lists point into.
struct Data {
  Instances training_instances;
  Instances validation_instances;
  std::vector<const Instance*> training;
  std::vector<const Instance*> validation;
};

std::vector<const Instance*> Pointers(const Instances& instances) {
  std::vector<const Instance*> out;
  for (const auto& x : instances) out.push_back(x.get());
  return out;
}

absl::StatusOr<Data> BuildData(const DatasetOptions& training, const DatasetOptions& validation,
                               const DataSplit& split) {
  Data data;
  absl::StatusOr<Instances> train = MakeDataset(training);
  if (!train.ok()) return RunFailed("training data: ", train.status());
  data.training_instances = *std::move(train);
  absl::StatusOr<Instances> val = MakeDataset(validation);
  if (!val.ok()) return RunFailed("validation data: ", val.status());
  data.validation_instances = *std::move(val);
  data.training = Pointers(data.training_instances);
  data.validation = Pointers(data.validation_instances);
  std::cerr << "training on " << data.training.size() << " instances (families "
            << absl::StrJoin(training.families, ",") << "; corpus " << absl::StrJoin(training.corpus_models, ",")
            << "), validating on " << data.validation.size() << " (families " << absl::StrJoin(validation.families, ",")
            << "); held out " << absl::StrJoin(split.held_out, ",") << "\n";
  return data;
}

// Fresh weights drawn from the seed, or --init's.
absl::StatusOr<std::shared_ptr<LearnedPolicy>> InitialPolicy(uint64_t seed) {
  const std::string init = absl::GetFlag(FLAGS_init);
  if (init.empty()) {
    return LearnedPolicy::Create(NetworkOptions{absl::GetFlag(FLAGS_hidden), absl::GetFlag(FLAGS_layers)}, seed);
  }
  absl::StatusOr<std::shared_ptr<LearnedPolicy>> loaded = LearnedPolicy::LoadForTraining(init);
  if (!loaded.ok()) return RunFailed("--init: ", loaded.status());
  std::cerr << "starting from " << init << " (" << (*loaded)->version() << ")\n";
  return loaded;
}

// One phase's learning curve, its iterations counted from first_iteration.
struct Phase {
  std::string name;
  int64_t first_iteration;
  std::vector<CurvePoint> points;
};

// Imitation of the teacher's placements; *best becomes the best validation ratio it checkpointed.
absl::StatusOr<Phase> RunImitation(LearnedPolicy& policy, const Data& data, uint64_t seed, double* best) {
  TeacherOptions teacher;
  teacher.seed = seed;
  teacher.max_moves = absl::GetFlag(FLAGS_teacher_moves);
  teacher.placer = absl::GetFlag(FLAGS_teacher);
  absl::StatusOr<std::vector<Demonstration>> demos = MakeDemonstrations(data.training, teacher, &std::cerr);
  if (!demos.ok()) return RunFailed("", demos.status());
  ImitationOptions imitation;
  imitation.seed = seed;
  imitation.iterations = absl::GetFlag(FLAGS_imitation_iterations);
  imitation.learning_rate = absl::GetFlag(FLAGS_imitation_learning_rate);
  imitation.checkpoint = absl::GetFlag(FLAGS_out);
  imitation.version = absl::GetFlag(FLAGS_version);
  absl::StatusOr<std::vector<CurvePoint>> curve =
      Imitate(policy, data.training, *demos, data.validation, imitation, best, &std::cerr);
  if (!curve.ok()) return RunFailed("", curve.status());
  return Phase{"imitation", 0, *std::move(curve)};
}

// Reinforcement, checkpointing only weights that beat `best` (imitation's best, or none).
TrainerOptions ReinforcementOptions(uint64_t seed, double best) {
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
  return options;
}

// Imitation (unless --init or no iterations), then reinforcement (unless --stop_after=-1).
absl::StatusOr<std::vector<Phase>> RunPhases(LearnedPolicy& policy, const Data& data, uint64_t seed) {
  std::vector<Phase> phases;
  double best = std::numeric_limits<double>::infinity();
  int64_t done = 0;
  if (absl::GetFlag(FLAGS_imitation_iterations) > 0 && absl::GetFlag(FLAGS_init).empty()) {
    ASSIGN_OR_RETURN(Phase imitation, RunImitation(policy, data, seed, &best));
    phases.push_back(std::move(imitation));
    done = absl::GetFlag(FLAGS_imitation_iterations);
  }
  const TrainerOptions options = ReinforcementOptions(seed, best);
  if (options.stop_after >= 0) {
    absl::StatusOr<std::vector<CurvePoint>> curve = Train(policy, data.training, data.validation, options, &std::cerr);
    if (!curve.ok()) return RunFailed("", curve.status());
    phases.push_back({"reinforce", done, *std::move(curve)});
  }
  return phases;
}

// The phases one after another: iterations and seconds continue across them.
void WriteCurve(const std::vector<Phase>& phases, const std::string& path) {
  std::ofstream tsv(path);
  tsv << "phase\titeration\tseconds\tloss\tentropy\tsampled_ratio\tgreedy_validation_ratio\n";
  double offset_seconds = 0;
  for (const Phase& phase : phases) {
    for (const CurvePoint& p : phase.points) {
      tsv << phase.name << '\t' << phase.first_iteration + p.iteration << '\t' << offset_seconds + p.seconds << '\t'
          << p.loss << '\t' << p.entropy << '\t' << p.sample_ratio << '\t' << p.greedy_ratio << '\n';
    }
    if (!phase.points.empty()) offset_seconds += phase.points.back().seconds;
  }
}

absl::Status TrainFromFlags() {
  if (absl::Status s = SetTorchThreads(absl::GetFlag(FLAGS_threads)); !s.ok()) return absl::InternalError(s.message());
  const uint64_t seed = absl::GetFlag(FLAGS_seed);
  ASSIGN_OR_RETURN(const DataSplit split, SplitFromFlags());
  ASSIGN_OR_RETURN(const DatasetOptions training, TrainingDataOptions(seed, split));
  const DatasetOptions validation = ValidationDataOptions(training, split);
  ASSIGN_OR_RETURN(const Data data, BuildData(training, validation, split));
  ASSIGN_OR_RETURN(const std::shared_ptr<LearnedPolicy> policy, InitialPolicy(seed));
  ASSIGN_OR_RETURN(const std::vector<Phase> phases, RunPhases(*policy, data, seed));
  WriteCurve(phases, absl::GetFlag(FLAGS_curve));
  std::cerr << "wrote " << absl::GetFlag(FLAGS_out) << " and " << absl::GetFlag(FLAGS_curve) << "\n";
  return absl::OkStatus();
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  const absl::Status status = TrainFromFlags();
  if (status.ok()) return 0;
  std::cerr << status.message() << "\n";
  return ExitCodeFor(status);
}
