// m_topo: Baechi's m-TOPO (Jeon et al., SoCC 2020). The topological order of units is cut into contiguous
// chunks, one per device in device order, each of about equal compute time on its device: a device takes units
// while the middle of the next unit stays within its share, and its share is the remaining work over the
// remaining devices' speeds, so slower devices get proportionally less and a chunk cut short by memory spreads
// its rest over the devices after it. A unit that does not fit ends the chunk. Pinned units go to their pins,
// and units the current device cannot run to the least loaded device that can; neither moves the cut.
#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "policy/heuristics/heuristic_placer.h"

namespace placement::heuristics {
namespace {

class MTopoPlacer final : public HeuristicPlacer {
 public:
  MTopoPlacer()
      : HeuristicPlacer(
            "m_topo",
            "Baechi m-TOPO: the topological order cut into contiguous chunks of equal compute, memory-capped") {}

 protected:
  absl::StatusOr<PlacerResult> Run(const PlacementProblem& problem, const UnitIndex& units, MemoryModel memory,
                                   const Budget& budget) const override {
    const int32_t nd = problem.topology().num_devices();
    MemoryLedger ledger = NewLedger(problem, units, memory);
    BudgetClock clock(budget);
    const std::vector<double> speed = DeviceSpeeds(*problem.costs);

    double remaining = 0;  // fastest-time work of the free units not yet placed
    for (int32_t u = 0; u < units.num_units(); ++u) {
      if (units.pinned(u) == kNone) remaining += units.fastest_time(u);
    }
    std::vector<double> load(nd, 0.0);  // busy time per device
    DeviceId c = 0;
    double share = 0;
    auto open_chunk = [&]() {
      double speeds = 0;
      for (DeviceId d = c; d < nd; ++d) speeds += speed[d];
      share = speeds > 0 ? remaining / speeds : 0;
    };
    open_chunk();
    int32_t off_chunk = 0, cut_by_memory = 0;

    for (int32_t u : units.order()) {
      if (clock.Tick()) return clock.Status();
      DeviceId target = kNone;
      if (units.pinned(u) != kNone) {
        target = units.pinned(u);
        if (!ledger.Fits(u, target)) return ledger.Shortfall(u);
      } else if (!units.allowed(u, c)) {
        for (DeviceId d = 0; d < nd; ++d) {
          if (units.allowed(u, d) && ledger.Fits(u, d) && (target == kNone || load[d] < load[target])) target = d;
        }
        if (target == kNone) return ledger.Shortfall(u);
        ++off_chunk;
      } else {
        const double w = units.time(u, c);
        if (c + 1 < nd && load[c] > 0 && load[c] + w / 2 > share) {
          ++c;
          open_chunk();
        }
        while (c + 1 < nd && units.allowed(u, c) && !ledger.Fits(u, c)) {
          ++c;
          ++cut_by_memory;
          open_chunk();
        }
        if (units.allowed(u, c) && ledger.Fits(u, c)) {
          target = c;
        } else {
          // Past the last device: any device that still has room.
          for (DeviceId d = 0; d < nd; ++d) {
            if (units.allowed(u, d) && ledger.Fits(u, d) && (target == kNone || load[d] < load[target])) target = d;
          }
          if (target == kNone) return ledger.Shortfall(u);
          ++off_chunk;
        }
      }
      if (units.pinned(u) == kNone) remaining -= units.fastest_time(u);
      ledger.Place(u, target);
      load[target] += units.time(u, target);
    }
    std::vector<std::string> notes;
    if (cut_by_memory > 0) notes.push_back(absl::StrCat(cut_by_memory, " chunks ended early for memory"));
    if (off_chunk > 0)
      notes.push_back(absl::StrCat(off_chunk, " units placed outside their chunk (unsupported or out of memory)"));
    return FinishPlacement(problem, ledger, name(), std::move(notes));
  }
};

}  // namespace

std::unique_ptr<Placer> MakeMTopoPlacer() { return std::make_unique<MTopoPlacer>(); }

}  // namespace placement::heuristics
