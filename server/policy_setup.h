// The learned policy of placement_server, set up before it starts: the weights loaded on their device (missing or
// corrupt weights stop the start with the reason, unless --policy_fallback), and the loader the server calls
// when it turns ready. placement_server links the LibTorch implementation (policy_setup_learned.cc);
// placement_server_classic, for clusters that want no LibTorch in their image, links the one without it
// (policy_setup_classic.cc), which serves the classical placers and AUTO.
#pragma once

#include <memory>

#include "absl/status/status.h"
#include "policy/registry.h"
#include "server/server.h"

namespace placement::server {

// What the loader refers to, kept alive for the server's life.
struct PolicyHolder {
  std::shared_ptr<const void> policy;
  std::unique_ptr<PlacerRegistry> registry;
};

// Fills options->policy_loader (and may set policy_device to "none"). A non-OK status is why the server must not
// start, for the operator.
absl::Status SetUpPolicy(ServerOptions* options, PolicyHolder* holder);

}  // namespace placement::server
