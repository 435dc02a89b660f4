// A placement: the device of every operator.
#pragma once

#include <vector>

#include "absl/status/status.h"
#include "graph/cost_model.h"
#include "graph/graph.h"
#include "graph/topology.h"

namespace placement {

struct Placement {
  std::vector<DeviceId> device;  // indexed by OpId
};

// Checks that every operator has a device of the topology that can run it, that pinned operators sit on
// their device and that every colocation group shares one device. Memory is not checked here: that is the
// simulator's job, since whether a placement fits depends on the objective's memory model.
absl::Status ValidatePlacement(const CostModel& costs, const Placement& placement);

}  // namespace placement
