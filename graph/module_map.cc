#include "graph/module_map.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace placement {
namespace {

// What one scope holds: its whole subtree's groups (one, or mixed) and the FLOPs per group of the operators
// directly in it.
struct ScopeState {
  int32_t subtree_group = kNone;
  bool mixed = false;
  OpId first_op = kNone;         // the first operator in its subtree, in the graph's (the export's) order
  OpId first_direct_op = kNone;  // the first of its own operators
  std::vector<std::pair<int32_t, double>> direct;  // few entries: one per group its own operators use

  void AddSubtree(int32_t g) {
    if (subtree_group == kNone) subtree_group = g;
    mixed = mixed || subtree_group != g;
  }
  void AddDirect(int32_t g, double flops) {
    for (auto& [group, total] : direct) {
      if (group == g) {
        total += flops;
        return;
      }
    }
    direct.emplace_back(g, flops);
  }
  int32_t DirectMajority() const {
    int32_t best = kNone;
    double most = -1;
    for (const auto& [group, total] : direct) {
      if (total > most) best = group, most = total;
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

std::vector<ModuleGroup> ModuleGroupMap(const Graph& graph, absl::Span<const int32_t> group_of_op) {
  absl::flat_hash_map<std::string, ScopeState> scopes;
  for (OpId op = 0; op < graph.num_ops(); ++op) {
    if (graph.is_backward(op) || group_of_op[op] == kNone) continue;
    std::optional<std::string> scope = ModuleScopeOf(graph.name(op));
    if (!scope) continue;
    const int32_t g = group_of_op[op];
    ScopeState& own = scopes[*scope];
    own.AddDirect(g, std::max(graph.flops(op), 1.0));
    if (own.first_direct_op == kNone) own.first_direct_op = op;
    for (std::string path = *scope;; path = ParentOf(path)) {
      ScopeState& state = scopes[path];
      state.AddSubtree(g);
      if (state.first_op == kNone) state.first_op = op;
      if (path.empty()) break;
    }
  }
  std::vector<std::pair<OpId, ModuleGroup>> listed;
  for (const auto& [path, state] : scopes) {
    const bool parent_mixed = !path.empty() && scopes.at(ParentOf(path)).mixed;
    if (!state.mixed && (path.empty() || parent_mixed)) {
      listed.push_back({state.first_op, {path, state.subtree_group, state.first_op}});
    } else if (state.mixed && !state.direct.empty()) {
      listed.push_back({state.first_op, {path, state.DirectMajority(), state.first_direct_op}});
    }
  }
  // In the order the model runs its modules (a parent before its children), as a person reads the model.
  std::sort(listed.begin(), listed.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first < b.first : a.second.module < b.second.module;
  });
  std::vector<ModuleGroup> out;
  out.reserve(listed.size());
  for (auto& [op, module] : listed) out.push_back(std::move(module));
  return out;
}

std::vector<ModuleDevice> ModuleDeviceMap(const Graph& graph, const Placement& placement, const Topology& topology) {
  std::vector<ModuleDevice> out;
  for (ModuleGroup& m : ModuleGroupMap(graph, placement.device)) {
    out.push_back({std::move(m.module), topology.device(m.group).name});
  }
  return out;
}

std::vector<std::vector<std::string>> StageModules(const Graph& graph, absl::Span<const int32_t> stage_of_op,
                                                   int32_t num_stages) {
  std::vector<ModuleGroup> map = ModuleGroupMap(graph, stage_of_op);
  // By the operator each entry starts at: a split module's own operators (the model's Flatten) sit between its
  // children, not before them, and the stage's first and last entries are its boundaries.
  std::stable_sort(map.begin(), map.end(),
                   [](const ModuleGroup& a, const ModuleGroup& b) { return a.first_op < b.first_op; });
  std::vector<std::vector<std::string>> out(num_stages);
  for (ModuleGroup& m : map) out[m.group].push_back(std::move(m.module));
  return out;
}

}  // namespace placement
