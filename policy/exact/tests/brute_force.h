// Test oracle: the optimal contiguous split by the publication's DP over every pair of ideals, written
// independently of policy/exact. Ideals are the sets of colocation classes (every operator without a group is
// its own class) whose forward operators are down-closed; a step's accelerator load comes from
// simulator/objectives' DeviceLoads with the step on one accelerator and everything else on another device.
// Exponential in the number of classes: for graphs of a dozen operators.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <vector>

#include "graph/cost_model.h"
#include "simulator/objectives.h"

namespace placement::testing_internal {

struct OracleResult {
  size_t ideals = 0;  // 0 when there were more than the limit (nothing else is set then)
  bool feasible = false;
  double value = std::numeric_limits<double>::infinity();
};

inline OracleResult BruteForceContiguous(const CostModel& costs, size_t max_ideals = 400) {
  const Graph& g = costs.graph();
  const Topology& t = costs.topology();
  std::vector<DeviceId> accs, cpus;
  for (DeviceId d = 0; d < t.num_devices(); ++d) (t.device(d).type == DeviceType::kCpu ? cpus : accs).push_back(d);
  const int32_t k = static_cast<int32_t>(accs.size()), c = static_cast<int32_t>(cpus.size());

  std::map<int32_t, int32_t> class_of_group;
  std::vector<int32_t> cls(g.num_ops());
  int32_t classes = 0;
  for (OpId op = 0; op < g.num_ops(); ++op) {
    const int32_t grp = g.colocation_group(op);
    if (grp == kNone) {
      cls[op] = classes++;
    } else {
      auto [it, inserted] = class_of_group.try_emplace(grp, classes);
      if (inserted) ++classes;
      cls[op] = it->second;
    }
  }
  std::vector<uint32_t> ideals;
  for (uint32_t x = 0; x < (1u << classes); ++x) {
    bool ok = true;
    for (EdgeId e = 0; e < g.num_edges() && ok; ++e) {
      const Edge& edge = g.edge(e);
      if (g.is_backward(edge.src) || g.is_backward(edge.dst)) continue;
      if ((x >> cls[edge.dst] & 1) && !(x >> cls[edge.src] & 1)) ok = false;
    }
    if (ok) ideals.push_back(x);
  }
  const size_t n = ideals.size();
  if (n > max_ideals) return OracleResult{};
  const uint32_t full = (1u << classes) - 1;

  // Cost of the step from ideal i to ideal j on an accelerator or a CPU; infinity when it cannot go there.
  auto step = [&](uint32_t from, uint32_t to, bool cpu) {
    const uint32_t seg = to & ~from;
    const DeviceId d = cpu ? cpus[0] : accs[0];
    const int64_t cap = t.device(d).memory_bytes;
    int64_t bytes = 0;
    double compute = 0;
    for (OpId op = 0; op < g.num_ops(); ++op) {
      if (!(seg >> cls[op] & 1)) continue;
      if (!costs.can_run(op, d)) return std::numeric_limits<double>::infinity();
      bytes += g.param_bytes(op);
      compute += costs.op_time(op, d);
    }
    if (cap > 0 && bytes > cap) return std::numeric_limits<double>::infinity();
    if (cpu) return compute;
    const DeviceId other = t.num_devices() > 1 ? (d == 0 ? 1 : 0) : d;
    Placement p;
    p.device.resize(g.num_ops());
    for (OpId op = 0; op < g.num_ops(); ++op) p.device[op] = (seg >> cls[op] & 1) ? d : other;
    return DeviceLoads(costs, p)[d];
  };

  const double inf = std::numeric_limits<double>::infinity();
  // best[a][b][i]: the least max-load covering ideal i with a accelerator steps and b CPU steps.
  std::vector<std::vector<std::vector<double>>> best(k + 1, std::vector<std::vector<double>>(c + 1, std::vector<double>(n, inf)));
  for (size_t i = 0; i < n; ++i) {
    if (ideals[i] == 0) best[0][0][i] = 0;
  }
  std::vector<std::vector<double>> acc_step(n, std::vector<double>(n, inf)), cpu_step(n, std::vector<double>(n, inf));
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = 0; j < n; ++j) {
      if ((ideals[i] & ~ideals[j]) != 0) continue;
      if (k > 0) acc_step[i][j] = i == j ? 0 : step(ideals[i], ideals[j], false);
      if (c > 0) cpu_step[i][j] = i == j ? 0 : step(ideals[i], ideals[j], true);
    }
  }
  for (int32_t a = 0; a <= k; ++a) {
    for (int32_t b = 0; b <= c; ++b) {
      if (a == 0 && b == 0) continue;
      for (size_t j = 0; j < n; ++j) {
        double v = inf;
        for (size_t i = 0; i < n; ++i) {
          if (a > 0) v = std::min(v, std::max(best[a - 1][b][i], acc_step[i][j]));
          if (b > 0) v = std::min(v, std::max(best[a][b - 1][i], cpu_step[i][j]));
        }
        best[a][b][j] = v;
      }
    }
  }
  OracleResult r;
  r.ideals = n;
  for (size_t j = 0; j < n; ++j) {
    if (ideals[j] == full) r.value = best[k][c][j];
  }
  r.feasible = r.value < inf;
  return r;
}

}  // namespace placement::testing_internal
