// Placers and weights side by side on ONNX models, in one run: for each model (as an inference graph, or a
// training step with --training) on each cluster, every column's step time over the reference column's, and the
// geometric mean of each column over all instances. Prints the tables of docs/BENCHMARKS.md ("Learned policy on
// your own graphs"), for example:
//
//   build/policy/learned/policy_compare --graphs=build/torchvision/held --training --batch=32
//       --devices=4xV100,8xV100 --weights=models/placement_policy.pt,build/tv.pt
//       --columns=policy@0,policy@1 --reference=auto:10s
//
// A column is PLACER[@W][:DEADLINE]: a placer of the registry with the learned placers on the W-th --weights
// (without @W the classical registry), run with that deadline (default --deadline). "auto_nofinetune@W" is AUTO
// with the learned placers on W but without policy_finetune in its registry.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <limits>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "graph/onnx/onnx_import.h"
#include "graph/training.h"
#include "policy/learned/dataset.h"
#include "policy/learned/learned_placers.h"
#include "policy/learned/torch_device.h"
#include "policy/placer_families.h"

ABSL_FLAG(std::string, graphs, "", "comma list of ONNX files and folders of them");
ABSL_FLAG(bool, training, false, "place each model's training step (Adam) rather than its inference graph");
ABSL_FLAG(int64_t, batch, 32, "ONNX batch size");
ABSL_FLAG(std::string, devices, "4xV100,8xV100", "comma list of cluster shorthands");
ABSL_FLAG(std::string, weights, PLACEMENT_SOURCE_DIR "/models/placement_policy.pt", "comma list of weights files");
ABSL_FLAG(std::string, columns, "policy@0", "comma list of PLACER[@W][:DEADLINE]");
ABSL_FLAG(std::string, reference, "auto", "the column the others are divided by");
ABSL_FLAG(absl::Duration, deadline, absl::Seconds(10), "deadline of a column that names none");
ABSL_FLAG(int32_t, threads, 1, "LibTorch CPU threads");

namespace {

using namespace placement;
using namespace placement::learned;

struct Column {
  std::string label, placer;
  const PlacerRegistry* registry = nullptr;
  absl::Duration deadline;
  double log_sum = 0;
  int count = 0;
};

// Registries per weights file: with every learned placer, and without policy_finetune.
struct Registries {
  std::vector<std::unique_ptr<PlacerRegistry>> full, no_finetune;
};

absl::StatusOr<Column> ParseColumn(const std::string& spec, const Registries& r) {
  Column c;
  c.label = spec;
  c.deadline = absl::GetFlag(FLAGS_deadline);
  std::string rest = spec;
  if (const size_t colon = rest.find(':'); colon != std::string::npos) {
    if (!absl::ParseDuration(rest.substr(colon + 1), &c.deadline))
      return absl::InvalidArgumentError("bad deadline in " + spec);
    rest = rest.substr(0, colon);
  }
  c.registry = &DefaultPlacerRegistry();
  if (const size_t at = rest.find('@'); at != std::string::npos) {
    size_t w = 0;
    if (!absl::SimpleAtoi(rest.substr(at + 1), &w) || w >= r.full.size())
      return absl::InvalidArgumentError("bad weights in " + spec);
    rest = rest.substr(0, at);
    const bool without = rest == "auto_nofinetune";
    c.registry = without ? r.no_finetune[w].get() : r.full[w].get();
    if (without) rest = "auto";
  }
  c.placer = rest;
  if (!c.registry->Find(c.placer).ok()) return absl::InvalidArgumentError("no placer " + c.placer);
  return c;
}

std::vector<std::string> Split(const std::string& list) { return absl::StrSplit(list, ',', absl::SkipEmpty()); }

std::vector<std::string> ModelFiles() {
  std::vector<std::string> files;
  for (const std::string& g : Split(absl::GetFlag(FLAGS_graphs))) {
    if (!std::filesystem::is_directory(g)) {
      files.push_back(g);
      continue;
    }
    std::vector<std::string> in;
    for (const auto& e : std::filesystem::directory_iterator(g)) {
      if (e.path().extension() == ".onnx") in.push_back(e.path().string());
    }
    std::sort(in.begin(), in.end());
    files.insert(files.end(), in.begin(), in.end());
  }
  return files;
}

absl::StatusOr<Graph> LoadModel(const std::string& file) {
  OnnxImportOptions import;
  import.batch_size = absl::GetFlag(FLAGS_batch);
  absl::StatusOr<OnnxImportResult> imported = ImportOnnxFile(file, import);
  if (!imported.ok()) return imported.status();
  if (!absl::GetFlag(FLAGS_training)) return std::move(imported->problem.graph);
  return BuildTrainingGraph(imported->problem.graph);
}

double Value(const Column& c, const Instance& x) {
  PlacementProblem problem;
  problem.costs = x.costs.get();
  absl::StatusOr<PlacerResult> r = (*c.registry->Find(c.placer))->Place(problem, Budget::For(c.deadline));
  return r.ok() && r->evaluation.fits_memory ? r->evaluation.value : std::numeric_limits<double>::infinity();
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  if (absl::Status s = SetTorchThreads(absl::GetFlag(FLAGS_threads)); !s.ok()) {
    std::cerr << s.message() << "\n";
    return 1;
  }
  Registries registries;
  for (const std::string& w : Split(absl::GetFlag(FLAGS_weights))) {
    absl::StatusOr<std::shared_ptr<const LearnedPolicy>> policy = LearnedPolicy::Load(w, "cpu");
    if (!policy.ok()) {
      std::cerr << policy.status() << "\n";
      return 1;
    }
    std::cout << "weights " << registries.full.size() << ": " << w << " (" << (*policy)->version() << ")\n";
    registries.full.push_back(MakeRegistryWithPolicy(*policy));
    LearnedPlacerOptions without;
    without.register_finetune = false;
    registries.no_finetune.push_back(MakeRegistryWithPolicy(*policy, without));
  }
  absl::StatusOr<Column> reference = ParseColumn(absl::GetFlag(FLAGS_reference), registries);
  std::vector<Column> columns;
  for (const std::string& spec : Split(absl::GetFlag(FLAGS_columns))) {
    absl::StatusOr<Column> c = ParseColumn(spec, registries);
    if (!c.ok() || !reference.ok()) {
      std::cerr << (c.ok() ? reference.status() : c.status()) << "\n";
      return 2;
    }
    columns.push_back(*std::move(c));
  }
  std::cout << "\n| instance | ops |";
  for (const Column& c : columns) std::cout << " " << c.label << " / " << reference->label << " |";
  std::cout << "\n|---|---|";
  for (size_t i = 0; i < columns.size(); ++i) std::cout << "---|";
  std::cout << "\n" << std::flush;
  for (const std::string& file : ModelFiles()) {
    absl::StatusOr<Graph> graph = LoadModel(file);
    if (!graph.ok()) {
      std::cerr << file << ": " << graph.status() << "\n";
      continue;
    }
    for (const std::string& devices : Split(absl::GetFlag(FLAGS_devices))) {
      const std::string name = absl::StrCat(std::filesystem::path(file).stem().string(), " on ", devices);
      absl::StatusOr<std::unique_ptr<Instance>> x = MakeInstance(name, "", *graph, devices, {});
      if (!x.ok()) {
        std::cerr << name << ": " << x.status() << "\n";
        continue;
      }
      const double ref = Value(*reference, **x);
      std::cout << absl::StrFormat("| %s | %d |", name, (*x)->graph.num_ops());
      for (Column& c : columns) {
        const double ratio = Value(c, **x) / ref;
        c.log_sum += std::log(ratio);
        ++c.count;
        std::cout << absl::StrFormat(" %.4f |", ratio);
      }
      std::cout << "\n" << std::flush;
    }
  }
  std::cout << "| geometric mean | |";
  for (const Column& c : columns)
    std::cout << absl::StrFormat(" **%.4f** |", c.count ? std::exp(c.log_sum / c.count) : 0.0);
  std::cout << "\n";
  return 0;
}
