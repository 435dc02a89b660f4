// placectl reload: swaps a server's learned-policy weights without a restart (the ReloadPolicy RPC, which needs
// the server's admin token: --token_file or $PLACEMENT_AUTH_TOKEN). With --weights FILE the file's bytes are sent
// as the new weights of --policy (the default one when not given); without, the server reads its policies' own
// files again, as on SIGHUP.
#pragma once

#include <string>

#include "absl/status/statusor.h"

namespace placement::cli {

struct ReloadOptions {
  std::string server;
  std::string policy;   // "" = every served policy, or the default one with weights
  std::string weights;  // a local weights file to send; "" = the server re-reads its files
  std::string timeout = "30s";
  std::string output = "table";  // table | json
};

absl::StatusOr<std::string> RunReload(const ReloadOptions& options);

}  // namespace placement::cli
