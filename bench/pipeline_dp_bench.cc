// pipeline_dp on the published Tarnawski et al. inputs against the reference figures of their DP
// (../shared/bench/tarnawski/reference.tsv): our max-load and the published optimum, our time and theirs, our
// peak memory and theirs. Each input is solved in a child process so that its peak RSS (getrusage ru_maxrss)
// is its own. Run by `./placement bench pipeline_dp_bench`; the figures are kept in docs/BENCHMARKS.md.
//   pipeline_dp_bench [SHARED_DIR]   (google-benchmark flags are accepted and ignored)
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "graph/cost_model.h"
#include "graph/tarnawski.h"
#include "policy/exact/pipeline_dp.h"
#include "tests/support/shared_inputs.h"

namespace placement {
namespace {

using test_support::TarnawskiReference;

// A published figure as printed, blank where the reference has none.
std::string Figure(double v, const char* format) { return v < 0 ? "" : absl::StrFormat(format, v); }

// Solves one input in this (child) process and prints its row.
int SolveAndPrint(const std::string& dir, const TarnawskiReference& ref, int repeats) {
  absl::StatusOr<Problem> problem = ParseTarnawskiGraph(test_support::ReadFileToString(dir + "/" + ref.input));
  if (!problem.ok()) {
    std::cout << ref.input << "\t" << problem.status() << "\n";
    return 1;
  }
  absl::StatusOr<CostModel> costs = CostModel::Create(problem->graph, *problem->topology);
  if (!costs.ok()) {
    std::cout << ref.input << "\t" << costs.status() << "\n";
    return 1;
  }
  double best_seconds = 1e300;
  absl::StatusOr<PipelineSolution> sol;
  for (int r = 0; r < repeats; ++r) {
    const absl::Time start = absl::Now();
    sol = SolveContiguousPipeline(*costs, Budget{});
    best_seconds = std::min(best_seconds, absl::ToDoubleSeconds(absl::Now() - start));
    if (!sol.ok()) break;
  }
  if (!sol.ok()) {
    std::cout << ref.input << "\t" << sol.status() << "\n";
    return 1;
  }
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const double peak_mb = usage.ru_maxrss / 1024.0;
  const double reference = ref.dp_optimal, theirs = ref.dp_seconds;
  std::printf("%s\t%d\t%.4f\t%s\t%.4f\t%.4f\t%s\t%s\t%.1f\t%s\t%s\t%d+%d\t%lld\t%d\n", ref.input.c_str(), ref.k,
              sol->max_load, Figure(ref.dp_optimal, "%.2f").c_str(), reference > 0 ? sol->max_load / reference : 0.0,
              best_seconds, Figure(ref.dp_seconds, "%g").c_str(),
              theirs > 0 ? absl::StrCat(static_cast<int64_t>(theirs / best_seconds), "x").c_str() : "", peak_mb,
              Figure(ref.dp_peak_mb, "%g").c_str(), sol->proven_optimal ? "yes" : "no", sol->accelerators_used,
              sol->cpus_used, static_cast<long long>(sol->stats.ideals), sol->stats.dp_runs);
  std::fflush(stdout);
  return 0;
}

}  // namespace
}  // namespace placement

int main(int argc, char** argv) {
  std::string shared = PLACEMENT_SHARED_DIR;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]).rfind("--", 0) != 0) shared = argv[i];
  }
  const std::string dir = shared + "/bench/tarnawski";
  if (!std::filesystem::exists(dir + "/reference.tsv")) {
    std::cout << "pipeline_dp_bench: " << dir << "/reference.tsv is not here; nothing to run\n";
    return 0;
  }
  std::cout << "input\tk\tours\tdp_optimal\tratio\tour_s\tdp_s\tspeed-up\tour_peak_mb\tdp_peak_mb\tproven\tacc+"
               "cpu\tideals\tdp_runs\n";
  std::fflush(stdout);
  int failures = 0;
  for (const placement::test_support::TarnawskiReference& ref : placement::test_support::ReadTarnawskiReference(dir)) {
    const pid_t pid = fork();
    if (pid == 0) _exit(placement::SolveAndPrint(dir, ref, /*repeats=*/3));
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ++failures;
  }
  return failures == 0 ? 0 : 1;
}
