#include "policy/search/search_units.h"

#include <algorithm>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace placement::search {
absl::StatusOr<SearchUnits> SearchUnits::Build(const CostModel& costs) {
  const Graph& g = costs.graph();
  const Topology& topo = costs.topology();
  absl::StatusOr<ColocationUnits> core = ColocationUnits::Build(costs);
  if (!core.ok()) return core.status();
  SearchUnits x(*std::move(core));
  const int32_t num_units = x.num_units();

  x.allowed_begin_.assign(1, 0);
  for (int32_t u = 0; u < num_units; ++u) {
    for (DeviceId d = 0; d < topo.num_devices(); ++d) {
      if (x.allowed(u, d)) x.allowed_.push_back(d);
    }
    x.allowed_begin_.push_back(static_cast<int32_t>(x.allowed_.size()));
    if (x.allowed_begin_[u + 1] == x.allowed_begin_[u]) {
      if (x.pinned(u) != kNone) {
        return absl::InvalidArgumentError(
            absl::StrCat(x.Describe(g, u), " is pinned to '", topo.device(x.pinned(u)).name, "' (kind ",
                         topo.device(x.pinned(u)).kind, "), which cannot run all of its operators"));
      }
      return absl::InvalidArgumentError(absl::StrCat(x.Describe(g, u),
                                                     " cannot run whole on any device kind of the topology (",
                                                     absl::StrJoin(topo.kinds(), ", "), ")"));
    }
  }

  x.param_bytes_.assign(num_units, 0);
  x.footprint_bytes_.assign(num_units, 0);
  x.pipelined_bytes_.assign(num_units, 0);
  x.topo_rank_.assign(num_units, 0);
  for (int32_t u = 0; u < num_units; ++u) {
    x.topo_rank_[u] = g.topo_rank(x.ops(u).front());
    for (OpId v : x.ops(u)) {
      x.param_bytes_[u] += g.param_bytes(v);
      x.pipelined_bytes_[u] += costs.pipelined_bytes(v);
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
        if (x.unit_of(e.dst) != u) scratch.push_back(x.unit_of(e.dst));
      }
      for (EdgeId e : g.in_edges(v)) {
        if (x.unit_of(g.edge(e).src) != u) scratch.push_back(x.unit_of(g.edge(e).src));
      }
    }
    std::sort(scratch.begin(), scratch.end());
    scratch.erase(std::unique(scratch.begin(), scratch.end()), scratch.end());
    x.neighbours_.insert(x.neighbours_.end(), scratch.begin(), scratch.end());
    x.neighbour_begin_.push_back(static_cast<int32_t>(x.neighbours_.size()));
  }
  return x;
}

}  // namespace placement::search
