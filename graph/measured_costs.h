// Measured per-operator compute times merged onto any graph (ONNX, our JSON format, Tarnawski): where an
// operator has a measurement it is used, everywhere else the cost model's estimate. A costs file is the plain
// form of a profile:
//
//   JSON  {"operator name": {"device kind": seconds or "12.5us", ...}, ...}
//   CSV   operator,device_kind,seconds        (a header line with those words is allowed; '#' starts a comment)
//
// A device kind names a device model of the topology ("A100", "cpu"); "*" applies to every kind (a kind's own
// entry wins over it). An operator the graph does not have is reported, not an error: a profile may cover more
// than the exported graph holds.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/graph.h"

namespace placement {

struct MeasuredCosts {
  // Operator name -> (device kind, seconds) in the file's order.
  std::map<std::string, std::vector<std::pair<std::string, double>>> times;
};

// JSON or CSV, told apart by the first character that is not blank. INVALID_ARGUMENT names the line (CSV) or the
// key (JSON) of a malformed entry: a time that is not a positive finite duration, a missing column, a device kind
// given twice for one operator.
absl::StatusOr<MeasuredCosts> ParseMeasuredCosts(absl::string_view text);

// Where an answer's costs came from.
struct CostSources {
  int32_t measured_ops = 0;           // operators with at least one measured time
  int32_t modelled_ops = 0;           // operators estimated by the cost model
  double measured_flops_share = 0;    // share of the graph's FLOPs done by measured operators (0 without FLOPs)
  std::vector<std::string> warnings;  // operators of the costs file the graph does not have
};

// "12 of 40 operators measured (75.0% of the FLOPs), 28 modelled", or "all 40 operators modelled (...)".
std::string CostSourcesLine(int32_t measured, int32_t modelled, double measured_flops_share);

// Counts the sources of a graph as it stands (measured times from its own format count as measured).
CostSources CountCostSources(const Graph& graph);

// The graph with the measured times of `costs` in place of what its operators had for the same device kinds.
absl::StatusOr<Graph> ApplyMeasuredCosts(const Graph& graph, const MeasuredCosts& costs, CostSources* sources);

}  // namespace placement
