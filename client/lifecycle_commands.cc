#include "client/lifecycle_commands.h"

#include <unistd.h>

#include <iostream>

#include "absl/flags/declare.h"
#include "absl/flags/flag.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "client/exit_codes.h"
#include "client/learning_curve.h"
#include "client/reload_command.h"
#include "client/server_channel.h"
#include "client/torch_commands.h"

ABSL_FLAG(std::string, init, "", "train: the weights to start from (empty: the shipped ones)");
ABSL_FLAG(bool, from_scratch, false, "train: start from random weights instead of --init");
ABSL_FLAG(std::string, out, "policy.pt",
          "train: the weights written (beside them: .json manifest, .tsv learning curve, .svg chart)");
ABSL_FLAG(double, validation_share, 0.2, "train: share of the graphs kept out of training to choose the checkpoint");
ABSL_FLAG(std::string, time_limit, "30m", "train: how long to train (0: --iterations alone)");
ABSL_FLAG(int64_t, iterations, 0, "train: iterations (0: as many as --time_limit allows)");
ABSL_FLAG(bool, with_inference, false, "train: with --training, each model's inference graph too");
ABSL_FLAG(std::string, version_name, "", "train: the version stored in the weights (empty: the start's + -tuned)");
ABSL_FLAG(double, learning_rate, 0, "train: Adam's learning rate (0: 3e-4 from existing weights, 1e-3 from scratch)");
ABSL_FLAG(std::string, weights, "", "reload: a weights file sent to the server (empty: it re-reads its own files)");
ABSL_FLAG(std::string, policy, "",
          "submit, bench: the server's policy to answer with (empty: its default); reload: the one to reload (empty: "
          "every one, or the default with --weights)");

ABSL_DECLARE_FLAG(std::string, devices);
ABSL_DECLARE_FLAG(std::string, topology);
ABSL_DECLARE_FLAG(uint64_t, seed);
ABSL_DECLARE_FLAG(int32_t, threads);
ABSL_DECLARE_FLAG(std::string, server);
ABSL_DECLARE_FLAG(std::string, timeout);
ABSL_DECLARE_FLAG(std::string, output);

namespace placement::cli {
namespace {

int Finish(const std::string& command, const absl::StatusOr<std::string>& out) {
  if (!out.ok()) {
    std::cerr << "placectl " << command << ": " << out.status().message() << "\n";
    return ExitCodeFor(out.status());
  }
  std::cout << *out;
  return kExitOk;
}

int ExitWithUsage(const std::string& why) {
  std::cerr << "placectl: " << why << " (placectl help)\n";
  return kExitUsage;
}

std::vector<std::string> CommaList(const std::string& text) { return absl::StrSplit(text, ',', absl::SkipEmpty()); }

TrainOptions TrainOptionsFromFlags(const std::vector<std::string>& operands, const GraphLoadOptions& load,
                                   char** argv) {
  TrainOptions o;
  o.inputs = operands;
  o.load = load;
  o.with_inference = absl::GetFlag(FLAGS_with_inference);
  o.devices = CommaList(absl::GetFlag(FLAGS_devices));
  o.topologies = CommaList(absl::GetFlag(FLAGS_topology));
  o.init = absl::GetFlag(FLAGS_init);
  o.from_scratch = absl::GetFlag(FLAGS_from_scratch);
  o.out = absl::GetFlag(FLAGS_out);
  o.version = absl::GetFlag(FLAGS_version_name);
  o.validation_share = absl::GetFlag(FLAGS_validation_share);
  o.seed = absl::GetFlag(FLAGS_seed);
  o.threads = absl::GetFlag(FLAGS_threads);
  o.time_limit = absl::GetFlag(FLAGS_time_limit);
  o.iterations = absl::GetFlag(FLAGS_iterations);
  o.learning_rate = absl::GetFlag(FLAGS_learning_rate);
  std::vector<std::string> words;
  for (char** a = argv; *a != nullptr; ++a) words.push_back(*a);
  if (!words.empty()) words[0] = "placectl";
  o.command_line = absl::StrJoin(words, " ");
  o.progress_overwrite = ::isatty(STDERR_FILENO) != 0;
  return o;
}

}  // namespace

std::optional<int> RunLifecycleCommand(const std::string& command, const std::vector<std::string>& operands,
                                       const GraphLoadOptions& load, char** argv) {
  if (command == "train") {
    if (operands.empty()) return ExitWithUsage("train takes one or more GRAPHs or folders of them");
    return Finish(command, RunTrainCommand(TrainOptionsFromFlags(operands, load, argv), argv));
  }
  if (command == "curve") {
    if (operands.size() != 2) return ExitWithUsage("curve takes a TSV and the SVG to write");
    return Finish(command, RunCurve(operands[0], operands[1]));
  }
  if (command == "reload") {
    if (!operands.empty()) return ExitWithUsage("reload takes no arguments (--policy NAME, --weights FILE)");
    ReloadOptions o;
    o.server = absl::GetFlag(FLAGS_server).empty() ? kDefaultServer : absl::GetFlag(FLAGS_server);
    o.policy = absl::GetFlag(FLAGS_policy);
    o.weights = absl::GetFlag(FLAGS_weights);
    o.timeout = absl::GetFlag(FLAGS_timeout);
    o.output = absl::GetFlag(FLAGS_output);
    return Finish(command, RunReload(o));
  }
  return std::nullopt;
}

}  // namespace placement::cli
