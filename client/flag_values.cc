#include "client/flag_values.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <vector>

#include "absl/flags/marshalling.h"
#include "absl/flags/reflection.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "client/command_flags.h"
#include "graph/cluster_shape.h"
#include "graph/precision.h"
#include "graph/spelling.h"
#include "graph/topology_json.h"
#include "graph/training.h"
#include "graph/usage_error.h"
#include "policy/learned/learned_placer_info.h"
#include "policy/placer.h"
#include "policy/placer_families.h"
#include "simulator/objectives.h"
#include "simulator/parallel_plan.h"

namespace placement::cli {
namespace {

using Words = std::vector<std::string>;

// A flag that takes one of a few words. Where the word's owner has a parser, it decides (and its message lists what
// it takes); the words are what `placectl help` names, from which the nearest is suggested.
struct Choice {
  Words words;
  absl::Status (*parse)(absl::string_view) = nullptr;  // null: one of the words
  const char* only_for = nullptr;  // the one command the flag means these words for; null: every command
  const char* except = nullptr;    // a command the flag means something else for
};

// The owner's parser of an enumerated flag, for a Choice.
template <auto Parse>
absl::Status Parses(absl::string_view word) {
  return Parse(word).status();
}

// place's --parallelism auto weighs the others; the server answers it too. tensor: a transformer's config.json.
// The placers' own parser knows neither, so its message would leave them out of what the flag takes.
absl::Status ParallelismParses(absl::string_view word) {
  if (word == "auto" || word == "tensor" || ParseParallelism(word).ok()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("unknown parallelism '", word,
                                                 "'; known: auto, operator, data, pipeline, hybrid, tensor (tensor: "
                                                 "a transformer's config.json)"));
}

// The placers `place` runs: the classical ones, the learned ones (loaded only when one runs) and auto.
Words PlacerNames() {
  Words names;
  for (const Placer* p : DefaultPlacerRegistry().All()) names.emplace_back(p->name());
  for (const learned::LearnedPlacerInfo& info : learned::LearnedPlacerInfos()) names.emplace_back(info.name);
  return names;
}

const std::map<std::string, Choice, std::less<>>& Choices() {
  static const auto* choices = new std::map<std::string, Choice, std::less<>>{
      {"objective", {{"step_time", "throughput", "latency"}, &Parses<ParseObjective>}},
      {"cost_model", {{"default", "tarnawski", "pipedream"}, &Parses<ParseCostModel>}},
      {"output", {{"table", "json"}, nullptr, nullptr, "calibrate"}},  // calibrate's names a file
      {"priority", {{"topological", "upward_rank"}}},
      {"simulator", {{"default", "placeto"}}},
      {"parallelism", {{"auto", "operator", "data", "pipeline", "hybrid", "tensor"}, &ParallelismParses}},
      {"schedule", {{"1f1b", "gpipe"}, &Parses<ParseSchedule>}},
      {"sharding", {{"none", "zero1", "zero2", "zero3", "fsdp"}, &Parses<ParseSharding>}},
      {"recompute", {{"none", "full"}, &Parses<ParseRecompute>}},
      {"precision", {{"fp32", "tf32", "amp_bf16", "amp_fp16", "bf16", "fp16"}, &Parses<ParsePrecision>}},
      {"runtime", {{"eager", "graphs"}}},
      {"optimizer", {{"sgd", "momentum", "adam"}, &Parses<ParseOptimizer>}},
      {"policy_device", {{"auto", "cpu", "cuda", "none"}}},
      // The server's placers are its own to name: only place's are checked here.
      {"algorithm", {PlacerNames(), nullptr, "place"}},
  };
  return *choices;
}

absl::Status CheckChoice(absl::string_view command, const std::string& flag, const Choice& choice,
                         const std::string& value) {
  if ((choice.only_for != nullptr && command != choice.only_for) ||
      (choice.except != nullptr && command == choice.except)) {
    return absl::OkStatus();
  }
  const Words& words = choice.words;
  const absl::Status parsed =
      choice.parse != nullptr ? choice.parse(value)
      : std::find(words.begin(), words.end(), value) != words.end()
          ? absl::OkStatus()
          : absl::InvalidArgumentError(absl::StrCat("'", value, "' is not one of ", absl::StrJoin(words, ", ")));
  if (parsed.ok()) return parsed;
  const std::string nearest = NearestSpelling(absl::AsciiStrToLower(value), words);
  return UsageError(absl::StrCat("--", flag, choice.parse != nullptr ? ": " : " ", parsed.message(),
                                 nearest.empty() ? "" : absl::StrCat("; did you mean ", nearest, "?")));
}

// A number a flag takes: `ok` says whether it is one, `what` what it should be ("--batch 0 is not a positive count").
struct Range {
  bool (*ok)(double);
  const char* what;
};

const std::map<std::string, Range, std::less<>>& Ranges() {
  // 0 or -1 stands for "not given" in several of these flags' defaults: such a value given would be silently
  // replaced by the default, so a range takes it only where the flag's help says what it means.
  static const auto* ranges = new std::map<std::string, Range, std::less<>>{
      {"batch", {[](double v) { return v >= 1; }, "a positive count of samples"}},
      {"seq", {[](double v) { return v >= 1; }, "a positive count"}},
      {"micro_batch", {[](double v) { return v >= 1; }, "a positive count"}},
      {"global_batch", {[](double v) { return v >= 0; }, "a count of micro-batches (0: none)"}},
      {"ops", {[](double v) { return v >= 2; }, "a count of at least 2 operators"}},
      {"width", {[](double v) { return v >= 1; }, "a positive width"}},
      {"threads", {[](double v) { return v >= 1; }, "a positive count of threads"}},
      {"concurrency", {[](double v) { return v >= 1 && v <= 4096; }, "in 1..4096"}},
      {"requests", {[](double v) { return v >= 0; }, "a count (0: run for --duration)"}},
      {"unique_fraction", {[](double v) { return v >= 0 && v <= 1; }, "a fraction in 0..1"}},
      {"validation_share", {[](double v) { return v >= 0 && v < 1; }, "a share in [0, 1)"}},
      {"iterations", {[](double v) { return v >= 0; }, "a count (0: as many as --time_limit allows)"}},
      {"learning_rate", {[](double v) { return v >= 0 && std::isfinite(v); }, "a rate (0: the default)"}},
      {"num_data_inputs", {[](double v) { return v >= -1; }, "a count (-1: decide)"}},
      {"loop_iterations", {[](double v) { return v >= 0; }, "a count (0: the default, 8)"}},
      {"max_unrolled_nodes", {[](double v) { return v >= 0; }, "a count (0: the default, 20000)"}},
      {"backward_multiplier", {[](double v) { return v >= 0 && std::isfinite(v); }, "a multiple of 0 or more"}},
      {"measure_seconds", {[](double v) { return v > 0 && v <= 10; }, "in (0, 10] seconds"}},
  };
  return *ranges;
}

absl::Status CheckDuration(const std::string& flag, const std::string& value) {
  if (flag == "time_limit") {  // 0: --iterations alone
    absl::Duration d;
    if (absl::ParseDuration(value, &d) && d >= absl::ZeroDuration()) return absl::OkStatus();
    return UsageError(absl::StrCat("--time_limit '", value, "' is not a duration such as 30m (0: --iterations alone)"));
  }
  return ParsePositiveDuration(flag, value).status();
}

// Each cluster of the list (train takes several).
absl::Status CheckDevices(const std::string& value) {
  for (absl::string_view cluster : absl::StrSplit(value, ',')) {
    // A cluster past a Topology's size is still a shape a transformer plan reads (graph/cluster_shape.h); the
    // commands that need a Topology refuse it with the same words.
    if (absl::Status s = ParseTopologyShorthand(cluster).status(); !s.ok() && !ParseClusterShape(cluster).ok()) {
      return UsageError(absl::StrCat("--devices: ", s.message()));
    }
  }
  return absl::OkStatus();
}

// One flag given on the line, with the value absl parsed.
absl::Status CheckValue(absl::string_view command, const std::string& flag) {
  const std::string value = absl::FindCommandLineFlag(flag)->CurrentValue();
  if (const auto choice = Choices().find(flag); choice != Choices().end()) {
    return CheckChoice(command, flag, choice->second, value);
  }
  if (const auto range = Ranges().find(flag); range != Ranges().end()) {
    double number = 0;
    if (absl::SimpleAtod(value, &number) && range->second.ok(number)) return absl::OkStatus();
    return UsageError(absl::StrCat("--", flag, " ", value, " is not ", range->second.what));
  }
  if (flag == "deadline" || flag == "timeout" || flag == "duration" || flag == "time_limit") {
    return CheckDuration(flag, value);
  }
  if (flag == "devices" && !value.empty()) return CheckDevices(value);
  return absl::OkStatus();
}

template <typename T>
bool ParsesAs(absl::string_view text) {
  T value;
  std::string error;
  return absl::ParseFlag(text, &value, &error);
}

// What a value of the flag's type looks like, when `text` is not one; "" when it is (or any text is).
std::string TypeMismatch(const absl::CommandLineFlag& flag, absl::string_view text) {
  if (flag.IsOfType<bool>()) return ParsesAs<bool>(text) ? "" : "true or false";
  if (flag.IsOfType<int32_t>()) return ParsesAs<int32_t>(text) ? "" : "a whole number";
  if (flag.IsOfType<int64_t>()) return ParsesAs<int64_t>(text) ? "" : "a whole number";
  if (flag.IsOfType<uint64_t>()) return ParsesAs<uint64_t>(text) ? "" : "a whole number of 0 or more";
  if (flag.IsOfType<double>()) return ParsesAs<double>(text) ? "" : "a number";
  return "";
}

}  // namespace

absl::Status CheckValuesTyped(int argc, char** argv) {
  for (const FlagGiven& given : FlagsGiven(argc, argv)) {
    const absl::CommandLineFlag& flag = *absl::FindCommandLineFlag(given.name);
    if (!given.value.has_value()) {
      if (flag.IsOfType<bool>()) continue;
      return UsageError(absl::StrCat("--", given.name, " needs a value"));
    }
    const std::string mismatch = TypeMismatch(flag, *given.value);
    if (!mismatch.empty()) {
      return UsageError(absl::StrCat("--", given.name, " '", *given.value, "' is not ", mismatch));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckValuesValid(absl::string_view command, int argc, char** argv) {
  std::vector<std::string> names;  // the line's flags in its order, then those set otherwise (--flagfile, --fromenv)
  for (const FlagGiven& given : FlagsGiven(argc, argv)) names.push_back(given.name);
  for (const auto& [name, flag] : absl::GetAllFlags()) {
    if (flag->CurrentValue() != flag->DefaultValue() && std::find(names.begin(), names.end(), name) == names.end()) {
      names.emplace_back(name);
    }
  }
  for (const std::string& name : names) {
    if (absl::Status s = CheckValue(command, name); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::StatusOr<absl::Duration> ParsePositiveDuration(const std::string& flag, const std::string& text) {
  absl::Duration d;
  if (!absl::ParseDuration(text, &d) || d <= absl::ZeroDuration()) {
    return UsageError(absl::StrCat("--", flag, " '", text, "' is not a positive duration such as 500ms, 2s or 1m"));
  }
  return d;
}

}  // namespace placement::cli
