// What a user gives as measured costs (--costs, GraphOptions.costs), in any of its forms, and the one place it
// meets the graph: a costs file (graph/measured_costs.h) names operators; a PyTorch profiler trace
// (graph/torch_trace.h) names modules, and is matched to the graph's operators by their scope.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/graph.h"
#include "graph/measured_costs.h"
#include "graph/torch_trace.h"

namespace placement {

struct CostsInput {
  MeasuredCosts times;               // by operator name
  std::optional<ModuleTimes> trace;  // by module scope
  std::string trace_kind = "*";      // the device kind the trace was recorded on ("*": every kind)
};

// A trace (JSON events) or a costs file (JSON object or CSV), told apart by their content.
absl::StatusOr<CostsInput> ParseCostsInput(absl::string_view text, const std::string& trace_kind);

// The graph as placed: the costs (may be null) merged onto the forward graph, so that a training step's backward
// operators derive from measured forward times; `expand` (may be null) makes the training step; then the costs
// that name the training step's own operators ("fc1/grad") are merged. `sources` says what was measured, with a
// warning for the costs file's operators neither graph has and the operators a trace's modules do not cover.
absl::StatusOr<Graph> PrepareGraph(Graph forward, const CostsInput* costs,
                                   const std::function<absl::StatusOr<Graph>(const Graph&)>& expand,
                                   CostSources* sources);

}  // namespace placement
