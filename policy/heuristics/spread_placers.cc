// round_robin and hash: the naive spreads every placement paper compares against.
//
// round_robin deals units (colocation groups, lone operators) in topological order to the devices in turn;
// hash sends each unit to the device a stable hash of its name picks (FNV-1a, identical on every platform and
// run). Both skip, in device order, devices that cannot run the unit or lack the memory for it; pinned units
// go to their pins.
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "policy/heuristics/heuristic_placer.h"

namespace placement::heuristics {
namespace {

uint64_t Fnv1a(absl::string_view text) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

// Places u on the first device from `start` on (cyclically) that may run it and has the memory; returns it.
absl::StatusOr<DeviceId> PlaceFrom(const UnitIndex& units, MemoryLedger& ledger, int32_t u, DeviceId start,
                                   int32_t nd) {
  if (units.pinned(u) != kNone) {
    if (!ledger.Fits(u, units.pinned(u))) return ledger.Shortfall(u);
    ledger.Place(u, units.pinned(u));
    return units.pinned(u);
  }
  for (int32_t i = 0; i < nd; ++i) {
    const DeviceId d = (start + i) % nd;
    if (units.allowed(u, d) && ledger.Fits(u, d)) {
      ledger.Place(u, d);
      return d;
    }
  }
  return ledger.Shortfall(u);
}

class RoundRobinPlacer final : public HeuristicPlacer {
 public:
  RoundRobinPlacer()
      : HeuristicPlacer("round_robin", "units in topological order dealt to the devices in turn, skipping full ones") {}

 protected:
  absl::StatusOr<PlacerResult> Run(const PlacementProblem& problem, const UnitIndex& units, MemoryModel memory,
                                   const Budget& budget) const override {
    const int32_t nd = problem.topology().num_devices();
    MemoryLedger ledger = NewLedger(problem, units, memory);
    BudgetClock clock(budget);
    DeviceId next = 0;
    for (int32_t u : units.order()) {
      if (clock.Tick()) return clock.Status();
      absl::StatusOr<DeviceId> d = PlaceFrom(units, ledger, u, next, nd);
      if (!d.ok()) return d.status();
      if (units.pinned(u) == kNone) next = (*d + 1) % nd;
    }
    return FinishPlacement(problem, ledger, name());
  }
};

class HashPlacer final : public HeuristicPlacer {
 public:
  HashPlacer()
      : HeuristicPlacer("hash", "each unit on the device a stable hash of its name picks, probing on when full") {}

 protected:
  absl::StatusOr<PlacerResult> Run(const PlacementProblem& problem, const UnitIndex& units, MemoryModel memory,
                                   const Budget& budget) const override {
    const Graph& g = problem.graph();
    const int32_t nd = problem.topology().num_devices();
    MemoryLedger ledger = NewLedger(problem, units, memory);
    BudgetClock clock(budget);
    int32_t probed = 0;
    for (int32_t u : units.order()) {
      if (clock.Tick()) return clock.Status();
      const OpId v = units.first_op(u);
      const absl::string_view key =
          g.colocation_group(v) != kNone ? absl::string_view(g.colocation_groups()[g.colocation_group(v)]) : g.name(v);
      const DeviceId home = static_cast<DeviceId>(Fnv1a(key) % static_cast<uint64_t>(nd));
      absl::StatusOr<DeviceId> d = PlaceFrom(units, ledger, u, home, nd);
      if (!d.ok()) return d.status();
      if (*d != home && units.pinned(u) == kNone) ++probed;
    }
    std::vector<std::string> notes;
    if (probed > 0)
      notes.push_back(absl::StrCat(probed, " units moved past their hashed device (unsupported or full)"));
    return FinishPlacement(problem, ledger, name(), std::move(notes));
  }
};

}  // namespace

std::unique_ptr<Placer> MakeRoundRobinPlacer() { return std::make_unique<RoundRobinPlacer>(); }
std::unique_ptr<Placer> MakeHashPlacer() { return std::make_unique<HashPlacer>(); }

}  // namespace placement::heuristics
