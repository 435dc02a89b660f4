// The commands that need LibTorch (the learned policy run in this process, the host calibration, training) and how each
// binary reaches them. placectl-torch links LibTorch and runs them itself (torch_commands_in_process.cc).
// placectl does not link it, so that everything else starts in milliseconds (LibTorch's start-up alone is half
// a second); asked for one of them, it hands its whole command line to placectl-torch beside it (exec), so the
// user sees one program (torch_commands_handoff.cc).
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "client/calibrate_command.h"
#include "client/train_command.h"
#include "policy/registry.h"

namespace placement::cli {

// The moment the user's command started, handed over in the environment across the exec (Unix nanoseconds), so
// that a deadline counts LibTorch's start-up in placectl-torch too.
inline constexpr char kCommandStartedEnv[] = "PLACECTL_COMMAND_STARTED_NS";

// When this command started: the time placectl handed it over, or now when it was not handed over.
absl::Time CommandStarted();

struct PolicyFlags {
  std::string weights;    // empty: the shipped weights
  std::string device;     // auto, cpu or cuda
  bool fallback = false;  // when the weights cannot load, warn and go on without them
};

// The classical placers plus the learned ones, for a command that runs the policy (`argv`: the command line, for
// the handoff). `holder` keeps the registry alive. Errors when the weights do not load unless `fallback`.
absl::StatusOr<const PlacerRegistry*> LoadLearnedRegistry(const PolicyFlags& flags,
                                                          std::unique_ptr<PlacerRegistry>& holder, char** argv);

// `placectl algorithms` with the learned placers in the list.
absl::StatusOr<std::string> ListAlgorithmsWithPolicy(const PolicyFlags& flags);

absl::StatusOr<std::string> RunCalibrateCommand(const CalibrateOptions& options, char** argv);

// placectl train (train_command.h).
absl::StatusOr<std::string> RunTrainCommand(const TrainOptions& options, char** argv);

}  // namespace placement::cli
