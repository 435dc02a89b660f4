// Placement files: our own {"assignment": {"op": "device", ...}} (also a list of {"op", "device"} objects, the
// form `placectl --output json` prints, so an answer can be fed back) or a Tarnawski expert split.
#pragma once

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/placement.h"

namespace placement {

absl::StatusOr<Placement> ParsePlacementJson(absl::string_view json_text, const Graph& graph, const Topology& topology);

}  // namespace placement
