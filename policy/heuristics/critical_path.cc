// critical_path: the critical path on one device, the rest by earliest finish (CPOP, Topcuoglu et al. 2002).
//
// The critical path is the longest chain with every operator at its fastest time (the lower bound's path). Its
// units go to the quickest device whose memory holds them all (counted at their worst, every input received),
// or, when the path runs quicker split that way, over the quickest devices in path order, each filled before
// the next. The other operators follow in the order of
// upward + downward rank, each to the device where it finishes first, filling idle gaps; memory is checked for
// every unit as it is placed, and a path unit that no longer fits its device is placed like the others.
#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/units.h"
#include "policy/heuristics/heuristic_placer.h"
#include "policy/heuristics/list_scheduler.h"

namespace placement::heuristics {
namespace {

// Operators of the longest fastest-time chain, from source to sink.
std::vector<OpId> CriticalPath(const CostModel& costs) {
  const Graph& g = costs.graph();
  std::vector<double> finish(g.num_ops(), 0.0);
  std::vector<OpId> via(g.num_ops(), kNone);
  OpId last = kNone;
  for (OpId v : g.topo_order()) {
    double start = 0;
    for (EdgeId e : g.in_edges(v)) {
      const OpId p = g.edge(e).src;
      if (via[v] == kNone || finish[p] > start) {
        start = finish[p];
        via[v] = p;
      }
    }
    finish[v] = start + costs.fastest_time(v);
    if (last == kNone || finish[v] > finish[last]) last = v;
  }
  std::vector<OpId> path;
  for (OpId v = last; v != kNone; v = via[v]) path.push_back(v);
  std::reverse(path.begin(), path.end());
  return path;
}

// Where the critical path's free units go: the quickest device that holds the whole path at worst-case
// memory, or, when that is slower, the quickest devices filled in path order (a few transfers at the seams).
struct PathPlan {
  std::vector<DeviceId> device;   // per unit, kNone off the path
  std::vector<DeviceId> devices;  // the devices used, in path order
  bool fits = true;
};

PathPlan PlanPath(const CostModel& costs, const UnitIndex& units, const MemoryLedger& ledger,
                  absl::Span<const OpId> path, absl::Span<const int32_t> path_units,
                  absl::Span<const double> mean_edge) {
  const Graph& g = costs.graph();
  const int32_t nd = costs.topology().num_devices();
  PathPlan plan;
  plan.device.assign(units.num_units(), kNone);
  std::vector<std::pair<double, DeviceId>> ranked;  // (path time, device) for devices that may run all of it
  int64_t bytes = 0;
  for (int32_t u : path_units) bytes += ledger.upper(u);
  for (DeviceId d = 0; d < nd; ++d) {
    double time = 0;
    bool allowed = true;
    for (int32_t u : path_units) {
      allowed = allowed && units.allowed(u, d);
      time += units.time(u, d);
    }
    if (allowed) ranked.emplace_back(time, d);
  }
  if (ranked.empty()) return plan;
  std::sort(ranked.begin(), ranked.end());

  // Option 1: whole on the quickest device that holds it.
  DeviceId whole = kNone;
  double whole_time = kCannotRun;
  for (const auto& [time, d] : ranked) {
    if (bytes <= ledger.capacity(d)) {
      whole = d;
      whole_time = time;
      break;
    }
  }
  // Option 2: fill the ranked devices in path order.
  std::vector<DeviceId> fill(units.num_units(), kNone);
  double fill_time = 0;
  {
    size_t at = 0;
    int64_t used = 0;
    for (int32_t u : path_units) {
      while (at < ranked.size() && used + ledger.upper(u) > ledger.capacity(ranked[at].second)) {
        ++at;
        used = 0;
      }
      if (at == ranked.size()) {
        fill_time = kCannotRun;
        break;
      }
      fill[u] = ranked[at].second;
      used += ledger.upper(u);
      fill_time += units.time(u, fill[u]);
    }
    for (size_t i = 0; fill_time != kCannotRun && i + 1 < path.size(); ++i) {
      const DeviceId a = fill[units.unit_of(path[i])], b = fill[units.unit_of(path[i + 1])];
      if (a == b || a == kNone || b == kNone) continue;
      double seam = 0;
      for (EdgeId e = g.out_begin(path[i]); e < g.out_end(path[i]); ++e) {
        if (g.edge(e).dst == path[i + 1]) seam = std::max(seam, mean_edge[e]);
      }
      fill_time += seam;
    }
  }
  if (whole != kNone && whole_time <= fill_time) {
    for (int32_t u : path_units) plan.device[u] = whole;
    plan.devices = {whole};
    return plan;
  }
  if (fill_time != kCannotRun) {
    plan.device = std::move(fill);
  } else {
    plan.fits = false;  // best effort: the quickest device takes what fits, the scheduler places the rest
    for (int32_t u : path_units) plan.device[u] = ranked[0].second;
  }
  for (int32_t u : path_units) {
    if (plan.devices.empty() || plan.devices.back() != plan.device[u]) plan.devices.push_back(plan.device[u]);
  }
  return plan;
}

class CriticalPathPlacer final : public HeuristicPlacer {
 public:
  CriticalPathPlacer()
      : HeuristicPlacer("critical_path",
                        "the critical path on the quickest device(s) that hold it, the rest by earliest finish with "
                        "gap insertion (CPOP)") {}

 protected:
  absl::StatusOr<PlacerResult> Run(const PlacementProblem& problem, const UnitIndex& units, MemoryModel memory,
                                   const Budget& budget) const override {
    const CostModel& costs = *problem.costs;
    const Topology& topo = problem.topology();
    MemoryLedger ledger = NewLedger(problem, units, memory);

    const std::vector<OpId> path = CriticalPath(costs);
    std::vector<int32_t> path_units;
    {
      std::vector<uint8_t> seen(units.num_units(), 0);
      for (OpId v : path) {
        const int32_t u = units.unit_of(v);
        if (units.pinned(u) == kNone && !seen[u]) {
          seen[u] = 1;
          path_units.push_back(u);
        }
      }
    }
    const std::vector<double> mean_op = MeanOpTimes(costs);
    const std::vector<double> mean_edge = MeanTransferTimes(costs, units);
    const PathPlan plan = PlanPath(costs, units, ledger, path, path_units, mean_edge);
    if (budget.Expired()) return budget.ExpiredStatus();

    ListScheduleOptions options;
    options.mode = ListScheduleOptions::Mode::kStaticPriority;
    options.insertion = true;
    options.priority = UpwardRanks(costs, mean_op, mean_edge);
    const std::vector<double> down = DownwardRanks(costs, mean_op, mean_edge);
    for (size_t v = 0; v < options.priority.size(); ++v) options.priority[v] += down[v];
    options.preferred = plan.device;
    absl::StatusOr<ListScheduleResult> schedule = ListSchedule(costs, units, ledger, options, budget);
    if (!schedule.ok()) return schedule.status();

    std::vector<std::string> notes;
    if (plan.devices.empty()) {
      notes.push_back(absl::StrCat("no device can run the whole critical path (", path.size(),
                                   " operators); all placed by earliest finish"));
    } else {
      std::vector<std::string> names;
      for (DeviceId d : plan.devices) names.push_back(topo.device(d).name);
      notes.push_back(absl::StrCat("critical path of ", path.size(), " operators on ", absl::StrJoin(names, ", ")));
      if (!plan.fits)
        notes.push_back("the critical path does not fit at worst-case memory; its devices got what fitted");
    }
    if (schedule->fallbacks > 0)
      notes.push_back(absl::StrCat(schedule->fallbacks, " critical-path units did not fit the path device"));
    return FinishPlacement(problem, ledger, name(), std::move(notes));
  }
};

}  // namespace

std::unique_ptr<Placer> MakeCriticalPathPlacer() { return std::make_unique<CriticalPathPlacer>(); }

}  // namespace placement::heuristics
