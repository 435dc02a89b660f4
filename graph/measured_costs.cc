#include "graph/measured_costs.h"

#include <cmath>
#include <nlohmann/json.hpp>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "graph/json_text.h"
#include "graph/status_macros.h"
#include "graph/units.h"

namespace placement {
namespace {

using Json = nlohmann::ordered_json;

// Seconds from a JSON number (seconds) or a duration string ("12.5us"); positive and finite.
absl::StatusOr<double> Seconds(const Json& value, const std::string& where) {
  double seconds = 0;
  if (value.is_number()) {
    seconds = value.get<double>();
  } else if (value.is_string()) {
    absl::StatusOr<double> parsed = ParseSeconds(value.get<std::string>());
    if (!parsed.ok()) return absl::InvalidArgumentError(absl::StrCat(where, ": ", parsed.status().message()));
    seconds = *parsed;
  } else {
    return absl::InvalidArgumentError(absl::StrCat(where, ": a time is a number of seconds or a string like \"12us\""));
  }
  if (!std::isfinite(seconds) || seconds < 0) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": the time must be finite and not negative"));
  }
  return seconds;
}

absl::StatusOr<MeasuredCosts> ParseJsonCosts(absl::string_view text) {
  RETURN_IF_ERROR(CheckJsonText(text, "the costs file"));
  const Json root = Json::parse(text.begin(), text.end());
  if (!root.is_object()) {
    return absl::InvalidArgumentError("the costs file is a JSON object: {\"operator\": {\"device kind\": seconds}}");
  }
  MeasuredCosts costs;
  for (const auto& [op, kinds] : root.items()) {
    if (!kinds.is_object() || kinds.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("key '", op, "': an operator maps device kinds to times"));
    }
    for (const auto& [kind, value] : kinds.items()) {
      absl::StatusOr<double> seconds = Seconds(value, absl::StrCat("key '", op, "' / '", kind, "'"));
      if (!seconds.ok()) return seconds.status();
      costs.times[op].emplace_back(kind, *seconds);
    }
  }
  return costs;
}

absl::StatusOr<MeasuredCosts> ParseCsvCosts(absl::string_view text) {
  MeasuredCosts costs;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> cols = absl::StrSplit(line, ',');
    for (std::string& c : cols) c = std::string(absl::StripAsciiWhitespace(c));
    const std::string where = absl::StrCat("line ", line_number);
    if (cols.size() != 3 || cols[0].empty() || cols[1].empty()) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": expected operator,device_kind,seconds"));
    }
    if (costs.times.empty() && absl::AsciiStrToLower(cols[0]) == "operator") continue;  // a header
    double plain = 0;
    absl::StatusOr<double> seconds =
        absl::SimpleAtod(cols[2], &plain) ? Seconds(Json(plain), where) : Seconds(Json(cols[2]), where);
    if (!seconds.ok()) return seconds.status();
    for (const auto& [kind, _] : costs.times[cols[0]]) {
      if (kind == cols[1]) {
        return absl::InvalidArgumentError(
            absl::StrCat(where, ": operator '", cols[0], "' has a time for '", kind, "' already"));
      }
    }
    costs.times[cols[0]].emplace_back(cols[1], *seconds);
  }
  if (costs.times.empty()) return absl::InvalidArgumentError("the costs file lists no operator");
  return costs;
}

}  // namespace

absl::StatusOr<MeasuredCosts> ParseMeasuredCosts(absl::string_view text) {
  const absl::string_view start = absl::StripLeadingAsciiWhitespace(text);
  try {
    return !start.empty() && start[0] == '{' ? ParseJsonCosts(text) : ParseCsvCosts(text);
  } catch (const std::exception& e) {  // nlohmann's exceptions and std::bad_alloc stop here
    return absl::InvalidArgumentError(absl::StrCat("cannot read the costs file: ", e.what()));
  }
}

std::string CostSourcesLine(int32_t measured, int32_t modelled, double measured_flops_share) {
  if (measured == 0) return absl::StrCat("all ", modelled, " operators modelled (no measured times)");
  if (modelled == 0) return absl::StrCat("all ", measured, " operators measured");
  return absl::StrFormat("%d of %d operators measured (%.1f%% of the FLOPs), %d modelled", measured,
                         measured + modelled, 100 * measured_flops_share, modelled);
}

CostSources CountCostSources(const Graph& graph) {
  CostSources sources;
  double flops = 0, measured_flops = 0;
  for (OpId op = 0; op < graph.num_ops(); ++op) {
    const bool measured = !graph.measured(op).empty();
    (measured ? sources.measured_ops : sources.modelled_ops) += 1;
    flops += graph.flops(op);
    if (measured) measured_flops += graph.flops(op);
  }
  sources.measured_flops_share = flops > 0 ? measured_flops / flops : 0;
  return sources;
}

absl::StatusOr<Graph> ApplyMeasuredCosts(const Graph& graph, const MeasuredCosts& costs, CostSources* sources) {
  std::vector<std::string> unknown;
  for (const auto& [name, times] : costs.times) {
    if (graph.FindOp(name) == kNone) unknown.push_back(name);
  }
  absl::StatusOr<Graph> merged = RebuildGraph(graph, [&](OpId, OpSpec& spec) {
    auto it = costs.times.find(spec.name);
    if (it == costs.times.end()) return;
    for (const auto& [kind, seconds] : it->second) {
      bool replaced = false;
      for (auto& [old_kind, old_seconds] : spec.measured_seconds) {
        if (old_kind == kind) {
          old_seconds = seconds;
          replaced = true;
        }
      }
      if (!replaced) spec.measured_seconds.emplace_back(kind, seconds);
    }
  });
  if (!merged.ok()) return merged.status();
  *sources = CountCostSources(*merged);
  if (!unknown.empty()) {
    sources->warnings.push_back(absl::StrCat(unknown.size(), " operator", unknown.size() == 1 ? "" : "s",
                                             " of the costs file the graph does not have (first: '", unknown[0], "')"));
  }
  return merged;
}

}  // namespace placement
