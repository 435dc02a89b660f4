#include "policy/colocation_units.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace placement {
namespace {

std::string DeviceNames(const Topology& t) {
  std::vector<std::string> names;
  for (const Device& d : t.devices()) names.push_back(d.name);
  if (names.size() > 8) {
    names.resize(8);
    names.push_back("...");
  }
  return absl::StrJoin(names, ", ");
}

}  // namespace

absl::StatusOr<ColocationUnits> ColocationUnits::Build(const CostModel& costs) {
  const Graph& g = costs.graph();
  const Topology& topo = costs.topology();
  const int32_t n = g.num_ops();
  ColocationUnits x;

  x.unit_of_.assign(n, kNone);
  std::vector<int32_t> group_unit(g.colocation_groups().size(), kNone);
  int32_t num_units = 0;
  for (OpId v : g.topo_order()) {
    const int32_t grp = g.colocation_group(v);
    if (grp == kNone) {
      x.unit_of_[v] = num_units++;
    } else {
      if (group_unit[grp] == kNone) group_unit[grp] = num_units++;
      x.unit_of_[v] = group_unit[grp];
    }
  }
  x.begin_.assign(num_units + 1, 0);
  for (OpId v = 0; v < n; ++v) ++x.begin_[x.unit_of_[v] + 1];
  for (int32_t u = 0; u < num_units; ++u) x.begin_[u + 1] += x.begin_[u];
  x.ops_.resize(n);
  {
    std::vector<int32_t> fill(x.begin_.begin(), x.begin_.end() - 1);
    for (OpId v : g.topo_order()) x.ops_[fill[x.unit_of_[v]]++] = v;
  }

  // Pins: resolve each pinned name once, then give every unit at most one device.
  std::vector<DeviceId> pin_device(g.pinned_devices().size(), kNone);
  for (size_t p = 0; p < pin_device.size(); ++p) pin_device[p] = topo.FindDevice(g.pinned_devices()[p]);
  x.pinned_.assign(num_units, kNone);
  x.pinned_by_.assign(num_units, kNone);
  for (OpId v = 0; v < n; ++v) {
    if (g.pinned(v) == kNone) continue;
    const DeviceId d = pin_device[g.pinned(v)];
    if (d == kNone) {
      return absl::InvalidArgumentError(
          absl::StrCat("operator '", g.name(v), "' is pinned to device '", g.pinned_devices()[g.pinned(v)],
                       "', which the topology does not have (it has ", DeviceNames(topo), ")"));
    }
    const int32_t u = x.unit_of_[v];
    if (x.pinned_[u] != kNone && x.pinned_[u] != d) {
      return absl::InvalidArgumentError(absl::StrCat(
          "colocation group '", g.colocation_groups()[g.colocation_group(v)], "' must share one device, but operator '",
          g.name(x.pinned_by_[u]), "' is pinned to '", topo.device(x.pinned_[u]).name, "' and operator '", g.name(v),
          "' to '", topo.device(d).name, "'"));
    }
    x.pinned_[u] = d;
    x.pinned_by_[u] = v;
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
    for (OpId v = 0; v < n; ++v) row[x.unit_of_[v]] += costs.op_time(v, kind_device[k]);  // inf stays inf
  }
  return x;
}

std::string ColocationUnits::Describe(const Graph& g, int32_t u) const {
  const OpId v = first_op(u);
  if (ops(u).size() == 1 || g.colocation_group(v) == kNone) return absl::StrCat("operator '", g.name(v), "'");
  return absl::StrCat("colocation group '", g.colocation_groups()[g.colocation_group(v)], "' (", ops(u).size(),
                      " operators)");
}

}  // namespace placement
