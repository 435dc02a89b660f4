#include "graph/placement_json.h"

#include <nlohmann/json.hpp>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"
#include "graph/tarnawski.h"

namespace placement {
namespace {

using json = nlohmann::json;

absl::Status Assign(const Graph& graph, const Topology& topology, const json& op, const json& device,
                    absl::string_view where, Placement& placement) {
  if (!op.is_string() || !device.is_string()) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": operator and device must be strings"));
  }
  const OpId id = graph.FindOp(op.get<std::string>());
  if (id == kNone)
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": operator '", op.get<std::string>(), "' is not in the graph"));
  const DeviceId d = topology.FindDevice(device.get<std::string>());
  if (d < 0)
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": device '", device.get<std::string>(), "' is not in the topology"));
  if (placement.device[id] >= 0)
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": operator '", op.get<std::string>(), "' is assigned twice"));
  placement.device[id] = d;
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Placement> ParsePlacementJson(absl::string_view json_text, const Graph& graph,
                                             const Topology& topology) {
  if (LooksLikeTarnawskiSplit(json_text)) return ParseTarnawskiSplit(json_text, graph, topology);
  json doc = json::parse(json_text.begin(), json_text.end(), nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return absl::InvalidArgumentError("the placement is not valid JSON");
  if (!doc.is_object() || !doc.contains("assignment")) {
    return absl::InvalidArgumentError(
        "the placement must be an object with an 'assignment' (or a Tarnawski split with 'fpgas')");
  }
  Placement placement;
  placement.device.assign(graph.num_ops(), -1);
  const json& assignment = doc["assignment"];
  if (assignment.is_object()) {
    for (auto it = assignment.begin(); it != assignment.end(); ++it) {
      RETURN_IF_ERROR(
          Assign(graph, topology, json(it.key()), it.value(), absl::StrCat("assignment['", it.key(), "']"), placement));
    }
  } else if (assignment.is_array()) {
    for (size_t i = 0; i < assignment.size(); ++i) {
      const json& entry = assignment[i];
      const std::string where = absl::StrCat("assignment[", i, "]");
      if (!entry.is_object() || !entry.contains("op") || !entry.contains("device")) {
        return absl::InvalidArgumentError(absl::StrCat(where, " must be an object with 'op' and 'device'"));
      }
      RETURN_IF_ERROR(Assign(graph, topology, entry["op"], entry["device"], where, placement));
    }
  } else {
    return absl::InvalidArgumentError("'assignment' must be an object or an array");
  }
  for (OpId op = 0; op < graph.num_ops(); ++op) {
    if (placement.device[op] < 0) {
      return absl::InvalidArgumentError(absl::StrCat("the placement does not assign operator '", graph.name(op), "'"));
    }
  }
  return placement;
}

}  // namespace placement
