#include "graph/costs_input.h"

#include <utility>
#include <vector>

namespace placement {

absl::StatusOr<CostsInput> ParseCostsInput(absl::string_view text, const std::string& trace_kind) {
  CostsInput input;
  input.trace_kind = trace_kind.empty() ? "*" : trace_kind;
  if (LooksLikeTorchTrace(text)) {
    absl::StatusOr<ModuleTimes> trace = ParseTorchTrace(text);
    if (!trace.ok()) return trace.status();
    input.trace = *std::move(trace);
    return input;
  }
  absl::StatusOr<MeasuredCosts> times = ParseMeasuredCosts(text);
  if (!times.ok()) return times.status();
  input.times = *std::move(times);
  return input;
}

absl::StatusOr<Graph> PrepareGraph(Graph forward, const CostsInput* costs,
                                   const std::function<absl::StatusOr<Graph>(const Graph&)>& expand,
                                   CostSources* sources) {
  MeasuredCosts first, later;
  std::vector<std::string> trace_warnings;
  if (costs != nullptr && costs->trace) {
    first = MatchModuleTimes(forward, *costs->trace, costs->trace_kind, &trace_warnings);
  }
  if (costs != nullptr) {  // times given by name win over the trace's
    for (const auto& [name, times] : costs->times.times) {
      (forward.FindOp(name) != kNone ? first : later).times[name] = times;
    }
  }
  absl::StatusOr<Graph> graph = std::move(forward);
  CostSources ignored;
  if (!first.times.empty()) graph = ApplyMeasuredCosts(*graph, first, &ignored);
  if (graph.ok() && expand) graph = expand(*graph);
  if (!graph.ok()) return graph.status();
  if (!later.times.empty()) {
    graph = ApplyMeasuredCosts(*graph, later, sources);
    if (!graph.ok()) return graph.status();
    std::vector<std::string> warnings = std::move(sources->warnings);
    *sources = CountCostSources(*graph);
    sources->warnings = std::move(warnings);
  } else {
    *sources = CountCostSources(*graph);
  }
  sources->warnings.insert(sources->warnings.end(), trace_warnings.begin(), trace_warnings.end());
  return graph;
}

}  // namespace placement
