// Which build placectl and placectl-torch come from. placectl hands the commands that need LibTorch to the
// placectl-torch beside it (torch_commands.h); a copy of placectl next to a placectl-torch of another build would
// otherwise run that build's code without a word. The identity is a hash of the sources both were built from
// (cmake/build_identity.cmake), handed over in the environment and checked on arrival.
#pragma once

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace placement::cli {

// The environment variable placectl hands its build identity over in.
inline constexpr char kBuildIdentityEnv[] = "PLACECTL_BUILD_IDENTITY";

// This program's build identity (16 hexadecimal digits).
absl::string_view BuildIdentity();

// For a program handed a command: FAILED_PRECONDITION naming both builds when the identity in the environment is
// another build's, OK when it is this build's or none was handed over. Clears the variable either way, so that the
// programs this one starts are not taken for handed-over commands.
absl::Status CheckHandedOverBuild(absl::string_view program);

}  // namespace placement::cli
