// What the learned placers are, without LibTorch: their names, what they do and the objectives they optimize.
// learned_placers.cc registers them under these names; placectl lists them without loading the policy (the
// policy, and LibTorch with it, loads only in placectl-torch, when a command runs it).
#pragma once

#include <vector>

#include "absl/strings/string_view.h"
#include "simulator/objectives.h"

namespace placement::learned {

struct LearnedPlacerInfo {
  absl::string_view name;
  absl::string_view description;
  std::vector<Objective> objectives;
};

enum class LearnedPlacerKind : int { kSingleShot = 0, kIterative = 1, kSearch = 2, kFinetune = 3 };

// In registration order, indexed by LearnedPlacerKind.
const std::vector<LearnedPlacerInfo>& LearnedPlacerInfos();
const LearnedPlacerInfo& InfoOf(LearnedPlacerKind kind);

// Whether `algorithm` (a placer name, "" or "auto") runs the learned policy when one is loaded: the learned
// placers themselves, and AUTO, whose portfolio starts from them.
bool RunsLearnedPolicy(absl::string_view algorithm);

}  // namespace placement::learned
