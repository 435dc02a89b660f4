// Import time of our JSON graph format for synthetic graphs up to 100k operators, and of the Tarnawski format.
#include <benchmark/benchmark.h>

#include <string>

#include "graph/graph_families.h"
#include "graph/graph_json.h"

namespace placement {
namespace {

// The JSON text of a Transformer-blocks graph of about n operators, built once per size.
const std::string& BlocksJson(int n) {
  static std::string cached[3];
  static int sizes[3] = {1000, 10000, 100000};
  for (int i = 0; i < 3; ++i) {
    if (sizes[i] == n && cached[i].empty()) {
      FamilyOptions o;
      o.approx_ops = n;
      cached[i] = GraphToJson(*GenerateFamily("blocks", o), GraphJsonOptions{});
    }
    if (sizes[i] == n) return cached[i];
  }
  static const std::string empty;
  return empty;
}

void BM_ParseGraphJson(benchmark::State& state) {
  const std::string& text = BlocksJson(static_cast<int>(state.range(0)));
  int32_t ops = 0;
  for (auto _ : state) {
    absl::StatusOr<Problem> p = ParseGraphJson(text);
    if (!p.ok()) {
      state.SkipWithError(std::string(p.status().message()).c_str());
      return;
    }
    ops = p->graph.num_ops();
    benchmark::DoNotOptimize(p);
  }
  state.counters["ops"] = ops;
  state.counters["MB"] = static_cast<double>(text.size()) / 1e6;
  state.counters["ops/s"] = benchmark::Counter(static_cast<double>(ops), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_ParseGraphJson)->Arg(1000)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond);

void BM_GenerateAndWriteJson(benchmark::State& state) {
  FamilyOptions o;
  o.approx_ops = static_cast<int32_t>(state.range(0));
  for (auto _ : state) {
    absl::StatusOr<Graph> g = GenerateFamily("blocks", o);
    benchmark::DoNotOptimize(GraphToJson(*g, GraphJsonOptions{}));
  }
}
BENCHMARK(BM_GenerateAndWriteJson)->Arg(100000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace placement

BENCHMARK_MAIN();
