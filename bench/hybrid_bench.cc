// Plans for big clusters in our own cost model: on the corpus models (tests/data/corpus, as training steps) and on
// the Tarnawski et al. inputs (../shared/bench/tarnawski), at 8, 16 and 64 devices, the time per sample of pure
// operator placement (AUTO's portfolio, its placement scored as a plan of one replica per stage), pure data
// parallelism, a pure pipeline and the hybrid plan, which won, and what the event simulator measured for the
// hybrid plan over a few micro-batches against the model's prediction. Run by `./placement bench hybrid_bench`;
// the figures are kept in docs/BENCHMARKS.md.
//   hybrid_bench [--only=NAME,...] [--devices=8,16,64] [--operator_deadline=3s] [--batch=32]
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "client/graph_loader.h"
#include "graph/tarnawski.h"
#include "policy/auto/auto_placer.h"
#include "policy/parallel/hybrid_placer.h"
#include "policy/placer_families.h"
#include "tests/support/shared_inputs.h"

namespace placement {
namespace {

struct Input {
  std::string name, path;
  bool tarnawski = false;
};

struct Flags {
  std::vector<std::string> only;
  std::vector<int32_t> devices = {8, 16, 64};
  absl::Duration operator_deadline = absl::Seconds(3);
  int64_t batch = 32;
};

std::vector<Input> Inputs() {
  std::vector<Input> out;
  const std::string corpus = std::string(PLACEMENT_SOURCE_DIR) + "/tests/data/corpus";
  for (const char* m : {"resnet50", "inception_v3", "vgg16", "mobilenet_v3_large", "transformer_encoder",
                        "transformer_decoder", "gru_seq2seq", "lstm_seq2seq"}) {
    out.push_back(Input{m, absl::StrCat(corpus, "/", m, ".onnx"), false});
  }
  const std::filesystem::path t = test_support::TarnawskiDir() / "throughput-inputs/LayerGraphs";
  for (const char* m : {"bert24_training", "gnmt_training", "resnet50_training"}) {
    if (std::filesystem::exists(t / absl::StrCat(m, ".json")))
      out.push_back(Input{absl::StrCat("tarnawski/", m), (t / absl::StrCat(m, ".json")).string(), true});
  }
  return out;
}

// The Tarnawski inputs' own link figure: bytes per time unit, the median of their edges' size / cost.
double ImpliedBandwidth(const Graph& g) {
  std::vector<double> ratios;
  for (TensorId t = 0; t < g.num_tensors(); ++t) {
    if (g.tensor(t).transfer_seconds > 0 && g.tensor(t).bytes > 0)
      ratios.push_back(g.tensor(t).bytes / g.tensor(t).transfer_seconds);
  }
  if (ratios.empty()) return 1e9;
  std::nth_element(ratios.begin(), ratios.begin() + ratios.size() / 2, ratios.end());
  return ratios[ratios.size() / 2];
}

// n of the input's accelerators, each pair its own link at the input's link figure, as in Tarnawski et al.
absl::StatusOr<Topology> TarnawskiCluster(const Problem& p, int32_t n) {
  const Device& acc = p.topology->device(0);
  std::vector<Device> devices;
  for (int32_t i = 0; i < n; ++i) {
    Device d = acc;
    d.name = absl::StrCat("acc", i);
    devices.push_back(d);
  }
  const double bw = ImpliedBandwidth(p.graph);
  return BuildMatrix(absl::StrCat(n, "xfpga"), devices, std::vector<std::vector<double>>(n, std::vector<double>(n, bw)),
                     std::vector<std::vector<double>>(n, std::vector<double>(n, 0.0)));
}

std::string Shorthand(int32_t n) { return n <= 8 ? absl::StrCat(n, "xA100") : absl::StrCat(n / 8, "x8xA100"); }

struct Outcome {
  double value = -1;
  std::string plan, note;
  std::optional<PlacerResult> result;
};

Outcome Run(const PlacementProblem& problem, Parallelism parallelism, const Flags& flags) {
  Outcome o;
  absl::StatusOr<PlacerResult> r;
  if (parallelism == Parallelism::kOperator) {
    PlacementProblem placing = problem;
    placing.parallelism = Parallelism::kOperator;
    portfolio::AutoOptions automatic;
    automatic.registry = &DefaultPlacerRegistry();
    absl::StatusOr<PlacerResult> placed = portfolio::RunAuto(placing, Budget::For(flags.operator_deadline), automatic);
    r = placed.ok() ? PlanResult(problem, PlanFromPlacement(problem.graph(), placed->placement), placed->algorithm)
                    : absl::StatusOr<PlacerResult>(placed.status());
    if (r.ok() && !PlanMemoryStatus(*problem.costs, r->plan->plan, r->plan->evaluation).ok())
      r->evaluation.fits_memory = false;
  } else {
    r = PlanParallel(problem, Budget{}, parallelism);
  }
  if (!r.ok()) {
    o.note = std::string(absl::StatusCodeToString(r.status().code()));
    return o;
  }
  o.value = r->evaluation.fits_memory ? r->evaluation.value : -1;
  if (!r->evaluation.fits_memory) o.note = "OOM";
  std::vector<std::string> reps;
  for (int32_t s = 0; s < r->plan->plan.num_stages(); ++s) reps.push_back(absl::StrCat(r->plan->plan.replicas(s)));
  o.plan = absl::StrJoin(reps, ",");
  o.result = *std::move(r);
  return o;
}

// The hybrid plan's simulated time per sample and its difference from the model, "-" when not simulated.
std::pair<std::string, std::string> Simulated(const PlacementProblem& problem, Outcome& hybrid) {
  if (!hybrid.result.has_value()) return {"-", "-"};
  if (hybrid.result->plan->simulated_time_per_sample == 0) hybrid.result->plan->simulated_time_per_sample = -1;
  CheckBySimulation(problem, *hybrid.result, /*max_operators=*/4'000'000);
  const double sim = hybrid.result->plan->simulated_time_per_sample;
  if (sim <= 0) return {"-", "-"};
  return {absl::StrFormat("%.4g", sim), absl::StrFormat("%+.1f%%", 100 * (sim / hybrid.value - 1))};
}

std::string Cell(const Outcome& o) { return o.value > 0 ? absl::StrFormat("%.4g", o.value) : o.note; }

void Case(const Input& in, int32_t n, const Flags& flags) {
  cli::GraphLoadOptions load;
  load.training = !in.tarnawski;
  load.batch = in.tarnawski ? 0 : flags.batch;
  absl::StatusOr<cli::LoadedGraph> loaded = cli::LoadGraphFile(in.path, load);
  if (!loaded.ok()) {
    std::printf("%s\t%d\t%s\n", in.name.c_str(), n, std::string(loaded.status().message()).c_str());
    return;
  }
  absl::StatusOr<Topology> topology =
      in.tarnawski ? TarnawskiCluster(loaded->problem, n) : cli::ResolveTopology(loaded->problem, "", Shorthand(n));
  if (!topology.ok()) return;
  absl::StatusOr<CostModel> costs = CostModel::Create(loaded->problem.graph, *topology);
  if (!costs.ok()) return;
  PlacementProblem problem;
  problem.costs = &*costs;
  problem.objective = Objective::kThroughput;
  const absl::Time start = absl::Now();
  Outcome hybrid = Run(problem, Parallelism::kHybrid, flags);
  const double plan_ms = absl::ToDoubleMilliseconds(absl::Now() - start);
  const Outcome op = Run(problem, Parallelism::kOperator, flags), data = Run(problem, Parallelism::kData, flags),
                pipeline = Run(problem, Parallelism::kPipeline, flags);
  const auto [simulated, error] = Simulated(problem, hybrid);
  std::map<std::string, double> by_kind = {
      {"operator", op.value}, {"data", data.value}, {"pipeline", pipeline.value}, {"hybrid", hybrid.value}};
  std::string best = "-";
  for (const auto& [kind, v] : by_kind) {
    if (v > 0 && (best == "-" || v < by_kind[best] * (1 - 1e-9))) best = kind;
  }
  std::printf("%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%.2f\t%.2f\t%s\t%s\t%.0f\n", in.name.c_str(), n, Cell(op).c_str(),
              Cell(data).c_str(), Cell(pipeline).c_str(), Cell(hybrid).c_str(), hybrid.plan.c_str(), best.c_str(),
              op.value > 0 && hybrid.value > 0 ? op.value / hybrid.value : 0.0,
              data.value > 0 && hybrid.value > 0 ? data.value / hybrid.value : 0.0, simulated.c_str(), error.c_str(),
              plan_ms);
  std::fflush(stdout);
}

}  // namespace
}  // namespace placement

int main(int argc, char** argv) {
  placement::Flags flags;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (absl::StartsWith(arg, "--only=")) flags.only = absl::StrSplit(arg.substr(7), ',');
    if (absl::StartsWith(arg, "--devices=")) {
      flags.devices.clear();
      for (absl::string_view d : absl::StrSplit(arg.substr(10), ',')) {
        int32_t n = 0;
        if (absl::SimpleAtoi(d, &n) && n > 0) flags.devices.push_back(n);
      }
    }
    if (absl::StartsWith(arg, "--operator_deadline="))
      (void)absl::ParseDuration(arg.substr(20), &flags.operator_deadline);
    if (absl::StartsWith(arg, "--batch=")) (void)absl::SimpleAtoi(arg.substr(8), &flags.batch);
  }
  std::printf(
      "input\tdevices\toperator\tdata\tpipeline\thybrid\thybrid_replicas\tbest\toperator/hybrid\tdata/hybrid\t"
      "simulated\tsim_vs_model\tplan_ms\n");
  for (const placement::Input& in : placement::Inputs()) {
    if (!flags.only.empty() && std::find(flags.only.begin(), flags.only.end(), in.name) == flags.only.end()) continue;
    for (int32_t n : flags.devices) placement::Case(in, n, flags);
  }
  return 0;
}
