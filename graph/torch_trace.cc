#include "graph/torch_trace.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>
#include <tuple>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "graph/json_text.h"
#include "graph/module_map.h"
#include "graph/status_macros.h"

namespace placement {
namespace {

using Json = nlohmann::ordered_json;
constexpr absl::string_view kModulePrefix = "module:";
constexpr absl::string_view kBackwardPrefix = "autograd::engine::evaluate_function: ";
// Keys of the non-module ranges among the self times: never a module path, which has no ':'.
constexpr absl::string_view kBackwardKey = "backward:";
constexpr absl::string_view kOptimizerKey = "optimizer:";

// The key a range is timed under: "path#call" for a module call, kBackwardKey + function for a backward
// function, kOptimizerKey for the optimizer; empty for other ranges.
std::string RangeKey(absl::string_view name) {
  if (absl::ConsumePrefix(&name, kModulePrefix)) return std::string(name);
  if (absl::ConsumePrefix(&name, kBackwardPrefix)) return absl::StrCat(kBackwardKey, name);
  if (absl::StartsWith(name, "Optimizer.step#") || absl::StartsWith(name, "Optimizer.zero_grad#")) {
    return std::string(kOptimizerKey);
  }
  return "";
}

struct Range {
  std::string thread;  // pid/tid
  double start = 0;    // microseconds
  double duration = 0;
  std::string module;        // RangeKey(): "path#call", "backward:<function>", ...; empty for a kernel launch
  int64_t correlation = -1;  // a launch's id, shared with the kernels it started
};

struct TraceEvents {
  std::vector<Range> ranges;                      // module ranges and, on GPU traces, kernel launches
  std::map<int64_t, double> device_microseconds;  // correlation -> time of the device work it started
  int steps = 0;
  double step_microseconds = 0;
};

bool IsDeviceWork(absl::string_view category) {  // Kineto's names, older ("Kernel") and newer ("kernel")
  return absl::EqualsIgnoreCase(category, "kernel") || absl::EqualsIgnoreCase(category, "gpu_memcpy") ||
         absl::EqualsIgnoreCase(category, "gpu_memset") || absl::EqualsIgnoreCase(category, "Memcpy") ||
         absl::EqualsIgnoreCase(category, "Memset");
}

bool IsLaunch(absl::string_view category) {
  return absl::EqualsIgnoreCase(category, "cuda_runtime") || absl::EqualsIgnoreCase(category, "Runtime") ||
         absl::EqualsIgnoreCase(category, "cuda_driver");
}

int64_t Correlation(const Json& e) {
  const Json* args = e.contains("args") && e["args"].is_object() ? &e["args"] : nullptr;
  if (args == nullptr || !args->contains("correlation") || !(*args)["correlation"].is_number()) return -1;
  return (*args)["correlation"].get<int64_t>();
}

absl::Status ReadEvent(const Json& e, size_t i, TraceEvents* out) {
  if (!e.is_object() || e.value("ph", "") != "X") return absl::OkStatus();  // complete events only
  if (!e.contains("name") || !e["name"].is_string() || !e.contains("ts") || !e["ts"].is_number() ||
      !e.contains("dur") || !e["dur"].is_number()) {
    return absl::InvalidArgumentError(absl::StrCat("trace event ", i, ": a complete event needs a name, ts and dur"));
  }
  const std::string name = e["name"].get<std::string>();
  const std::string category = e.contains("cat") && e["cat"].is_string() ? e["cat"].get<std::string>() : "";
  // Kineto repeats each annotated range on the GPU's timeline; the host's range is the one that launches.
  if (absl::EqualsIgnoreCase(category, "gpu_user_annotation")) return absl::OkStatus();
  const double duration = e["dur"].get<double>();
  if (!(duration >= 0)) {
    return absl::InvalidArgumentError(absl::StrCat("trace event ", i, " ('", name, "'): negative duration"));
  }
  if (absl::StartsWith(name, "ProfilerStep#")) {
    ++out->steps;
    out->step_microseconds += duration;
  }
  const std::string thread = absl::StrCat(e.value("pid", Json()).dump(), "/", e.value("tid", Json()).dump());
  if (std::string key = RangeKey(name); !key.empty()) {
    out->ranges.push_back(Range{thread, e["ts"].get<double>(), duration, std::move(key)});
  } else if (IsDeviceWork(category) && Correlation(e) >= 0) {
    out->device_microseconds[Correlation(e)] += duration;
  } else if (IsLaunch(category) && Correlation(e) >= 0) {
    out->ranges.push_back(Range{thread, e["ts"].get<double>(), 0.0, "", Correlation(e)});
  }
  return absl::OkStatus();
}

// Self time of each module call: its range less the ranges of the module calls nested directly inside it. On a
// trace with device work, a module's time is instead that of the kernels launched from its own scope: the host
// only queues them, and the device's time is what a placement spends.
std::map<std::string, double> SelfMicroseconds(TraceEvents events) {
  std::vector<Range>& ranges = events.ranges;
  std::sort(ranges.begin(), ranges.end(), [](const Range& a, const Range& b) {
    return std::tie(a.thread, a.start, b.duration) < std::tie(b.thread, b.start, a.duration);
  });
  const bool device_times = !events.device_microseconds.empty();
  std::map<std::string, double> self;
  std::vector<std::pair<const Range*, double>> open;  // module range, its children's time
  auto close = [&](double until, const std::string& thread) {
    while (!open.empty() &&
           (open.back().first->thread != thread || open.back().first->start + open.back().first->duration <= until)) {
      if (!device_times) self[open.back().first->module] += open.back().first->duration - open.back().second;
      open.pop_back();
    }
  };
  for (const Range& r : ranges) {
    close(r.start, r.thread);
    if (r.module.empty()) {  // a launch: its kernels' time goes to the innermost module around it
      const auto it = events.device_microseconds.find(r.correlation);
      if (!open.empty() && it != events.device_microseconds.end()) self[open.back().first->module] += it->second;
      continue;
    }
    if (device_times) self.emplace(r.module, 0.0);
    if (!open.empty()) open.back().second += r.duration;
    open.emplace_back(&r, 0.0);
  }
  close(1e300, "");
  return self;
}

// "layer1.0.relu_2" -> "relu_2": where a second call's "_k" would be.
std::string LastSegment(const std::string& path) { return path.substr(path.rfind('.') + 1); }

// The trace's key for a scope: "path#0", or "path-without-_k#k" for the k-th call of a module used again.
std::string ModuleKey(const std::string& path, const std::string& last, const ModuleTimes& times) {
  const std::string direct = absl::StrCat(path, "#0");
  if (times.self_seconds.count(direct) > 0) return direct;
  const size_t underscore = last.rfind('_');
  int call = 0;
  if (underscore != std::string::npos && absl::SimpleAtoi(last.substr(underscore + 1), &call)) {
    const std::string base = path.substr(0, path.size() - (last.size() - underscore));
    const std::string key = absl::StrCat(base, "#", call);
    if (times.self_seconds.count(key) > 0) return key;
  }
  return direct;
}

}  // namespace

bool LooksLikeTorchTrace(absl::string_view text) {
  const absl::string_view start = absl::StripLeadingAsciiWhitespace(text);
  if (absl::StartsWith(start, "[")) return start.find("\"ph\"") != absl::string_view::npos;
  return absl::StartsWith(start, "{") && start.substr(0, 4096).find("\"traceEvents\"") != absl::string_view::npos;
}

absl::StatusOr<ModuleTimes> ParseTorchTrace(absl::string_view text) {
  try {
    RETURN_IF_ERROR(CheckJsonText(text, "the trace"));
    const Json root = Json::parse(text.begin(), text.end());
    const Json& events = root.is_object() && root.contains("traceEvents") ? root["traceEvents"] : root;
    if (!events.is_array()) return absl::InvalidArgumentError("the trace has no array of events");
    TraceEvents trace;
    for (size_t i = 0; i < events.size(); ++i) {
      RETURN_IF_ERROR(ReadEvent(events[i], i, &trace));
    }
    if (std::none_of(trace.ranges.begin(), trace.ranges.end(),
                     [](const Range& r) { return !r.module.empty() && r.module.find(':') == std::string::npos; })) {
      return absl::InvalidArgumentError(
          "the trace has no \"module:\" range: record it with scripts/profile_model.py, "
          "which names every module call");
    }
    ModuleTimes times;
    times.steps = trace.steps;
    times.step_seconds = trace.steps > 0 ? trace.step_microseconds / 1e6 / trace.steps : 0;
    times.steps = std::max(times.steps, 1);
    for (const auto& [key, us] : SelfMicroseconds(std::move(trace))) {
      const double seconds = us / 1e6 / times.steps;
      absl::string_view function = key;
      if (key == kOptimizerKey) {
        times.optimizer_seconds = seconds;
      } else if (absl::ConsumePrefix(&function, kBackwardKey)) {
        times.backward_seconds[std::string(function)] = seconds;
      } else {
        times.self_seconds[key] = seconds;
      }
    }
    return times;
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("cannot read the trace: ", e.what()));
  }
}

MeasuredCosts MatchModuleTimes(const Graph& graph, const ModuleTimes& times, const std::string& kind,
                               std::vector<std::string>* warnings) {
  std::map<std::string, std::vector<OpId>> by_module;
  int32_t unmatched = 0;
  std::string first_unmatched;
  for (OpId op = 0; op < graph.num_ops(); ++op) {
    if (graph.is_backward(op)) continue;
    const std::optional<std::string> scope = ModuleScopeOf(graph.name(op));
    const std::string key = scope ? ModuleKey(*scope, LastSegment(*scope), times) : "";
    if (!scope || times.self_seconds.count(key) == 0) {
      if (unmatched++ == 0) first_unmatched = std::string(graph.name(op));
      continue;
    }
    by_module[key].push_back(op);
  }
  MeasuredCosts costs;
  for (const auto& [module, ops] : by_module) {
    double flops = 0, bytes = 0;
    for (OpId op : ops) {
      flops += graph.flops(op);
      bytes += graph.bytes_accessed(op);
    }
    for (OpId op : ops) {
      const double share = flops > 0   ? graph.flops(op) / flops
                           : bytes > 0 ? graph.bytes_accessed(op) / bytes
                                       : 1.0 / static_cast<double>(ops.size());
      costs.times[std::string(graph.name(op))].emplace_back(kind, times.self_seconds.at(module) * share);
    }
  }
  if (unmatched > 0) {
    warnings->push_back(absl::StrCat(unmatched,
                                     " operators have no module in the trace and keep the model's "
                                     "estimate (first: '",
                                     first_unmatched, "')"));
  }
  return costs;
}

}  // namespace placement
