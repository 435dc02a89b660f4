// placement_server: the learned policy with LibTorch.
#include "absl/strings/str_cat.h"
#include "policy/learned/learned_placers.h"
#include "policy/learned/learned_policy.h"
#include "policy/learned/torch_device.h"
#include "policy/learned/weights_path.h"
#include "server/policy_setup.h"
#include "server/request_log.h"

namespace placement::server {

absl::Status SetUpPolicy(ServerOptions* options, PolicyHolder* holder) {
  // Requests already run in parallel, one worker per core; intra-op threads on top of them only wait for a core
  // (a forward pass went from milliseconds to half a second with two OpenMP threads on a busy 2-core host).
  if (absl::Status s = learned::SetTorchThreads(1); !s.ok() && options->policy_device != "none") {
    return absl::Status(s.code(), absl::StrCat(s.message(), " (--policy_device=none serves without the policy)"));
  }
  std::shared_ptr<const learned::LearnedPolicy> policy;
  if (options->policy_device != "none") {
    const std::string weights = options->policy_weights.empty() ? learned::DefaultPolicyWeights() : options->policy_weights;
    absl::StatusOr<std::shared_ptr<const learned::LearnedPolicy>> loaded =
        learned::LearnedPolicy::Load(weights, options->policy_device);
    if (loaded.ok()) {
      policy = *std::move(loaded);
      holder->registry = learned::MakeRegistryWithPolicy(policy);
      LogLine("", absl::StrCat("policy ", policy->version(), " loaded from ", weights, " on ", policy->device()));
    } else if (options->policy_fallback && loaded.status().code() != absl::StatusCode::kFailedPrecondition) {
      LogLine("", absl::StrCat("policy not loaded (", loaded.status().message(),
                               "); --policy_fallback: serving AUTO without it"));
    } else {
      return absl::Status(loaded.status().code(),
                          absl::StrCat(loaded.status().message(),
                                       options->policy_fallback ? "" : " (--policy_fallback serves without the policy)"));
    }
  }
  holder->policy = policy;
  options->policy_loader = [policy, reg = holder->registry.get()](
                               const std::string& preference) -> absl::StatusOr<PolicyRuntime> {
    absl::StatusOr<learned::TorchRuntime> runtime = learned::SelectTorchDevice(preference);
    if (!runtime.ok()) return runtime.status();
    if (policy == nullptr) return PolicyRuntime{runtime->device, runtime->torch_version, "", nullptr};
    return PolicyRuntime{policy->device(), runtime->torch_version, policy->version(), reg};
  };
  return absl::OkStatus();
}

}  // namespace placement::server
