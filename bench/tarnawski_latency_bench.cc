// Tarnawski et al.'s latency model (--cost_model tarnawski): on each of their shared latency inputs and the
// inputs derived from their throughput inputs (tests/support/latency_inputs.h), the published figure of their
// greedy baseline, our rebuild of it, AUTO within a budget, and their integer program (ilp_tarnawski) on its own
// with its bound over contiguous splits. Every value is the latency their model gives the returned split.
// Run by `./placement bench tarnawski_latency_bench`; the figures are kept in docs/BENCHMARKS.md.
//   tarnawski_latency_bench [--seconds S] [--ip_seconds S] [--only SUBSTRING]
//   (AUTO's budget, default 30; the program's, default 30, 0 to skip it; google-benchmark flags are ignored)
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "graph/tarnawski.h"
#include "policy/placer_families.h"
#include "policy/tarnawski/latency_ip.h"
#include "tests/support/latency_inputs.h"

namespace placement {
namespace {

struct Options {
  double seconds = 30;
  double ip_seconds = 30;
  std::string only;
};

Options Parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--seconds") == 0)
      o.seconds = std::atof(argv[++i]);
    else if (std::strcmp(argv[i], "--ip_seconds") == 0)
      o.ip_seconds = std::atof(argv[++i]);
    else if (std::strcmp(argv[i], "--only") == 0)
      o.only = argv[++i];
  }
  return o;
}

struct Timed {
  absl::StatusOr<PlacerResult> result;
  double seconds = 0;
};

Timed Run(const std::string& placer, const PlacementProblem& problem, double seconds) {
  const absl::Time start = absl::Now();
  const Budget budget = seconds > 0 ? Budget::For(absl::Seconds(seconds)) : Budget{};
  Timed t{(*DefaultPlacerRegistry().Find(placer))->Place(problem, budget), 0};
  t.seconds = absl::ToDoubleSeconds(absl::Now() - start);
  return t;
}

std::string Value(const Timed& t) {
  if (!t.result.ok()) return absl::StrFormat("error: %s", t.result.status().message());
  return absl::StrFormat("%.2f", t.result->evaluation.value);
}

// The program's bound and whether it closed, or why it did not run.
std::string Program(const PlacementProblem& problem, const Options& o) {
  if (o.ip_seconds <= 0) return "| (skipped) | ";
  if (problem.graph().num_ops() > tarnawski::kMaxIpOps) return "| (too large) | ";
  const Timed ip = Run("ilp_tarnawski", problem, o.ip_seconds);
  if (!ip.result.ok()) return absl::StrFormat("| error: %s | ", ip.result.status().message());
  return absl::StrFormat("| %.2f | %s (%.1f s, %.2f) ", ip.result->best_bound, ip.result->proven_optimal ? "yes" : "no",
                         ip.seconds, ip.result->evaluation.value);
}

void Row(const test_support::LatencyInput& input, const Options& o) {
  absl::StatusOr<Problem> problem = ParseTarnawskiGraph(input.json);
  if (!problem.ok()) {
    std::printf("| %s | error: %s |\n", input.name.c_str(), std::string(problem.status().message()).c_str());
    return;
  }
  absl::StatusOr<CostModel> costs = CostModel::Create(problem->graph, *problem->topology);
  if (!costs.ok()) return;
  PlacementProblem p;
  p.costs = &*costs;
  p.objective = Objective::kLatency;
  p.cost_model = CostModelKind::kTarnawski;
  const Timed greedy = Run("tarnawski_greedy", p, 0);
  const Timed automatic = Run("auto", p, o.seconds);
  const std::string published = input.published_greedy < 0 ? "" : absl::StrFormat("%.1f", input.published_greedy);
  std::string gain;
  if (greedy.result.ok() && automatic.result.ok()) {
    gain = absl::StrFormat("%+.1f%%", 100 * (automatic.result->evaluation.value / greedy.result->evaluation.value - 1));
  }
  std::printf("| %s | %d | %d | %s | %s | %s | %s | %s | %.1f s %s|\n", input.name.c_str(), input.k,
              problem->graph.num_ops(), published.c_str(), Value(greedy).c_str(), Value(automatic).c_str(),
              gain.c_str(), automatic.result.ok() ? automatic.result->algorithm.c_str() : "", automatic.seconds,
              Program(p, o).c_str());
  std::fflush(stdout);
}

}  // namespace
}  // namespace placement

int main(int argc, char** argv) {
  const placement::Options o = placement::Parse(argc, argv);
  const std::vector<placement::test_support::LatencyInput> inputs = placement::test_support::TarnawskiLatencyInputs();
  if (inputs.empty()) {
    std::printf("tarnawski_latency_bench: the shared inputs are not under ../shared/bench/tarnawski; nothing to run\n");
    return 0;
  }
  std::printf("AUTO within %.0f s, ilp_tarnawski within %.0f s\n\n", o.seconds, o.ip_seconds);
  std::printf(
      "| input | k | ops | their greedy (published) | our greedy | AUTO | vs greedy | AUTO's winner | AUTO time | "
      "IP bound (contiguous) | IP closed (time, value) |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (const placement::test_support::LatencyInput& input : inputs) {
    if (!o.only.empty() && !absl::StrContains(input.name, o.only)) continue;
    placement::Row(input, o);
  }
  return 0;
}
