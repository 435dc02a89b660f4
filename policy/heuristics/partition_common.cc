#include "policy/heuristics/partition_common.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "graph/units.h"

namespace placement::heuristics {

UnitGraph ContractUnits(const CostModel& costs, const UnitIndex& units) {
  const Graph& g = costs.graph();
  const std::vector<double> mean_edge = MeanTransferTimes(costs, units);
  const int32_t nu = units.num_units();
  struct Arc {
    int32_t a, b;
    double w;
  };
  std::vector<Arc> arcs;
  arcs.reserve(2 * static_cast<size_t>(g.num_edges()));
  for (EdgeId e = 0; e < g.num_edges(); ++e) {
    const int32_t a = units.unit_of(g.edge(e).src), b = units.unit_of(g.edge(e).dst);
    if (a == b) continue;
    arcs.push_back({a, b, mean_edge[e]});
    arcs.push_back({b, a, mean_edge[e]});
  }
  std::sort(arcs.begin(), arcs.end(), [](const Arc& x, const Arc& y) { return x.a != y.a ? x.a < y.a : x.b < y.b; });
  UnitGraph ug;
  ug.xadj.assign(nu + 1, 0);
  for (size_t i = 0; i < arcs.size();) {
    size_t j = i;
    double w = 0;
    for (; j < arcs.size() && arcs[j].a == arcs[i].a && arcs[j].b == arcs[i].b; ++j) w += arcs[j].w;
    ug.adjncy.push_back(arcs[i].b);
    ug.edge_weight.push_back(w);
    ++ug.xadj[arcs[i].a + 1];
    i = j;
  }
  for (int32_t u = 0; u < nu; ++u) ug.xadj[u + 1] += ug.xadj[u];
  ug.vertex_weight.resize(nu);
  for (int32_t u = 0; u < nu; ++u) ug.vertex_weight[u] = units.fastest_time(u);
  return ug;
}

std::vector<int32_t> ScaleToIntegers(absl::Span<const double> values, double total) {
  double sum = 0;
  for (double v : values) sum += v;
  std::vector<int32_t> out(values.size(), 1);
  if (sum <= 0) return out;
  const double scale = total / sum;
  for (size_t i = 0; i < values.size(); ++i) {
    out[i] = static_cast<int32_t>(std::max(1.0, std::min(2e9, std::round(values[i] * scale))));
  }
  return out;
}

absl::StatusOr<RepairStats> AssignParts(const PlacementProblem& problem, const UnitIndex& units, MemoryLedger& ledger,
                                        absl::Span<const int32_t> part, const Budget& budget) {
  const int32_t nd = problem.topology().num_devices();
  const int32_t nu = units.num_units();
  RepairStats stats;
  BudgetClock clock(budget);

  std::vector<DeviceId> want(nu, kNone);
  for (int32_t u = 0; u < nu; ++u) {
    if (units.pinned(u) != kNone) {
      want[u] = units.pinned(u);
    } else if (part[u] >= 0 && part[u] < nd && units.allowed(u, part[u])) {
      want[u] = part[u];
    } else {
      ++stats.unsupported;
    }
  }

  // Shed load from parts that overfill their device's memory, the least work per byte first.
  std::vector<int64_t> usage(nd, 0);
  for (int32_t u = 0; u < nu; ++u) {
    if (want[u] != kNone) usage[want[u]] += ledger.upper(u);
  }
  std::vector<int32_t> members;
  for (DeviceId d = 0; d < nd; ++d) {
    if (usage[d] <= ledger.capacity(d)) continue;
    members.clear();
    for (int32_t u = 0; u < nu; ++u) {
      if (want[u] == d && units.pinned(u) == kNone && ledger.upper(u) > 0) members.push_back(u);
    }
    std::sort(members.begin(), members.end(), [&](int32_t a, int32_t b) {
      // a before b when time_a / bytes_a < time_b / bytes_b
      const double lhs = units.time(a, d) * static_cast<double>(ledger.upper(b));
      const double rhs = units.time(b, d) * static_cast<double>(ledger.upper(a));
      return lhs != rhs ? lhs < rhs : a < b;
    });
    for (int32_t u : members) {
      if (usage[d] <= ledger.capacity(d)) break;
      usage[d] -= ledger.upper(u);
      want[u] = kNone;
      ++stats.evicted;
      stats.evicted_bytes += ledger.upper(u);
    }
    if (clock.Tick()) return clock.Status();
  }

  // Place in topological order; the planned busy time steers the units that have no part left.
  std::vector<double> load(nd, 0.0);
  for (int32_t u = 0; u < nu; ++u) {
    if (want[u] != kNone) load[want[u]] += units.time(u, want[u]);
  }
  for (int32_t u : units.order()) {
    if (clock.Tick()) return clock.Status();
    if (want[u] != kNone && ledger.Fits(u, want[u])) {
      ledger.Place(u, want[u]);
      continue;
    }
    if (want[u] != kNone) {
      if (units.pinned(u) != kNone) return ledger.Shortfall(u);
      load[want[u]] -= units.time(u, want[u]);
      ++stats.overflowed;
    }
    DeviceId best = kNone;
    for (DeviceId d = 0; d < nd; ++d) {
      if (!units.allowed(u, d) || !ledger.Fits(u, d)) continue;
      if (best == kNone || load[d] + units.time(u, d) < load[best] + units.time(u, best)) best = d;
    }
    if (best == kNone) return ledger.Shortfall(u);
    ledger.Place(u, best);
    load[best] += units.time(u, best);
  }
  return stats;
}

std::vector<std::string> RepairNotes(const RepairStats& stats) {
  std::vector<std::string> notes;
  if (stats.evicted > 0) {
    notes.push_back(absl::StrCat("memory repair moved ", stats.evicted, " units (", FormatBytes(stats.evicted_bytes),
                                 " at worst) off overfull parts"));
  }
  if (stats.overflowed > 0)
    notes.push_back(absl::StrCat(stats.overflowed, " more units did not fit their part when placed"));
  if (stats.unsupported > 0)
    notes.push_back(absl::StrCat(stats.unsupported, " units were in a part whose device cannot run them"));
  return notes;
}

}  // namespace placement::heuristics
