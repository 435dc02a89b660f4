#include "policy/ilp/latency_model.h"

#include <algorithm>
#include <limits>
#include <utility>

namespace placement::ilp {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// The model's schedule of a placement by serial list scheduling: repeatedly start an operator whose
// predecessors are scheduled, on its device after everything scheduled there before it. `earliest` picks the
// one that can start soonest (ties to the lower topological rank); otherwise operators go in topological
// order. Feasible for the MILP; returns the makespan and, when asked, each operator's start and its place in
// the scheduling order. Operators of unplaced units are skipped (greedy construction), as are edges from them.
double SerialSchedule(const LatencyInput& in, const std::vector<DeviceId>& unit_device, bool earliest,
                      std::vector<double>* start, std::vector<int32_t>* position) {
  const Graph& g = in.g();
  const int32_t n = g.num_ops();
  std::vector<double> end(n, 0.0), free_at(in.num_devices(), 0.0);
  std::vector<int32_t> waiting(n, 0);
  std::vector<uint8_t> done(n, 0);
  start->assign(n, 0.0);
  position->assign(n, 0);
  auto device = [&](OpId v) { return unit_device[in.units->unit_of[v]]; };
  for (EdgeId e = 0; e < g.num_edges(); ++e) ++waiting[g.edge(e).dst];
  double makespan = 0;
  for (int32_t step = 0; step < n; ++step) {
    OpId pick = kNone;
    double pick_start = kInf;
    for (OpId v : g.topo_order()) {
      if (done[v] || waiting[v] > 0) continue;
      double s = 0;
      if (const DeviceId d = device(v); d != kNone) {
        s = free_at[d];
        for (EdgeId e : g.in_edges(v)) {
          const OpId u = g.edge(e).src;
          if (device(u) != kNone) s = std::max(s, end[u] + in.costs->transfer_time(g.edge_tensor(e), device(u), d));
        }
      }
      if (s < pick_start) pick_start = s, pick = v;
      if (!earliest) break;
    }
    done[pick] = 1;
    for (const Edge& e : g.out_edges(pick)) --waiting[e.dst];
    (*position)[pick] = step;
    const DeviceId d = device(pick);
    if (d == kNone) continue;
    end[pick] = pick_start + in.costs->op_time(pick, d);
    free_at[d] = end[pick] + in.gap;
    makespan = std::max(makespan, end[pick]);
    (*start)[pick] = pick_start;
  }
  return makespan;
}

}  // namespace

LatencyInput BuildLatencyInput(const CostModel& costs, const Units& units, double gap, bool all_buffers) {
  const Graph& g = costs.graph();
  LatencyInput in{&costs, &units, {}, {}, gap};
  std::vector<int64_t> op_bytes(g.num_ops());
  for (OpId v = 0; v < g.num_ops(); ++v) {
    op_bytes[v] = g.param_bytes(v);
    if (!all_buffers) continue;
    op_bytes[v] += g.temp_bytes(v);
    for (TensorId t = g.first_output(v); t < g.first_output(v + 1); ++t) op_bytes[v] += g.tensor(t).bytes;
  }
  in.bytes = UnitBytes(units, op_bytes);
  if (all_buffers) {  // one received copy of every tensor a unit reads from another unit
    for (int32_t u = 0; u < units.num_units(); ++u) {
      std::vector<TensorId> seen;
      for (OpId w : units.ops[u]) {
        for (EdgeId e : g.in_edges(w)) {
          const TensorId t = g.edge_tensor(e);
          if (units.unit_of[g.edge(e).src] == u || std::find(seen.begin(), seen.end(), t) != seen.end()) continue;
          seen.push_back(t);
          in.bytes[u] += g.tensor(t).bytes;
        }
      }
    }
  }
  in.reach.assign(g.num_ops(), 0);
  for (auto it = g.topo_order().rbegin(); it != g.topo_order().rend(); ++it) {
    for (const Edge& e : g.out_edges(*it)) in.reach[*it] |= in.reach[e.dst] | (uint64_t{1} << e.dst);
  }
  return in;
}

double Horizon(const LatencyInput& in) {
  const Graph& g = in.g();
  double horizon = 0;
  for (OpId v = 0; v < g.num_ops(); ++v) {
    double slowest = 0;
    for (DeviceId d = 0; d < in.num_devices(); ++d) {
      if (in.fits(in.units->unit_of[v], d)) slowest = std::max(slowest, in.costs->op_time(v, d));
    }
    horizon += slowest + in.gap;
    for (EdgeId e = g.out_begin(v); e < g.out_end(v); ++e) {
      double c = 0;
      for (DeviceId a = 0; a < in.num_devices(); ++a) {
        for (DeviceId d = 0; d < in.num_devices(); ++d)
          c = std::max(c, in.costs->transfer_time(g.edge_tensor(e), a, d));
      }
      horizon += c;
    }
  }
  return horizon;
}

double ListSchedule(const LatencyInput& in, const std::vector<DeviceId>& unit_device, std::vector<double>* start,
                    std::vector<int32_t>* position) {
  std::vector<double> s1, s2;
  std::vector<int32_t> p1, p2;
  const double in_order = SerialSchedule(in, unit_device, /*earliest=*/false, &s1, &p1);
  const double soonest = SerialSchedule(in, unit_device, /*earliest=*/true, &s2, &p2);
  const bool first = in_order <= soonest;
  if (start != nullptr) *start = first ? std::move(s1) : std::move(s2);
  if (position != nullptr) *position = first ? std::move(p1) : std::move(p2);
  return std::min(in_order, soonest);
}

bool FitsMemory(const LatencyInput& in, const std::vector<DeviceId>& unit_device) {
  std::vector<int64_t> used(in.num_devices(), 0);
  for (int32_t u = 0; u < in.units->num_units(); ++u) {
    if (unit_device[u] == kNone) continue;
    used[unit_device[u]] += in.bytes[u];
    if (used[unit_device[u]] > in.units->capacity[unit_device[u]] &&
        in.units->capacity[unit_device[u]] != kUnlimitedBytes)
      return false;
  }
  return true;
}

std::vector<DeviceId> GreedyPlacement(const LatencyInput& in, bool earliest) {
  const int32_t n = in.units->num_units();
  std::vector<DeviceId> device(n, kNone);
  std::vector<double> start;
  std::vector<int32_t> position;
  for (int32_t u = 0; u < n; ++u) {
    double best = kInf;
    DeviceId best_d = kNone;
    for (DeviceId d = 0; d < in.num_devices(); ++d) {
      if (!in.fits(u, d)) continue;
      device[u] = d;
      const double value = FitsMemory(in, device) ? SerialSchedule(in, device, earliest, &start, &position) : kInf;
      if (value < best) best = value, best_d = d;
    }
    if (best_d == kNone) return {};
    device[u] = best_d;
  }
  return device;
}

}  // namespace placement::ilp
