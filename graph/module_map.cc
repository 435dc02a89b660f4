#include "graph/module_map.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace placement {
namespace {

// What one scope holds: its whole subtree's devices (one, or mixed) and the FLOPs per device of the operators
// directly in it.
struct ScopeState {
  DeviceId subtree_device = kNone;
  bool mixed = false;
  OpId first_op = kNone;  // the first operator in its subtree, in the graph's (the export's) order
  std::vector<std::pair<DeviceId, double>> direct;  // few entries: one per device its own operators use

  void AddSubtree(DeviceId d) {
    if (subtree_device == kNone) subtree_device = d;
    mixed = mixed || subtree_device != d;
  }
  void AddDirect(DeviceId d, double flops) {
    for (auto& [device, total] : direct) {
      if (device == d) {
        total += flops;
        return;
      }
    }
    direct.emplace_back(d, flops);
  }
  DeviceId DirectMajority() const {
    DeviceId best = kNone;
    double most = -1;
    for (const auto& [device, total] : direct) {
      if (total > most) best = device, most = total;
    }
    return best;
  }
};

std::string ParentOf(const std::string& path) {
  const size_t dot = path.rfind('.');
  return dot == std::string::npos ? "" : path.substr(0, dot);
}

}  // namespace

std::optional<std::string> ModuleScopeOf(absl::string_view op_name) {
  if (!absl::ConsumePrefix(&op_name, "/")) return std::nullopt;
  std::vector<absl::string_view> segments = absl::StrSplit(op_name, '/');
  segments.pop_back();  // the node's own name
  std::string path;
  absl::string_view previous;
  for (absl::string_view s : segments) {
    if (s.empty()) return std::nullopt;
    // A container's child repeats the container's path: "layer1" then "layer1.0".
    if (!previous.empty() && absl::StartsWith(s, previous) && s.size() > previous.size() && s[previous.size()] == '.') {
      absl::StrAppend(&path, s.substr(previous.size()));
    } else {
      absl::StrAppend(&path, path.empty() ? "" : ".", s);
    }
    previous = s;
  }
  return path;
}

std::vector<ModuleDevice> ModuleDeviceMap(const Graph& graph, const Placement& placement, const Topology& topology) {
  absl::flat_hash_map<std::string, ScopeState> scopes;
  for (OpId op = 0; op < graph.num_ops(); ++op) {
    if (graph.is_backward(op) || placement.device[op] == kNone) continue;
    std::optional<std::string> scope = ModuleScopeOf(graph.name(op));
    if (!scope) continue;
    const DeviceId d = placement.device[op];
    scopes[*scope].AddDirect(d, std::max(graph.flops(op), 1.0));
    for (std::string path = *scope;; path = ParentOf(path)) {
      ScopeState& state = scopes[path];
      state.AddSubtree(d);
      if (state.first_op == kNone) state.first_op = op;
      if (path.empty()) break;
    }
  }
  std::vector<std::pair<OpId, ModuleDevice>> listed;
  for (const auto& [path, state] : scopes) {
    const bool parent_mixed = !path.empty() && scopes.at(ParentOf(path)).mixed;
    if (!state.mixed && (path.empty() || parent_mixed)) {
      listed.push_back({state.first_op, {path, topology.device(state.subtree_device).name}});
    } else if (state.mixed && !state.direct.empty()) {
      listed.push_back({state.first_op, {path, topology.device(state.DirectMajority()).name}});
    }
  }
  // In the order the model runs its modules (a parent before its children), as a person reads the model.
  std::sort(listed.begin(), listed.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first < b.first : a.second.module < b.second.module;
  });
  std::vector<ModuleDevice> out;
  out.reserve(listed.size());
  for (auto& [op, module] : listed) out.push_back(std::move(module));
  return out;
}

}  // namespace placement
