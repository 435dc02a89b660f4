// Every registered placer on every corpus model (inference and one training step) on 2, 4 and 8 devices of a
// preset, and on every shared Tarnawski input at its own device count (THROUGHPUT): the objective value, its
// ratio to the lower bound and the wall time, then AUTO against the best single placer of each instance. Run by
// `./placement bench placers_bench` (about 2.5 minutes with the defaults); the figures are kept in
// docs/BENCHMARKS.md. A plain program rather than google-benchmark: each cell is one timed run under a deadline.
//
//   placers_bench [--deadline=2s] [--devices=2,4,8] [--preset=V100] [--objectives=step_time] [--batch=32]
//                 [--models=SUBSTRING] [--placers=a,b] [--tarnawski=true] [--corpus=true]
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "graph/cost_model.h"
#include "graph/onnx/onnx_import.h"
#include "graph/tarnawski.h"
#include "graph/topology_json.h"
#include "graph/training.h"
#include "policy/placer.h"
#include "policy/placer_families.h"

ABSL_FLAG(absl::Duration, deadline, absl::Seconds(2), "budget of each placer on each instance");
ABSL_FLAG(std::string, devices, "2,4,8", "device counts for the corpus models");
ABSL_FLAG(std::string, preset, "V100", "device preset of the corpus clusters");
ABSL_FLAG(std::string, objectives, "step_time", "objectives for the corpus models: step_time, throughput, latency");
ABSL_FLAG(int64_t, batch, 32, "batch size bound into the corpus models");
ABSL_FLAG(std::string, models, "", "only corpus models and shared inputs whose file name contains this");
ABSL_FLAG(std::string, placers, "", "only these placers (comma-separated); auto is always run");
ABSL_FLAG(bool, corpus, true, "run the corpus models");
ABSL_FLAG(bool, tarnawski, true, "run the shared Tarnawski inputs (THROUGHPUT) when present");

namespace placement {
namespace {

namespace fs = std::filesystem;

struct Instance {
  std::string name;
  Objective objective;
  Graph graph;
  Topology topology;
  std::unique_ptr<CostModel> costs;
};

struct Row {
  std::string placer;
  bool ok = false;
  double value = 0;
  double ratio = 0;
  double seconds = 0;
  std::string error;
  std::string algorithm;  // what the result says produced it (AUTO: "auto:<winner>")
};

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool Wanted(const std::string& name) {
  const std::string filter = absl::GetFlag(FLAGS_models);
  return filter.empty() || absl::StrContains(name, filter);
}

// Adds an instance when the cost model accepts the pair; otherwise says why and skips it.
void Add(std::vector<std::unique_ptr<Instance>>& out, std::string name, Objective objective, Graph graph,
         Topology topology) {
  auto x = std::make_unique<Instance>();
  x->name = std::move(name);
  x->objective = objective;
  x->graph = std::move(graph);
  x->topology = std::move(topology);
  absl::StatusOr<CostModel> costs = CostModel::Create(x->graph, x->topology);
  if (!costs.ok()) {
    std::cerr << "skipping " << x->name << ": " << costs.status() << "\n";
    return;
  }
  x->costs = std::make_unique<CostModel>(*std::move(costs));
  out.push_back(std::move(x));
}

void AddCorpus(std::vector<std::unique_ptr<Instance>>& out) {
  const fs::path dir = fs::path(PLACEMENT_SOURCE_DIR) / "tests" / "data" / "corpus";
  std::vector<fs::path> models;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() == ".onnx" && Wanted(e.path().filename().string())) models.push_back(e.path());
  }
  std::sort(models.begin(), models.end());
  std::vector<Objective> objectives;
  for (absl::string_view o : absl::StrSplit(absl::GetFlag(FLAGS_objectives), ',', absl::SkipEmpty())) {
    absl::StatusOr<Objective> parsed = ParseObjective(o);
    if (parsed.ok()) objectives.push_back(*parsed);
  }
  std::vector<int> counts;
  for (absl::string_view c : absl::StrSplit(absl::GetFlag(FLAGS_devices), ',', absl::SkipEmpty())) {
    int n = 0;
    if (absl::SimpleAtoi(c, &n) && n > 0) counts.push_back(n);
  }
  for (const fs::path& model : models) {
    OnnxImportOptions options;
    options.batch_size = absl::GetFlag(FLAGS_batch);
    absl::StatusOr<OnnxImportResult> imported = ImportOnnxFile(model.string(), options);
    if (!imported.ok()) {
      std::cerr << "skipping " << model << ": " << imported.status() << "\n";
      continue;
    }
    absl::StatusOr<Graph> training = BuildTrainingGraph(imported->problem.graph);
    for (bool train : {false, true}) {
      if (train && !training.ok()) continue;
      for (Objective objective : objectives) {
        if (train && objective == Objective::kLatency) continue;  // latency scores inference only
        for (int n : counts) {
          absl::StatusOr<Topology> topo = ParseTopologyShorthand(absl::StrCat(n, "x", absl::GetFlag(FLAGS_preset)));
          if (!topo.ok()) {
            std::cerr << topo.status() << "\n";
            continue;
          }
          Add(out,
              absl::StrCat(model.stem().string(), train ? "/train" : "/infer", " ", n, "x", absl::GetFlag(FLAGS_preset),
                           " ", ObjectiveName(objective)),
              objective, train ? *training : imported->problem.graph, *std::move(topo));
        }
      }
    }
  }
}

void AddTarnawski(std::vector<std::unique_ptr<Instance>>& out) {
  const fs::path root = fs::path(PLACEMENT_SHARED_DIR) / "bench" / "tarnawski" / "throughput-inputs";
  if (!fs::exists(root)) {
    std::cerr << "shared Tarnawski inputs not found at " << root << "; skipping them\n";
    return;
  }
  std::vector<fs::path> inputs;
  for (const char* kind : {"LayerGraphs", "OperatorGraphs"}) {
    for (const auto& e : fs::directory_iterator(root / kind)) {
      if (e.path().extension() == ".json" && Wanted(e.path().filename().string())) inputs.push_back(e.path());
    }
  }
  std::sort(inputs.begin(), inputs.end());
  for (const fs::path& p : inputs) {
    absl::StatusOr<Problem> problem = ParseTarnawskiGraph(ReadFile(p));
    if (!problem.ok() || !problem->topology) {
      std::cerr << "skipping " << p << ": " << problem.status() << "\n";
      continue;
    }
    Add(out, absl::StrCat(p.parent_path().filename().string(), "/", p.stem().string(), " throughput"),
        Objective::kThroughput, std::move(problem->graph), *std::move(problem->topology));
  }
}

Row RunOne(const Placer& placer, const Instance& x) {
  PlacementProblem problem;
  problem.costs = x.costs.get();
  problem.objective = x.objective;
  Row row;
  row.placer = std::string(placer.name());
  const absl::Time begin = absl::Now();
  absl::StatusOr<PlacerResult> r = placer.Place(problem, Budget::For(absl::GetFlag(FLAGS_deadline)));
  row.seconds = absl::ToDoubleSeconds(absl::Now() - begin);
  if (!r.ok()) {
    row.error = std::string(absl::StatusCodeToString(r.status().code()));
  } else if (!r->evaluation.fits_memory) {
    row.error = "OOM";
  } else {
    row.ok = true;
    row.value = r->evaluation.value;
    row.ratio = r->evaluation.ratio;
    row.algorithm = r->algorithm;
  }
  return row;
}

// The instances are scored by our own cost model.
bool Lists(const Placer& p, Objective objective) { return CheckPlacerFits(p, objective, CostModelKind::kDefault).ok(); }

}  // namespace
}  // namespace placement

int main(int argc, char** argv) {
  using namespace placement;  // NOLINT: a program's main
  // scripts/bench.sh passes google-benchmark flags to every benchmark; they mean nothing here.
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    if (!absl::StartsWith(argv[i], "--benchmark")) args.push_back(argv[i]);
  }
  absl::ParseCommandLine(static_cast<int>(args.size()), args.data());
  const absl::Time start = absl::Now();
  std::vector<std::unique_ptr<Instance>> instances;
  if (absl::GetFlag(FLAGS_corpus)) AddCorpus(instances);
  if (absl::GetFlag(FLAGS_tarnawski)) AddTarnawski(instances);

  std::vector<std::string> only = absl::StrSplit(absl::GetFlag(FLAGS_placers), ',', absl::SkipEmpty());
  std::vector<const Placer*> placers;
  const Placer* auto_placer = nullptr;
  for (const Placer* p : DefaultPlacerRegistry().All()) {
    if (p->name() == "auto") {
      auto_placer = p;
    } else if (only.empty() || std::find(only.begin(), only.end(), p->name()) != only.end()) {
      placers.push_back(p);
    }
  }
  std::printf("deadline %s per placer and instance; %zu instances, %zu placers + auto\n\n",
              absl::FormatDuration(absl::GetFlag(FLAGS_deadline)).c_str(), instances.size(), placers.size());
  std::printf("%-44s %-15s %12s %8s %8s\n", "instance", "placer", "value", "ratio", "seconds");
  int auto_wins = 0, auto_runs = 0;
  std::vector<std::string> summary;
  for (const auto& x : instances) {
    std::vector<Row> rows;
    for (const Placer* p : placers) {
      if (Lists(*p, x->objective)) rows.push_back(RunOne(*p, *x));
    }
    const Row autorow = auto_placer != nullptr ? RunOne(*auto_placer, *x) : Row{};
    rows.push_back(autorow);
    for (const Row& r : rows) {
      if (r.ok) {
        std::printf("%-44s %-15s %12.6g %8.3f %8.3f\n", x->name.c_str(), r.placer.c_str(), r.value, r.ratio, r.seconds);
      } else {
        std::printf("%-44s %-15s %12s %8s %8.3f\n", x->name.c_str(), r.placer.c_str(), r.error.c_str(), "-", r.seconds);
      }
    }
    const Row* single = nullptr;
    for (size_t i = 0; i + 1 < rows.size(); ++i) {
      if (rows[i].ok && (single == nullptr || rows[i].value < single->value)) single = &rows[i];
    }
    std::string verdict = "-";
    if (autorow.ok && single != nullptr) {
      ++auto_runs;
      const bool le = autorow.value <= single->value * (1 + 1e-9);
      auto_wins += le;
      verdict = le ? "yes" : "NO";
    }
    summary.push_back(absl::StrFormat(
        "%-44s %-15s %12s %8s %12s %8s %6s  %s", x->name, single ? single->placer : "-",
        single ? absl::StrFormat("%.6g", single->value) : "-", single ? absl::StrFormat("%.3f", single->ratio) : "-",
        autorow.ok ? absl::StrFormat("%.6g", autorow.value) : autorow.error,
        autorow.ok ? absl::StrFormat("%.3f", autorow.ratio) : "-", verdict, autorow.algorithm));
    std::fflush(stdout);
  }
  std::printf("\n%-44s %-15s %12s %8s %12s %8s %6s  %s\n", "instance", "best single", "value", "ratio", "auto", "ratio",
              "auto<=", "auto's winner");
  for (const std::string& s : summary) std::printf("%s\n", s.c_str());
  std::printf("\nauto <= best single placer on %d of %d instances; total %s\n", auto_wins, auto_runs,
              absl::FormatDuration(absl::Trunc(absl::Now() - start, absl::Seconds(1))).c_str());
  return 0;
}
