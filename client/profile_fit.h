// Refitting a calibrated device on torch.profiler traces of real models, as scripts/profile_model.py records them:
// the forward efficiencies and the per-operator overhead from inference profiles, the backward factors from
// training ones (docs/measured-costs.md).
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/topology.h"

namespace placement::cli {

// Refits `device` on the profile folders, each with model.onnx and trace.json. Returns the report of what was
// fitted; INVALID_ARGUMENT or NOT_FOUND naming the file that cannot be read.
absl::StatusOr<std::string> FitToProfiles(const std::vector<std::string>& folders, Device* device);

}  // namespace placement::cli
