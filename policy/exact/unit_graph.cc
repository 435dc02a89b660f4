#include "policy/exact/unit_graph.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/hash/hash.h"

namespace placement::pipeline_internal {
namespace {

void SortUnique(std::vector<int32_t>& v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

struct VectorHash {
  size_t operator()(const std::vector<int32_t>& v) const { return absl::HashOf(v); }
};

}  // namespace

UnitGraph ContractUnits(const CostModel& costs, const OpFacts& facts, const std::vector<int32_t>& group_of_op,
                        int32_t num_groups) {
  const Graph& g = costs.graph();
  UnitGraph u;
  u.n = num_groups;
  u.acc_time.assign(num_groups, 0);
  u.cpu_time.assign(num_groups, 0);
  u.acc_ok.assign(num_groups, facts.num_accelerators > 0);
  u.cpu_ok.assign(num_groups, facts.num_cpus > 0);
  u.has_forward.assign(num_groups, 0);
  u.bytes.assign(num_groups, 0);
  u.succs.assign(num_groups, {});
  u.preds.assign(num_groups, {});
  u.unit_hedges.assign(num_groups, {});
  for (OpId op = 0; op < g.num_ops(); ++op) {
    const int32_t x = group_of_op[op];
    if (facts.acc_time[op] == kCannotRun) {
      u.acc_ok[x] = 0;
    } else {
      u.acc_time[x] += facts.acc_time[op];
    }
    if (facts.cpu_time[op] == kCannotRun) {
      u.cpu_ok[x] = 0;
    } else {
      u.cpu_time[x] += facts.cpu_time[op];
    }
    u.bytes[x] += costs.pipelined_bytes(op);
    if (!g.is_backward(op)) u.has_forward[x] = 1;
  }
  for (int32_t x = 0; x < num_groups; ++x) {
    if (!u.acc_ok[x]) u.acc_time[x] = 0;
    if (!u.cpu_ok[x]) u.cpu_time[x] = 0;
  }

  // Precedence: forward edges; a backward-only unit takes the mirror image of its backward edges.
  for (EdgeId e = 0; e < g.num_edges(); ++e) {
    const Edge& edge = g.edge(e);
    const int32_t a = group_of_op[edge.src], b = group_of_op[edge.dst];
    if (a == b) continue;
    if (!g.is_backward(edge.src) && !g.is_backward(edge.dst)) {
      u.succs[a].push_back(b);
    } else if (g.is_backward(edge.src) && g.is_backward(edge.dst) && (!u.has_forward[a] || !u.has_forward[b])) {
      u.succs[b].push_back(a);
    }
  }
  for (int32_t x = 0; x < num_groups; ++x) {
    SortUnique(u.succs[x]);
    for (int32_t y : u.succs[x]) u.preds[y].push_back(x);
  }

  // Hyperedges: one per tensor over the units of its producer and readers; equal member sets add up.
  absl::flat_hash_map<std::vector<int32_t>, int32_t, VectorHash> index;
  std::vector<int32_t> members;
  for (OpId op = 0; op < g.num_ops(); ++op) {
    EdgeId e = g.out_begin(op);
    while (e < g.out_end(op)) {
      const int32_t output = g.edge(e).src_output;
      members.assign(1, group_of_op[op]);
      for (; e < g.out_end(op) && g.edge(e).src_output == output; ++e) members.push_back(group_of_op[g.edge(e).dst]);
      const double w = facts.tensor_weight[g.first_output(op) + output];
      SortUnique(members);
      if (members.size() < 2 || !(w > 0)) continue;
      auto [it, inserted] = index.try_emplace(members, static_cast<int32_t>(u.hedges.size()));
      if (inserted) {
        u.hedges.push_back(members);
        u.hedge_weight.push_back(w);
      } else {
        u.hedge_weight[it->second] += w;
      }
    }
  }
  for (int32_t h = 0; h < static_cast<int32_t>(u.hedges.size()); ++h) {
    for (int32_t x : u.hedges[h]) u.unit_hedges[x].push_back(h);
  }
  return u;
}

std::vector<int32_t> StronglyConnectedComponents(const UnitGraph& g, int32_t* num_components) {
  // Tarjan's algorithm with an explicit stack (unit graphs can be deep chains).
  std::vector<int32_t> index(g.n, -1), low(g.n, 0), comp(g.n, -1);
  std::vector<uint8_t> on_stack(g.n, 0);
  std::vector<int32_t> stack;
  std::vector<std::pair<int32_t, size_t>> call;  // (unit, next successor position)
  int32_t counter = 0, components = 0;
  for (int32_t root = 0; root < g.n; ++root) {
    if (index[root] >= 0) continue;
    call.emplace_back(root, 0);
    while (!call.empty()) {
      auto& [v, pos] = call.back();
      if (pos == 0 && index[v] < 0) {
        index[v] = low[v] = counter++;
        stack.push_back(v);
        on_stack[v] = 1;
      }
      if (pos < g.succs[v].size()) {
        const int32_t w = g.succs[v][pos++];
        if (index[w] < 0) {
          call.emplace_back(w, 0);
        } else if (on_stack[w]) {
          low[v] = std::min(low[v], index[w]);
        }
        continue;
      }
      if (low[v] == index[v]) {
        int32_t w;
        do {
          w = stack.back();
          stack.pop_back();
          on_stack[w] = 0;
          comp[w] = components;
        } while (w != v);
        ++components;
      }
      const int32_t finished = v;
      call.pop_back();
      if (!call.empty()) low[call.back().first] = std::min(low[call.back().first], low[finished]);
    }
  }
  *num_components = components;
  return comp;
}

bool ZeroEverywhere(const UnitGraph& g, const OpFacts& facts, int32_t u) {
  const bool acc = facts.num_accelerators == 0 || (g.acc_ok[u] && g.acc_time[u] == 0);
  const bool cpu = facts.num_cpus == 0 || (g.cpu_ok[u] && g.cpu_time[u] == 0);
  return acc && cpu;
}

std::vector<int32_t> ZeroMergeTargets(const UnitGraph& g, const OpFacts& facts, bool allow_sized, bool* sized) {
  std::vector<int32_t> target(g.n);
  for (int32_t u = 0; u < g.n; ++u) {
    target[u] = u;
    if (!ZeroEverywhere(g, facts, u)) continue;
    if (g.bytes[u] > 0 && !allow_sized) continue;
    // The only DAG neighbour: a source with one successor or a sink with one predecessor.
    int32_t m = -1;
    if (g.preds[u].empty() && g.succs[u].size() == 1) m = g.succs[u][0];
    if (g.succs[u].empty() && g.preds[u].size() == 1) m = g.preds[u][0];
    if (m < 0) continue;
    bool all_contain = true;
    for (int32_t h : g.unit_hedges[u]) {
      if (!std::binary_search(g.hedges[h].begin(), g.hedges[h].end(), m)) {
        all_contain = false;
        break;
      }
    }
    if (!all_contain) continue;
    target[u] = m;
    if (g.bytes[u] > 0) *sized = true;
  }
  return target;
}

}  // namespace placement::pipeline_internal
