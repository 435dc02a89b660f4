// The server's command line, in one table (server_flags.cc), and the options it makes.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "server/server.h"

namespace placement::server {

// `--config FILE` is a flag file in absl's --flagfile format (one --name=value per line, '#' comments). Its
// flags come first, so flags given on the command line win over it. Returns argv with every --config turned
// into a leading --flagfile, ready for absl::ParseCommandLine.
std::vector<char*> ExpandConfigFlag(int argc, char** argv, std::vector<std::string>* storage);

// The options the parsed flags describe; INVALID_ARGUMENT for values out of range.
absl::StatusOr<ServerOptions> OptionsFromFlags();

// --policy's NAME=FILE items; INVALID_ARGUMENT naming an item that is not one, a name given twice, or "default"
// (the --policy_weights policy's name).
absl::StatusOr<std::vector<PolicySpec>> ParsePolicySpecs(const std::vector<std::string>& items);

// --grace_period: how long SIGTERM/SIGINT lets calls in flight finish.
absl::Duration GracePeriodFromFlags();

}  // namespace placement::server
