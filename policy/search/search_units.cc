#include "policy/search/search_units.h"

#include <algorithm>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace placement::search {
namespace {

// Unit ids follow the topological order of each unit's first operator, so iteration is deterministic.
void GroupUnits(const Graph& g, std::vector<int32_t>& unit_of, std::vector<int32_t>& begin, std::vector<OpId>& ops) {
  const int32_t n = g.num_ops();
  unit_of.assign(n, kNone);
  std::vector<int32_t> group_unit(g.colocation_groups().size(), kNone);
  int32_t num_units = 0;
  for (OpId v : g.topo_order()) {
    const int32_t grp = g.colocation_group(v);
    if (grp == kNone) {
      unit_of[v] = num_units++;
    } else {
      if (group_unit[grp] == kNone) group_unit[grp] = num_units++;
      unit_of[v] = group_unit[grp];
    }
  }
  begin.assign(num_units + 1, 0);
  for (OpId v = 0; v < n; ++v) ++begin[unit_of[v] + 1];
  for (int32_t u = 0; u < num_units; ++u) begin[u + 1] += begin[u];
  ops.resize(n);
  std::vector<int32_t> fill(begin.begin(), begin.end() - 1);
  for (OpId v : g.topo_order()) ops[fill[unit_of[v]]++] = v;
}

}  // namespace

absl::StatusOr<SearchUnits> SearchUnits::Build(const CostModel& costs) {
  const Graph& g = costs.graph();
  const Topology& topo = costs.topology();
  SearchUnits x;
  GroupUnits(g, x.unit_of_, x.begin_, x.ops_);
  const int32_t num_units = static_cast<int32_t>(x.begin_.size()) - 1;

  // Pins: a unit takes the pin of any of its operators; two different pins in one group cannot be met.
  x.pinned_.assign(num_units, kNone);
  std::vector<OpId> pinned_by(num_units, kNone);
  for (OpId v = 0; v < g.num_ops(); ++v) {
    if (g.pinned(v) == kNone) continue;
    const DeviceId d = topo.FindDevice(g.pinned_devices()[g.pinned(v)]);
    if (d == kNone) {
      return absl::InvalidArgumentError(absl::StrCat("operator '", g.name(v), "' is pinned to device '",
                                                     g.pinned_devices()[g.pinned(v)], "', which the topology does not have"));
    }
    const int32_t u = x.unit_of_[v];
    if (x.pinned_[u] != kNone && x.pinned_[u] != d) {
      return absl::InvalidArgumentError(absl::StrCat("colocation group '", g.colocation_groups()[g.colocation_group(v)],
                                                     "' must share one device, but operator '", g.name(pinned_by[u]),
                                                     "' is pinned to '", topo.device(x.pinned_[u]).name, "' and operator '",
                                                     g.name(v), "' to '", topo.device(d).name, "'"));
    }
    x.pinned_[u] = d;
    pinned_by[u] = v;
  }

  // Times per device kind: one representative device per kind gives every operator's time on that kind.
  const int32_t num_kinds = static_cast<int32_t>(topo.kinds().size());
  std::vector<DeviceId> kind_device(num_kinds, kNone);
  x.kind_of_.resize(topo.num_devices());
  for (DeviceId d = 0; d < topo.num_devices(); ++d) {
    x.kind_of_[d] = topo.kind_index(d);
    if (kind_device[x.kind_of_[d]] == kNone) kind_device[x.kind_of_[d]] = d;
  }
  x.time_.assign(static_cast<size_t>(num_kinds) * num_units, 0.0);
  for (int32_t k = 0; k < num_kinds; ++k) {
    double* row = x.time_.data() + static_cast<size_t>(k) * num_units;
    for (OpId v = 0; v < g.num_ops(); ++v) row[x.unit_of_[v]] += costs.op_time(v, kind_device[k]);  // inf stays inf
  }

  x.allowed_begin_.assign(1, 0);
  for (int32_t u = 0; u < num_units; ++u) {
    for (DeviceId d = 0; d < topo.num_devices(); ++d) {
      if (x.allowed(u, d)) x.allowed_.push_back(d);
    }
    x.allowed_begin_.push_back(static_cast<int32_t>(x.allowed_.size()));
    if (x.allowed_begin_[u + 1] == x.allowed_begin_[u]) {
      if (x.pinned_[u] != kNone) {
        return absl::InvalidArgumentError(absl::StrCat(x.Describe(g, u), " is pinned to '", topo.device(x.pinned_[u]).name,
                                                       "' (kind ", topo.device(x.pinned_[u]).kind,
                                                       "), which cannot run all of its operators"));
      }
      return absl::InvalidArgumentError(absl::StrCat(x.Describe(g, u), " cannot run whole on any device kind of the topology (",
                                                     absl::StrJoin(topo.kinds(), ", "), ")"));
    }
  }

  x.param_bytes_.assign(num_units, 0);
  x.footprint_bytes_.assign(num_units, 0);
  x.topo_rank_.assign(num_units, 0);
  for (int32_t u = 0; u < num_units; ++u) {
    x.topo_rank_[u] = g.topo_rank(x.ops(u).front());
    for (OpId v : x.ops(u)) {
      x.param_bytes_[u] += g.param_bytes(v);
      x.footprint_bytes_[u] += g.param_bytes(v) + g.temp_bytes(v);
      for (int32_t o = 0; o < g.num_outputs(v); ++o) x.footprint_bytes_[u] += g.tensor(g.first_output(v) + o).bytes;
    }
  }

  // Neighbours: distinct other units across every edge, sorted per unit.
  x.neighbour_begin_.assign(1, 0);
  std::vector<int32_t> scratch;
  for (int32_t u = 0; u < num_units; ++u) {
    scratch.clear();
    for (OpId v : x.ops(u)) {
      for (const Edge& e : g.out_edges(v)) {
        if (x.unit_of_[e.dst] != u) scratch.push_back(x.unit_of_[e.dst]);
      }
      for (EdgeId e : g.in_edges(v)) {
        if (x.unit_of_[g.edge(e).src] != u) scratch.push_back(x.unit_of_[g.edge(e).src]);
      }
    }
    std::sort(scratch.begin(), scratch.end());
    scratch.erase(std::unique(scratch.begin(), scratch.end()), scratch.end());
    x.neighbours_.insert(x.neighbours_.end(), scratch.begin(), scratch.end());
    x.neighbour_begin_.push_back(static_cast<int32_t>(x.neighbours_.size()));
  }
  return x;
}

std::string SearchUnits::Describe(const Graph& g, int32_t u) const {
  const OpId v = ops(u).front();
  if (g.colocation_group(v) == kNone) return absl::StrCat("operator '", g.name(v), "'");
  return absl::StrCat("colocation group '", g.colocation_groups()[g.colocation_group(v)], "' (", ops(u).size(),
                      " operators)");
}

}  // namespace placement::search
