#include "policy/search/memory_repair.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "graph/units.h"
#include "simulator/simulator.h"

namespace placement::search {
namespace {

constexpr int64_t kUnbounded = std::numeric_limits<int64_t>::max();

int64_t Capacity(const Topology& topo, DeviceId d) {
  return topo.device(d).memory_bytes > 0 ? topo.device(d).memory_bytes : kUnbounded;
}

std::string Totals(const Graph& g, const Topology& topo) {
  if (topo.has_unbounded_device()) return "";
  return absl::StrCat("; the graph has ", FormatBytes(static_cast<double>(g.total_param_bytes())),
                      " of parameters, the cluster ", FormatBytes(static_cast<double>(topo.bounded_memory_bytes())),
                      " of memory");
}

// Units on `d`, largest first by `size`, ties by id.
std::vector<int32_t> LargestFirst(const SearchUnits& units, const Placement& p, DeviceId d,
                                  const std::vector<int64_t>& size) {
  std::vector<int32_t> on;
  for (int32_t u = 0; u < units.num_units(); ++u) {
    if (units.device_of(p, u) == d) on.push_back(u);
  }
  std::stable_sort(on.begin(), on.end(), [&](int32_t a, int32_t b) { return size[a] > size[b]; });
  return on;
}

// The device u may go to with `need` bytes free in `room` and the least work in `busy`; kNone when none has room.
DeviceId Destination(const SearchUnits& units, int32_t u, DeviceId from, int64_t need, const std::vector<int64_t>& room,
                     const std::vector<double>& busy) {
  DeviceId best = kNone;
  for (DeviceId d : units.allowed_devices(u)) {
    if (d == from || room[d] < need) continue;
    if (best == kNone || busy[d] + units.time(u, d) < busy[best] + units.time(u, best)) best = d;
  }
  return best;
}

std::vector<double> Busy(const SearchUnits& units, const Placement& p, int32_t num_devices) {
  std::vector<double> busy(num_devices, 0);
  for (int32_t u = 0; u < units.num_units(); ++u) busy[units.device_of(p, u)] += units.time(u, units.device_of(p, u));
  return busy;
}

// THROUGHPUT: a sum per operator (CostModel::pipelined_bytes), so one pass settles it.
absl::Status RepairParameters(const PlacementProblem& problem, const SearchUnits& units, Placement& p) {
  const Topology& topo = problem.topology();
  const int32_t num_devices = topo.num_devices();
  std::vector<int64_t> size(units.num_units());
  for (int32_t u = 0; u < units.num_units(); ++u) size[u] = units.pipelined_bytes(u);
  std::vector<int64_t> room(num_devices);
  for (DeviceId d = 0; d < num_devices; ++d) room[d] = Capacity(topo, d);
  for (int32_t u = 0; u < units.num_units(); ++u) {
    const DeviceId d = units.device_of(p, u);
    if (room[d] != kUnbounded) room[d] -= size[u];
  }
  std::vector<double> busy = Busy(units, p, num_devices);
  for (DeviceId d = 0; d < num_devices; ++d) {
    if (room[d] >= 0) continue;
    for (int32_t u : LargestFirst(units, p, d, size)) {
      if (room[d] >= 0) break;
      if (size[u] == 0) break;
      const DeviceId to = Destination(units, u, d, size[u], room, busy);
      if (to == kNone) continue;
      units.Assign(p, u, to);
      room[d] += size[u];
      if (room[to] != kUnbounded) room[to] -= size[u];
      busy[d] -= units.time(u, d);
      busy[to] += units.time(u, to);
    }
    if (room[d] < 0) {
      const int64_t capacity = Capacity(topo, d);
      return absl::FailedPreconditionError(absl::StrCat(
          "the placement does not fit memory and cannot be repaired: device '", topo.device(d).name, "' holds ",
          FormatBytes(static_cast<double>(capacity - room[d])), " (parameters, gradients, optimizer state and activations of the micro-batches in flight), ",
          FormatBytes(static_cast<double>(-room[d])), " over its ", FormatBytes(static_cast<double>(capacity)),
          ", and none of its units fits on another device it may use", Totals(problem.graph(), topo)));
    }
  }
  return absl::OkStatus();
}

// STEP_TIME and LATENCY: the simulated peak also holds activations and received copies, which moving units
// changes, so repair moves enough units to cover each overflow and simulates again.
absl::Status RepairPeak(const PlacementProblem& problem, const SearchUnits& units, const Budget& budget, Placement& p) {
  const Topology& topo = problem.topology();
  const int32_t num_devices = topo.num_devices();
  std::vector<int64_t> size(units.num_units());
  for (int32_t u = 0; u < units.num_units(); ++u) size[u] = units.footprint_bytes(u);
  std::vector<uint8_t> moved(units.num_units(), 0);  // each unit moves at most once, so repair ends
  SimulatorConfig config = problem.simulator;
  config.record_timeline = false;
  for (;;) {
    if (budget.Expired()) {
      const absl::Status s = budget.ExpiredStatus();
      return absl::Status(s.code(),
                          absl::StrCat(s.message(), " (while moving units off devices that run out of memory)"));
    }
    absl::StatusOr<SimulationResult> sim = Simulate(*problem.costs, p, config);
    if (!sim.ok()) return sim.status();
    if (sim->fits_memory) return absl::OkStatus();
    std::vector<int64_t> room(num_devices);
    for (DeviceId d = 0; d < num_devices; ++d) {
      room[d] = Capacity(topo, d) == kUnbounded ? kUnbounded : Capacity(topo, d) - sim->devices[d].peak_memory;
    }
    std::vector<double> busy = Busy(units, p, num_devices);
    bool any = false;
    for (DeviceId d = 0; d < num_devices; ++d) {
      if (room[d] >= 0) continue;
      int64_t excess = -room[d];
      for (int32_t u : LargestFirst(units, p, d, size)) {
        if (excess <= 0) break;
        if (moved[u] || size[u] == 0) continue;
        const DeviceId to = Destination(units, u, d, size[u], room, busy);
        if (to == kNone) continue;
        units.Assign(p, u, to);
        moved[u] = 1;
        any = true;
        excess -= size[u];
        if (room[to] != kUnbounded) room[to] -= size[u];
        busy[d] -= units.time(u, d);
        busy[to] += units.time(u, to);
      }
    }
    if (!any) {
      DeviceId worst = 0;
      for (DeviceId d = 1; d < num_devices; ++d) {
        if (room[d] < room[worst]) worst = d;
      }
      const int64_t capacity = Capacity(topo, worst);
      return absl::FailedPreconditionError(absl::StrCat(
          "the placement does not fit memory and cannot be repaired: device '", topo.device(worst).name, "' peaks at ",
          FormatBytes(static_cast<double>(sim->devices[worst].peak_memory)), ", ",
          FormatBytes(static_cast<double>(-room[worst])), " over its ", FormatBytes(static_cast<double>(capacity)),
          ", and none of its units fits on another device it may use", Totals(problem.graph(), topo)));
    }
  }
}

}  // namespace

absl::Status RepairMemory(const PlacementProblem& problem, const SearchUnits& units, const Budget& budget,
                          Placement& placement) {
  if (problem.objective == Objective::kThroughput) return RepairParameters(problem, units, placement);
  return RepairPeak(problem, units, budget, placement);
}

}  // namespace placement::search
