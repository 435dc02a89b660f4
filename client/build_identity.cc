#include "client/build_identity.h"

#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "client/build_identity_generated.h"

namespace placement::cli {

absl::string_view BuildIdentity() { return kGeneratedBuildIdentity; }

absl::Status CheckHandedOverBuild(absl::string_view program) {
  const char* handed = std::getenv(kBuildIdentityEnv);
  if (handed == nullptr) return absl::OkStatus();
  const std::string from(handed);
  ::unsetenv(kBuildIdentityEnv);
  if (from == BuildIdentity()) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      program, " is from another build (", BuildIdentity(), ") than the placectl that handed it this command (", from,
      "): install placectl and placectl-torch from one build, side by side"));
}

}  // namespace placement::cli
