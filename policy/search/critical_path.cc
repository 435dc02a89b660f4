#include "policy/search/critical_path.h"

#include <algorithm>
#include <tuple>

namespace placement::search {
namespace {

struct Arrival {
  TensorId tensor;
  DeviceId receiver;
  double end;
};

}  // namespace

StepAnalysis AnalyzeStep(const CostModel& costs, const Placement& placement, const SimulationResult& simulation,
                         const SimulatorConfig& config) {
  const Graph& g = costs.graph();
  const int32_t n = g.num_ops();
  StepAnalysis a;
  a.start.assign(n, 0);
  a.end.assign(n, 0);
  a.busy.assign(costs.topology().num_devices(), 0);
  a.on_critical.assign(n, 0);
  for (size_t d = 0; d < simulation.devices.size(); ++d) a.busy[d] = simulation.devices[d].busy;

  // The timeline is sorted by start, so the operator before each one on its device is the previous entry there.
  std::vector<OpId> previous_on_device(n, kNone);
  std::vector<OpId> last_on_device(costs.topology().num_devices(), kNone);
  std::vector<Arrival> arrivals;
  for (const TimelineEntry& e : simulation.timeline) {
    if (e.kind == TimelineEntry::Kind::kOp) {
      a.start[e.id] = e.start;
      a.end[e.id] = e.end;
      previous_on_device[e.id] = last_on_device[e.device];
      last_on_device[e.device] = e.id;
    } else {
      arrivals.push_back(Arrival{e.id, e.peer, e.end});
    }
  }
  std::sort(arrivals.begin(), arrivals.end(), [](const Arrival& x, const Arrival& y) {
    return std::tie(x.tensor, x.receiver) < std::tie(y.tensor, y.receiver);
  });
  auto arrival = [&](TensorId t, DeviceId receiver, double fallback) {
    const auto it = std::lower_bound(arrivals.begin(), arrivals.end(), std::make_pair(t, receiver),
                                     [](const Arrival& x, const std::pair<TensorId, DeviceId>& key) {
                                       return std::tie(x.tensor, x.receiver) < std::tie(key.first, key.second);
                                     });
    return it != arrivals.end() && it->tensor == t && it->receiver == receiver ? it->end : fallback;
  };

  OpId v = kNone;
  for (OpId w = 0; w < n; ++w) {
    if (v == kNone || a.end[w] > a.end[v]) v = w;
  }
  const double tolerance = 1e-9 * std::max(simulation.makespan, 1e-300);
  for (int32_t steps = 0; v != kNone && steps < n; ++steps) {
    a.critical.push_back(v);
    a.on_critical[v] = 1;
    const double start = a.start[v];
    const DeviceId here = placement.device[v];
    OpId producer = kNone;
    double latest = -1;
    for (EdgeId e : g.in_edges(v)) {
      const OpId p = g.edge(e).src;
      const double at = placement.device[p] == here ? a.end[p] : arrival(g.edge_tensor(e), here, a.end[p]);
      if (at > latest) {
        latest = at;
        producer = p;
      }
    }
    const OpId before = previous_on_device[v];
    if (producer != kNone && latest >= start - tolerance) {
      v = producer;
    } else if (before != kNone && a.end[before] + config.op_gap >= start - tolerance) {
      v = before;
    } else {
      v = kNone;
    }
    if (v != kNone && a.on_critical[v]) break;  // cannot happen with a consistent timeline; never loop
  }
  std::reverse(a.critical.begin(), a.critical.end());
  return a;
}

}  // namespace placement::search
