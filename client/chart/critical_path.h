// The critical path of a simulated schedule: the chain of operators and transfers that decided when the step
// ended. Internal to the chart library.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/graph.h"
#include "graph/placement.h"
#include "simulator/simulator.h"

namespace placement::chart {

// Walks back from the operator that ended last. An operator started either when its last input arrived (the
// producer's end on its own device, else the end of the tensor's transfer to it) or when its device became
// free (the previous operator there ended): whichever came later decided, an input on a tie, since a device
// never idles while an operator is ready. A transfer is followed back to its producer; if it queued for a
// link, that wait shows as the gap between the two bars. Returns, per timeline entry, 1 when it is on the path.
// Fails when the timeline does not hold every operator once, or lacks a transfer an edge needs.
absl::StatusOr<std::vector<uint8_t>> CriticalPath(const Graph& graph, const Placement& placement,
                                                  const std::vector<TimelineEntry>& timeline);

}  // namespace placement::chart
