// The learned policies of placement_server, set up before it starts: the default one (--policy_weights) and any
// named ones (--policy NAME=FILE) loaded on their device and checked (missing or corrupt weights stop the start
// with the reason, unless --policy_fallback), the loader later reloads read files with (ReloadPolicy, SIGHUP),
// and the device loader the server calls when it turns ready. placement_server links the LibTorch implementation
// (policy_setup_learned.cc); placement_server_classic, for clusters that want no LibTorch in their image, links the
// one without it (policy_setup_classic.cc), which serves the classical placers and AUTO.
#pragma once

#include "absl/status/status.h"
#include "server/server.h"

namespace placement::server {

// Fills options->policies, policy_specs, policy_file_loader and policy_loader (and may set policy_device to
// "none"). A non-OK status is why the server must not start, for the operator.
absl::Status SetUpPolicy(ServerOptions* options);

}  // namespace placement::server
