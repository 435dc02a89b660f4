// Where the shipped weights are found when no path is given: models/placement_policy.pt under the working
// directory (a checkout, the container's /app), next to the binary's install prefix (share/placement/models),
// or under the source tree the binary was built from (build trees, tests, `./placement demo`).
#pragma once

#include <string>

namespace placement::learned {

inline constexpr char kShippedWeights[] = "models/placement_policy.pt";

// The first of those that exists; the working-directory one when none does (so the error names it).
std::string DefaultPolicyWeights();

}  // namespace placement::learned
