// placement_server_classic: no LibTorch, so no learned policy; the classical placers and AUTO serve.
#include "absl/strings/str_cat.h"
#include "server/policy_setup.h"
#include "server/request_log.h"

namespace placement::server {

absl::Status SetUpPolicy(ServerOptions* options) {
  if (options->policy_device == "cpu" || options->policy_device == "cuda" || !options->named_policies.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        options->named_policies.empty() ? absl::StrCat("--policy_device=", options->policy_device) : "--policy",
        ": this placement_server is built without the learned policy (no LibTorch); run the full image for it, or "
        "--policy_device=none"));
  }
  if (options->policy_device != "none") LogLine("", "built without the learned policy: serving the classical placers");
  options->policy_device = "none";
  return absl::OkStatus();
}

}  // namespace placement::server
