// placectl-torch: the learned policy and the calibration in this process.
#include <iostream>

#include "client/place_command.h"
#include "client/torch_commands.h"
#include "policy/learned/learned_placers.h"
#include "policy/learned/learned_policy.h"
#include "policy/learned/weights_path.h"
#include "policy/placer_families.h"

namespace placement::cli {

absl::StatusOr<const PlacerRegistry*> LoadLearnedRegistry(const PolicyFlags& flags,
                                                          std::unique_ptr<PlacerRegistry>& holder, char** /*argv*/) {
  const std::string weights = flags.weights.empty() ? learned::DefaultPolicyWeights() : flags.weights;
  absl::StatusOr<std::shared_ptr<const learned::LearnedPolicy>> policy =
      learned::LearnedPolicy::Load(weights, flags.device);
  if (!policy.ok()) {
    if (!flags.fallback) return policy.status();
    std::cerr << "placectl: " << policy.status().message() << "; going on without the learned policy\n";
    return &DefaultPlacerRegistry();
  }
  holder = learned::MakeRegistryWithPolicy(*policy);
  return holder.get();
}

absl::StatusOr<std::string> ListAlgorithmsWithPolicy(const PolicyFlags& flags) {
  std::unique_ptr<PlacerRegistry> holder;
  absl::StatusOr<const PlacerRegistry*> registry = LoadLearnedRegistry(flags, holder, nullptr);
  if (!registry.ok()) return registry.status();
  return ListAlgorithms(*registry);
}

absl::StatusOr<std::string> RunCalibrateCommand(const CalibrateOptions& options, char** /*argv*/) {
  return RunCalibrate(options);
}

absl::StatusOr<std::string> RunTrainCommand(const TrainOptions& options, char** /*argv*/) { return RunTrain(options); }

}  // namespace placement::cli
