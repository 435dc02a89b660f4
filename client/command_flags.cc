#include "client/command_flags.h"

#include <algorithm>
#include <map>
#include <set>

#include "absl/flags/reflection.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "graph/spelling.h"

namespace placement::cli {
namespace {

using Flags = std::vector<const char*>;

const Flags kGraphLoading = {"batch",
                             "seq",
                             "dim",
                             "allow_unresolved_dims",
                             "num_data_inputs",
                             "loop_iterations",
                             "max_unrolled_nodes",
                             "costs",
                             "costs_kind",
                             "training",
                             "optimizer",
                             "backward_multiplier",
                             "precision",
                             "runtime"};
const Flags kPlacing = {"topology",    "devices",  "algorithm",    "objective",   "cost_model", "deadline", "output",
                        "parallelism", "schedule", "global_batch", "micro_batch", "sharding",   "recompute"};
const Flags kSecurity = {"tls", "tls_ca", "tls_cert", "tls_key", "tls_server_name", "token_file"};
const Flags kPolicy = {"policy_weights", "policy_device", "policy_fallback"};
const Flags kAbsl = {"help",    "helpfull",        "helpshort", "helppackage", "helpon",     "helpmatch",
                     "version", "only_check_args", "flagfile",  "fromenv",     "tryfromenv", "undefok"};

const std::map<std::string, std::vector<Flags>, std::less<>>& Table() {
  static const auto* table = new std::map<std::string, std::vector<Flags>, std::less<>>{
      {"simulate",
       {kGraphLoading,
        kSecurity,
        {"placement", "topology", "devices", "objective", "cost_model", "output", "priority", "simulator", "local",
         "server", "timeout", "chart", "plan"}}},
      {"place", {kGraphLoading, kPlacing, kPolicy, {"seed", "local", "chart", "plan"}}},
      {"submit",
       {kGraphLoading, kPlacing, kSecurity, {"server", "seed", "skip_cache", "progress", "chart", "policy", "plan"}}},
      {"bench",
       {kGraphLoading,
        kPlacing,
        kSecurity,
        {"server", "concurrency", "duration", "requests", "unique_fraction", "warmup", "policy"}}},
      {"algorithms", {kPolicy, kSecurity, {"server", "timeout", "local"}}},
      {"info", {kSecurity, {"server", "output", "timeout"}}},
      {"health", {kSecurity, {"server", "timeout"}}},
      {"import", {kGraphLoading}},
      {"memory", {kGraphLoading, {"topology", "devices", "output"}}},
      {"generate", {{"ops", "seed", "batch", "width", "training"}}},
      {"presets", {}},
      {"calibrate", {{"threads", "kind", "output", "profiles", "measure_seconds", "measurements", "save_measurements"}}},
      {"train",
       {kGraphLoading,
        {"devices", "topology", "seed", "threads", "init", "from_scratch", "out", "validation_share", "time_limit",
         "iterations", "with_inference", "version_name", "learning_rate"}}},
      {"curve", {}},
      {"reload", {kSecurity, {"server", "timeout", "output", "policy", "weights"}}},
      {"help", {}},
  };
  return *table;
}

// "--name=value", "-name" -> "name" as written; "" for what does not start with a dash.
std::string WrittenName(absl::string_view arg) {
  if (!absl::ConsumePrefix(&arg, "-")) return "";
  absl::ConsumePrefix(&arg, "-");
  return std::string(arg.substr(0, arg.find('=')));
}

// "--name=value", "-name", "--noname" -> the flag's registered name, or "" for what is not a flag.
std::string FlagName(absl::string_view arg) {
  const std::string name = WrittenName(arg);
  if (name.empty()) return "";
  if (absl::FindCommandLineFlag(name) != nullptr) return name;
  if (absl::StartsWith(name, "no") && absl::FindCommandLineFlag(name.substr(2)) != nullptr) return name.substr(2);
  return "";
}

// The command the line names: its first operand that is one, or "".
std::string CommandOf(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const absl::string_view arg = argv[i];
    if (arg == "--") break;
    if (!absl::StartsWith(arg, "-") && Table().count(arg) > 0) return std::string(arg);
  }
  return "";
}

// The flags `command` takes with absl's own, or every command's when it is "".
std::vector<std::string> SpellingsFor(absl::string_view command) {
  std::set<std::string> names(kAbsl.begin(), kAbsl.end());
  for (const auto& [name, groups] : Table()) {
    if (!command.empty() && name != command) continue;
    for (const Flags& group : groups) names.insert(group.begin(), group.end());
  }
  return {names.begin(), names.end()};
}

// "--a, --b" or "no flags", for the errors that say what a command takes.
std::string FlagList(absl::string_view command) {
  const std::vector<std::string> flags = FlagsOf(command);
  return flags.empty() ? "no flags" : absl::StrCat("--", absl::StrJoin(flags, ", --"));
}

}  // namespace

std::vector<FlagGiven> FlagsGiven(int argc, char** argv) {
  std::vector<FlagGiven> given;
  for (int i = 1; i < argc; ++i) {
    const absl::string_view arg = argv[i];
    if (arg == "--") break;
    const std::string name = FlagName(arg);
    if (name.empty()) continue;
    FlagGiven flag{name, std::nullopt};
    const size_t equals = arg.find('=');
    if (equals != absl::string_view::npos) {
      flag.value = std::string(arg.substr(equals + 1));
    } else if (!absl::FindCommandLineFlag(name)->IsOfType<bool>() && i + 1 < argc) {
      flag.value = argv[++i];  // absl takes the next argument as the value, whatever it looks like
    }
    given.push_back(std::move(flag));
  }
  return given;
}

absl::Status CheckFlagsKnown(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const absl::string_view arg = argv[i];
    if (arg == "--") break;
    const std::string name = WrittenName(arg);
    // A negative number is a value ("--batch -4", reported by CheckValuesValid), not a flag.
    if (name.empty() || absl::ascii_isdigit(name[0]) || name[0] == '.' || !FlagName(arg).empty()) continue;
    if (std::find(kAbsl.begin(), kAbsl.end(), name) != kAbsl.end()) continue;  // absl's own, not in its registry
    const std::string command = CommandOf(argc, argv);
    const std::string nearest = NearestSpelling(name, SpellingsFor(command));
    return absl::InvalidArgumentError(absl::StrCat(
        "unknown flag --", name,
        !nearest.empty() ? absl::StrCat("; did you mean --", nearest, "?")
        : command.empty() ? "; `placectl help` lists the commands and their flags"
                          : absl::StrCat("; ", command, " takes ", FlagList(command))));
  }
  return absl::OkStatus();
}

std::vector<std::string> FlagsOf(absl::string_view command) {
  const auto it = Table().find(command);
  if (it == Table().end()) return {};
  std::set<std::string> names;
  for (const Flags& group : it->second) names.insert(group.begin(), group.end());
  return {names.begin(), names.end()};
}

absl::Status CheckFlagsApply(absl::string_view command, int argc, char** argv) {
  if (Table().find(command) == Table().end()) return absl::OkStatus();  // the unknown command is reported
  const std::vector<std::string> allowed = FlagsOf(command);
  for (int i = 1; i < argc; ++i) {
    const absl::string_view arg = argv[i];
    if (arg == "--") break;
    const std::string name = FlagName(arg);
    if (name.empty() || std::binary_search(allowed.begin(), allowed.end(), name) ||
        std::find(kAbsl.begin(), kAbsl.end(), name) != kAbsl.end()) {
      continue;
    }
    return absl::InvalidArgumentError(
        absl::StrCat("--", name, " does not apply to ", command, "; ", command, " takes ", FlagList(command)));
  }
  return absl::OkStatus();
}

}  // namespace placement::cli
