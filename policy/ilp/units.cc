#include "policy/ilp/units.h"

#include <algorithm>
#include <numeric>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"
#include "graph/units.h"

namespace placement::ilp {

std::string Units::Describe(const Graph& g, int32_t u) const {
  const OpId first = ops[u].front();
  if (ops[u].size() == 1 && g.colocation_group(first) == kNone) return absl::StrCat("operator '", g.name(first), "'");
  return absl::StrCat("colocation group '", g.colocation_groups()[g.colocation_group(first)], "' (", ops[u].size(),
                      " operators)");
}

namespace {

// Operators grouped (a colocation group is one unit, every other operator its own), in topological order.
std::vector<int32_t> RawUnits(const Graph& g, int32_t* num_units) {
  std::vector<int32_t> raw_unit(g.num_ops(), kNone);
  std::vector<int32_t> group_unit(g.colocation_groups().size(), kNone);
  *num_units = 0;
  for (OpId v : g.topo_order()) {
    const int32_t grp = g.colocation_group(v);
    if (grp == kNone) {
      raw_unit[v] = (*num_units)++;
    } else {
      if (group_unit[grp] == kNone) group_unit[grp] = (*num_units)++;
      raw_unit[v] = group_unit[grp];
    }
  }
  return raw_unit;
}

// A unit's new number: units ordered by where their work happens (their first operator that works or has
// inputs; else just before their first reader in another unit; else their first operator).
std::vector<int32_t> RenumberByWork(const CostModel& costs, const std::vector<int32_t>& raw_unit, int32_t num_units) {
  const Graph& g = costs.graph();
  const int64_t kLast = std::numeric_limits<int64_t>::max();
  std::vector<int64_t> position(num_units, kLast), first_reader(num_units, kLast), first_any(num_units, kLast);
  for (OpId v : g.topo_order()) {
    const int32_t u = raw_unit[v];
    const int64_t rank = 2 * static_cast<int64_t>(g.topo_rank(v)) + 1;
    first_any[u] = std::min(first_any[u], rank);
    if (costs.fastest_time(v) > 0 || g.in_degree(v) > 0) position[u] = std::min(position[u], rank);
    for (const Edge& e : g.out_edges(v)) {
      if (raw_unit[e.dst] != u)
        first_reader[u] = std::min<int64_t>(first_reader[u], 2 * static_cast<int64_t>(g.topo_rank(e.dst)));
    }
  }
  for (int32_t u = 0; u < num_units; ++u) {
    if (position[u] == kLast) position[u] = first_reader[u] != kLast ? first_reader[u] : first_any[u];
  }
  std::vector<int32_t> order(num_units);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return position[a] < position[b]; });
  std::vector<int32_t> renumber(num_units);
  for (int32_t i = 0; i < num_units; ++i) renumber[order[i]] = i;
  return renumber;
}

// The device unit u is pinned to (kNone when free). Errors name an unknown device or a unit pinned twice.
absl::Status ReadPin(const Graph& g, const Topology& topo, const std::vector<DeviceId>& pin_device, int32_t u,
                     Units* units) {
  for (OpId v : units->ops[u]) {
    if (g.pinned(v) == kNone) continue;
    const DeviceId d = pin_device[g.pinned(v)];
    if (d == kNone) {
      return absl::InvalidArgumentError(absl::StrCat("operator '", g.name(v), "' is pinned to device '",
                                                     g.pinned_devices()[g.pinned(v)],
                                                     "', which the topology does not have"));
    }
    if (units->pinned[u] != kNone && units->pinned[u] != d) {
      return absl::InvalidArgumentError(absl::StrCat(units->Describe(g, u), " is pinned to both '",
                                                     topo.device(units->pinned[u]).name, "' and '", topo.device(d).name,
                                                     "'"));
    }
    units->pinned[u] = d;
  }
  return absl::OkStatus();
}

// Unit u's time on every device (kCannotRun off its pin or where an operator cannot run); an error when no
// device may run it.
absl::Status UnitTimes(const CostModel& costs, int32_t u, Units* units) {
  const Graph& g = costs.graph();
  const Topology& topo = costs.topology();
  const int32_t nd = topo.num_devices();
  bool any = false;
  for (DeviceId d = 0; d < nd; ++d) {
    double& t = units->time[static_cast<size_t>(u) * nd + d];
    for (OpId v : units->ops[u]) t += costs.op_time(v, d);
    if (units->pinned[u] != kNone && units->pinned[u] != d) t = kCannotRun;
    any = any || t != kCannotRun;
  }
  if (any) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "no device may run all of ", units->Describe(g, u),
      units->pinned[u] != kNone ? absl::StrCat(" on its pinned device '", topo.device(units->pinned[u]).name, "'")
                                : ""));
}

}  // namespace

absl::StatusOr<Units> BuildUnits(const CostModel& costs) {
  const Graph& g = costs.graph();
  const Topology& topo = costs.topology();
  const int32_t num_devices = topo.num_devices();
  int32_t num_units = 0;
  const std::vector<int32_t> raw_unit = RawUnits(g, &num_units);
  const std::vector<int32_t> renumber = RenumberByWork(costs, raw_unit, num_units);
  Units units;
  units.num_devices = num_devices;
  units.unit_of.resize(g.num_ops());
  units.ops.resize(num_units);
  for (OpId v : g.topo_order()) {
    units.unit_of[v] = renumber[raw_unit[v]];
    units.ops[units.unit_of[v]].push_back(v);
  }
  std::vector<DeviceId> pin_device(g.pinned_devices().size(), kNone);
  for (size_t p = 0; p < pin_device.size(); ++p) pin_device[p] = topo.FindDevice(g.pinned_devices()[p]);
  units.pinned.assign(num_units, kNone);
  units.time.assign(static_cast<size_t>(num_units) * num_devices, 0.0);
  for (int32_t u = 0; u < num_units; ++u) {
    RETURN_IF_ERROR(ReadPin(g, topo, pin_device, u, &units));
    RETURN_IF_ERROR(UnitTimes(costs, u, &units));
  }
  units.capacity.resize(num_devices);
  for (DeviceId d = 0; d < num_devices; ++d) {
    const int64_t m = topo.device(d).memory_bytes;
    units.capacity[d] = m > 0 ? m : kUnlimitedBytes;
  }
  return units;
}

std::vector<int64_t> UnitBytes(const Units& units, const std::vector<int64_t>& op_bytes) {
  std::vector<int64_t> bytes(units.num_units(), 0);
  for (int32_t u = 0; u < units.num_units(); ++u) {
    for (OpId v : units.ops[u]) bytes[u] += op_bytes[v];
  }
  return bytes;
}

absl::Status CheckUnitsFit(const Graph& g, const Units& units, const std::vector<int64_t>& unit_bytes,
                           absl::string_view what) {
  for (int32_t u = 0; u < units.num_units(); ++u) {
    int64_t largest = 0;
    bool fits = false;
    for (DeviceId d = 0; d < units.num_devices; ++d) {
      if (!units.allowed(u, d)) continue;
      largest = std::max(largest, units.capacity[d]);
      fits = fits || unit_bytes[u] <= units.capacity[d];
    }
    if (!fits) {
      return absl::FailedPreconditionError(
          absl::StrCat(units.Describe(g, u), " needs ", FormatBytes(static_cast<double>(unit_bytes[u])), " of ", what,
                       " but the largest device it may use holds ", FormatBytes(static_cast<double>(largest))));
    }
  }
  return absl::OkStatus();
}

Placement ToPlacement(const Units& units, const std::vector<DeviceId>& unit_device) {
  Placement p;
  p.device.resize(units.unit_of.size());
  for (size_t v = 0; v < units.unit_of.size(); ++v) p.device[v] = unit_device[units.unit_of[v]];
  return p;
}

std::vector<DeviceId> FromPlacement(const Units& units, const Placement& placement) {
  if (placement.device.size() != units.unit_of.size()) return {};
  std::vector<DeviceId> device(units.num_units(), kNone);
  for (size_t v = 0; v < units.unit_of.size(); ++v) {
    const DeviceId d = placement.device[v];
    DeviceId& slot = device[units.unit_of[v]];
    if (d < 0 || d >= units.num_devices || (slot != kNone && slot != d)) return {};
    slot = d;
  }
  for (int32_t u = 0; u < units.num_units(); ++u) {
    if (!units.allowed(u, device[u])) return {};
  }
  return device;
}

}  // namespace placement::ilp
