// The cluster shorthand: "4xA100", "2x8xH100", "8xV100+1xCPU".
#include <algorithm>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "graph/cluster_shape.h"
#include "graph/device_presets.h"
#include "graph/measured_presets.h"
#include "graph/topology_json.h"

namespace placement {
namespace {

// Shorthand: one '+' term, "[hosts x] [count x] preset".
struct Term {
  int64_t hosts = 1;
  int64_t count = 1;
  const DevicePreset* preset = nullptr;
};

absl::StatusOr<Term> ParseTerm(absl::string_view term, int64_t max_devices = kMaxTopologyDevices) {
  const auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat("bad topology term '", term, "': ", why));
  };
  std::vector<int64_t> counts;
  absl::string_view rest = term;
  while (!rest.empty() && absl::ascii_isdigit(static_cast<unsigned char>(rest[0]))) {
    size_t digits = 0;
    int64_t value = 0;
    while (digits < rest.size() && absl::ascii_isdigit(static_cast<unsigned char>(rest[digits]))) {
      if (digits >= 9) return bad(absl::StrCat("more than ", max_devices, " devices"));
      value = value * 10 + (rest[digits++] - '0');
    }
    if (digits == rest.size() || (rest[digits] != 'x' && rest[digits] != 'X')) {
      return bad(absl::StrCat("expected 'x' after the count ", value));
    }
    if (value == 0) return bad("counts must be at least 1");
    counts.push_back(value);
    rest.remove_prefix(digits + 1);
  }
  if (!rest.empty() && (rest[0] == '-' || rest[0] == '+' || rest[0] == '.'))
    return bad("counts must be whole numbers from 1");
  if (counts.size() > 2) return bad("expected COUNTxPRESET or HOSTSxCOUNTxPRESET");
  if (rest.empty()) return bad(term.empty() ? "it is empty" : "no device preset after the last 'x'");
  absl::StatusOr<const DevicePreset*> preset = FindDevicePreset(rest);
  if (!preset.ok()) {
    return bad(absl::StrCat(preset.status().message(), counts.empty() && (rest[0] == 'x' || rest[0] == 'X')
                                                           ? " (a count must come before 'x')"
                                                           : ""));
  }
  Term t;
  t.preset = *preset;
  if (counts.size() == 2) t.hosts = counts[0];
  if (!counts.empty()) t.count = counts.back();
  if (t.hosts > max_devices || t.count > max_devices || t.hosts * t.count > max_devices) {
    return bad(absl::StrCat("more than ", max_devices, " devices"));
  }
  return t;
}

std::string TermText(const Term& t, bool with_hosts) {
  return absl::StrCat(with_hosts ? absl::StrCat(t.hosts, "x") : "", t.count, "x", t.preset->name);
}

// The datasheet's description of each preset named, once each, in the order named.
std::string DatasheetDescription(const std::vector<Term>& terms) {
  std::vector<std::string> lines;
  for (const Term& t : terms) {
    std::string line = DatasheetRates(*t.preset).description;
    if (std::find(lines.begin(), lines.end(), line) == lines.end()) lines.push_back(std::move(line));
  }
  return absl::StrJoin(lines, "; ");
}

}  // namespace

absl::StatusOr<Topology> ParseTopologyShorthand(absl::string_view text) {
  std::string compact;
  for (char c : text) {
    if (!absl::ascii_isspace(static_cast<unsigned char>(c))) compact.push_back(c);
  }
  if (compact.empty()) {
    return absl::InvalidArgumentError("empty topology; expected e.g. 8xH100, 2x8xA100 or 4xV100+1xCPU");
  }
  std::vector<Term> terms;
  int64_t per_host = 0;
  for (absl::string_view part : absl::StrSplit(compact, '+')) {
    absl::StatusOr<Term> t = ParseTerm(part);
    if (!t.ok()) return t.status();
    if (!terms.empty() && t->hosts != terms.front().hosts) {
      return absl::InvalidArgumentError(absl::StrCat(
          "'+' joins devices of the same hosts, so every term must name the same number of hosts: '",
          TermText(terms.front(), true), "' has ", terms.front().hosts, " and '", part, "' has ", t->hosts));
    }
    per_host += t->count;
    if (per_host * t->hosts > kMaxTopologyDevices) {
      return absl::InvalidArgumentError(
          absl::StrCat("topology '", text, "' has more than ", kMaxTopologyDevices, " devices"));
    }
    terms.push_back(*t);
  }
  const int64_t hosts = terms.front().hosts;
  HierarchySpec spec;
  std::vector<const DevicePreset*> presets;
  HostSpec host;
  int gpus = 0, cpus = 0;
  for (const Term& t : terms) {
    presets.push_back(t.preset);
    for (int64_t i = 0; i < t.count; ++i) {
      host.devices.push_back(MakeDevice(
          *t.preset, t.preset->type == DeviceType::kCpu ? absl::StrCat("cpu", cpus++) : absl::StrCat("gpu", gpus++)));
    }
  }
  const DevicePreset* link = LinkPresetFor(presets);
  host.intra_bandwidth = link->intra_bandwidth;
  host.intra_latency = link->intra_latency;
  for (int64_t h = 0; h < hosts; ++h) {
    host.name = absl::StrCat("host", h);
    spec.hosts.push_back(host);
  }
  spec.network_bandwidth = link->network_bandwidth;
  spec.network_latency = link->network_latency;
  // The name is the shorthand in canonical spelling, so " 2 X 8 x h100 " and "2x8xH100" name one cluster.
  spec.name = absl::StrJoin(terms, "+", [&](std::string* out, const Term& t) { out->append(TermText(t, hosts > 1)); });
  absl::StatusOr<Topology> topology = BuildHierarchy(spec);
  if (topology.ok()) topology->set_description(DatasheetDescription(terms));
  return topology;
}

absl::StatusOr<Topology> ParseTopologyShorthand(absl::string_view text, Precision precision) {
  absl::StatusOr<Topology> datasheet = ParseTopologyShorthand(text);
  if (!datasheet.ok()) return datasheet.status();
  return WithPresetFigures(*datasheet, precision, datasheet->name());
}

absl::StatusOr<ClusterShape> ParseClusterShape(absl::string_view text) {
  std::string compact;
  for (char c : text) {
    if (!absl::ascii_isspace(static_cast<unsigned char>(c))) compact.push_back(c);
  }
  if (absl::StrContains(compact, '+')) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", text, "': a layer-level plan needs hosts of one kind of accelerator, e.g. 64x8xDGXA100"));
  }
  absl::StatusOr<Term> t = ParseTerm(compact, kMaxClusterShapeDevices);
  if (!t.ok()) return t.status();
  if (t->preset->type != DeviceType::kAccelerator) {
    return absl::InvalidArgumentError(absl::StrCat("'", text, "' names no accelerator"));
  }
  ClusterShape shape;
  shape.name = TermText(*t, t->hosts > 1);
  shape.hosts = t->hosts;
  shape.per_host = t->count;
  shape.device = MakeDevice(*t->preset, "gpu0");
  shape.intra_bandwidth = t->preset->intra_bandwidth;
  shape.intra_latency = t->preset->intra_latency;
  shape.network_bandwidth = t->preset->network_bandwidth;
  shape.network_latency = t->preset->network_latency;
  return shape;
}

}  // namespace placement
