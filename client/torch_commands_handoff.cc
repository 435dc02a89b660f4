// placectl: the commands that need LibTorch are handed to placectl-torch, which runs the same command line.
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "client/build_identity.h"
#include "client/place_command.h"
#include "client/torch_commands.h"
#include "policy/learned/learned_placer_info.h"
#include "policy/placer_families.h"

namespace placement::cli {
namespace {

constexpr char kTorchProgram[] = "placectl-torch";

// placectl-torch in the folder of this binary.
std::string TorchProgramPath() {
  char self[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (n <= 0) return kTorchProgram;
  self[n] = '\0';
  return (std::filesystem::path(self).parent_path() / kTorchProgram).string();
}

// Replaces this process with placectl-torch running `argv`; returns only when that fails.
absl::Status HandOff(char** argv, absl::string_view what) {
  const std::string program = TorchProgramPath();
  if (::access(program.c_str(), X_OK) != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        what, " needs LibTorch, which runs in ", kTorchProgram, " beside placectl: ", program,
        " is not there (install it, or run without the learned policy: --policy_device=none, or a classical "
        "--algorithm from `placectl algorithms`)"));
  }
  argv[0] = const_cast<char*>(program.c_str());
  ::setenv(kCommandStartedEnv, absl::StrCat(absl::ToUnixNanos(CommandStarted())).c_str(), /*overwrite=*/1);
  ::setenv(kBuildIdentityEnv, std::string(BuildIdentity()).c_str(), /*overwrite=*/1);
  ::execv(program.c_str(), argv);
  return absl::InternalError(absl::StrCat("cannot run ", program, ": ", std::strerror(errno)));
}

}  // namespace

absl::StatusOr<const PlacerRegistry*> LoadLearnedRegistry(const PolicyFlags& /*flags*/,
                                                          std::unique_ptr<PlacerRegistry>& /*holder*/, char** argv) {
  return HandOff(argv, "the learned policy");
}

absl::StatusOr<std::string> ListAlgorithmsWithPolicy(const PolicyFlags& /*flags*/) {
  // The list needs no policy: the learned placers are listed by name; they load it when they run.
  std::string listed = ListAlgorithms(&DefaultPlacerRegistry());
  const size_t auto_row = listed.find("\nauto ");
  std::string learned;
  for (const learned::LearnedPlacerInfo& info : learned::LearnedPlacerInfos()) {
    std::string objectives;
    for (Objective o : info.objectives) absl::StrAppend(&objectives, objectives.empty() ? "" : ",", ObjectiveName(o));
    absl::StrAppend(&learned, absl::StrFormat("%-16s %-28s %s\n", info.name, objectives, info.description));
  }
  if (auto_row == std::string::npos) return absl::StrCat(listed, learned);
  return absl::StrCat(listed.substr(0, auto_row + 1), learned, listed.substr(auto_row + 1));
}

absl::StatusOr<std::string> RunCalibrateCommand(const CalibrateOptions& /*options*/, char** argv) {
  return HandOff(argv, "calibrate");
}

}  // namespace placement::cli

namespace placement::cli {

absl::StatusOr<std::string> RunTrainCommand(const TrainOptions& /*options*/, char** argv) {
  return HandOff(argv, "train");
}

}  // namespace placement::cli
