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

// Every operator's colocation class (an operator without a group is its own class), and how many there are.
inline int32_t ColocationClasses(const Graph& g, std::vector<int32_t>& cls) {
  std::map<int32_t, int32_t> class_of_group;
  cls.assign(g.num_ops(), 0);
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
  return classes;
}

// Every set of classes closed under forward predecessors, as a bit set.
inline std::vector<uint32_t> DownClosedIdeals(const Graph& g, const std::vector<int32_t>& cls, int32_t classes) {
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
  return ideals;
}

// Cost of the step that runs the classes in `to` but not in `from` on device d (an accelerator's load with
// everything else on `other`, a CPU's compute); infinity when it cannot go there.
inline double StepCost(const CostModel& costs, const std::vector<int32_t>& cls, uint32_t from, uint32_t to, DeviceId d,
                       DeviceId other, bool cpu) {
  const Graph& g = costs.graph();
  const uint32_t seg = to & ~from;
  const int64_t cap = costs.topology().device(d).memory_bytes;
  int64_t bytes = 0;
  double compute = 0;
  for (OpId op = 0; op < g.num_ops(); ++op) {
    if (!(seg >> cls[op] & 1)) continue;
    if (!costs.can_run(op, d)) return std::numeric_limits<double>::infinity();
    bytes += costs.pipelined_bytes(op);  // what the throughput objective holds a device to
    compute += costs.op_time(op, d);
  }
  if (cap > 0 && bytes > cap) return std::numeric_limits<double>::infinity();
  if (cpu) return compute;
  Placement p;
  p.device.resize(g.num_ops());
  for (OpId op = 0; op < g.num_ops(); ++op) p.device[op] = (seg >> cls[op] & 1) ? d : other;
  return DeviceLoads(costs, p)[d];
}

using StepTable = std::vector<std::vector<double>>;  // [from ideal][to ideal]

// best[a][b][j]: the least max-load covering ideal j with a accelerator steps and b CPU steps.
inline std::vector<double> LeastMaxLoad(const std::vector<uint32_t>& ideals, const StepTable& acc_step,
                                        const StepTable& cpu_step, int32_t k, int32_t c) {
  const size_t n = ideals.size();
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<std::vector<std::vector<double>>> best(
      k + 1, std::vector<std::vector<double>>(c + 1, std::vector<double>(n, inf)));
  for (size_t i = 0; i < n; ++i) {
    if (ideals[i] == 0) best[0][0][i] = 0;
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
  return best[k][c];
}

inline OracleResult BruteForceContiguous(const CostModel& costs, size_t max_ideals = 400) {
  const Graph& g = costs.graph();
  const Topology& t = costs.topology();
  std::vector<DeviceId> accs, cpus;
  for (DeviceId d = 0; d < t.num_devices(); ++d) (t.device(d).type == DeviceType::kCpu ? cpus : accs).push_back(d);
  const int32_t k = static_cast<int32_t>(accs.size()), c = static_cast<int32_t>(cpus.size());
  std::vector<int32_t> cls;
  const int32_t classes = ColocationClasses(g, cls);
  const std::vector<uint32_t> ideals = DownClosedIdeals(g, cls, classes);
  const size_t n = ideals.size();
  if (n > max_ideals) return OracleResult{};

  const double inf = std::numeric_limits<double>::infinity();
  StepTable acc_step(n, std::vector<double>(n, inf)), cpu_step(n, std::vector<double>(n, inf));
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = 0; j < n; ++j) {
      if ((ideals[i] & ~ideals[j]) != 0) continue;
      if (k > 0) {
        const DeviceId other = t.num_devices() > 1 ? (accs[0] == 0 ? 1 : 0) : accs[0];
        acc_step[i][j] = i == j ? 0 : StepCost(costs, cls, ideals[i], ideals[j], accs[0], other, false);
      }
      if (c > 0) cpu_step[i][j] = i == j ? 0 : StepCost(costs, cls, ideals[i], ideals[j], cpus[0], cpus[0], true);
    }
  }
  const std::vector<double> best = LeastMaxLoad(ideals, acc_step, cpu_step, k, c);
  OracleResult r;
  r.ideals = n;
  const uint32_t full = (1u << classes) - 1;
  for (size_t j = 0; j < n; ++j) {
    if (ideals[j] == full) r.value = best[j];
  }
  r.feasible = r.value < inf;
  return r;
}

}  // namespace placement::testing_internal
