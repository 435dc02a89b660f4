// single_device: everything on one device, the quickest (by the graph's total compute time there) whose memory
// holds it all. Pinned units stay on their pins and units the device's kind cannot run go to their quickest
// device that can, so the baseline exists for every valid problem.
#include <algorithm>
#include <numeric>
#include <utility>

#include "absl/strings/str_cat.h"
#include "graph/units.h"
#include "policy/heuristics/heuristic_placer.h"

namespace placement::heuristics {
namespace {

// Each unit's quickest allowed device: where it goes when the chosen device cannot take it.
std::vector<DeviceId> QuickestDevices(const UnitIndex& units, int32_t num_devices) {
  std::vector<DeviceId> quickest(units.num_units(), kNone);
  for (int32_t u = 0; u < units.num_units(); ++u) {
    for (DeviceId d = 0; d < num_devices; ++d) {
      if (units.allowed(u, d) && (quickest[u] == kNone || units.time(u, d) < units.time(u, quickest[u])))
        quickest[u] = d;
    }
  }
  return quickest;
}

// The device each unit takes when `home` is the chosen device.
DeviceId Destination(const UnitIndex& units, absl::Span<const DeviceId> quickest, int32_t u, DeviceId home) {
  if (units.pinned(u) != kNone) return units.pinned(u);
  return units.allowed(u, home) ? home : quickest[u];
}

class SingleDevicePlacer final : public HeuristicPlacer {
 public:
  SingleDevicePlacer()
      : HeuristicPlacer("single_device",
                        "everything on the quickest device that holds it (pinned and unsupported operators excepted)") {
  }

 protected:
  absl::StatusOr<PlacerResult> Run(const PlacementProblem& problem, const UnitIndex& units, MemoryModel memory,
                                   const Budget& budget) const override {
    const Topology& topo = problem.topology();
    const int32_t nd = topo.num_devices();
    BudgetClock clock(budget);

    const std::vector<DeviceId> quickest = QuickestDevices(units, nd);
    std::vector<double> total(nd, 0.0);
    std::vector<int64_t> least_bytes(nd, 0);  // fixed bytes landing on the device itself
    MemoryLedger probe = NewLedger(problem, units, memory);
    for (DeviceId home = 0; home < nd; ++home) {
      for (int32_t u : units.order()) {
        const DeviceId d = Destination(units, quickest, u, home);
        total[home] += units.time(u, d);
        if (d == home) least_bytes[home] += probe.fixed(u);
        if (clock.Tick()) return clock.Status();
      }
    }
    std::vector<DeviceId> by_speed(nd);
    std::iota(by_speed.begin(), by_speed.end(), 0);
    std::stable_sort(by_speed.begin(), by_speed.end(), [&](DeviceId a, DeviceId b) { return total[a] < total[b]; });

    absl::Status first_failure;
    for (DeviceId home : by_speed) {
      if (least_bytes[home] > probe.capacity(home)) {
        if (first_failure.ok()) {
          first_failure = absl::FailedPreconditionError(
              absl::StrCat("no single device holds the graph: on ", topo.device(home).name, ", the quickest, it needs ",
                           FormatBytes(least_bytes[home]), " but the device has ", FormatBytes(probe.capacity(home)),
                           "; ", probe.Totals()));
        }
        continue;
      }
      MemoryLedger ledger = NewLedger(problem, units, memory);
      int32_t elsewhere = 0;
      absl::Status failed;
      for (int32_t u : units.order()) {
        if (clock.Tick()) return clock.Status();
        const DeviceId d = Destination(units, quickest, u, home);
        if (!ledger.Fits(u, d)) {
          failed = ledger.Shortfall(u);
          break;
        }
        ledger.Place(u, d);
        if (d != home) ++elsewhere;
      }
      if (!failed.ok()) {
        if (first_failure.ok()) {
          first_failure = absl::FailedPreconditionError(
              absl::StrCat("no single device holds the graph; on ", topo.device(home).name, ": ", failed.message()));
        }
        continue;
      }
      std::vector<std::string> notes = {absl::StrCat("everything on ", topo.device(home).name)};
      if (elsewhere > 0) {
        notes.push_back(absl::StrCat(elsewhere, " pinned or unsupported units placed elsewhere"));
      }
      return FinishPlacement(problem, ledger, name(), std::move(notes));
    }
    return first_failure;
  }
};

}  // namespace

std::unique_ptr<Placer> MakeSingleDevicePlacer() { return std::make_unique<SingleDevicePlacer>(); }

}  // namespace placement::heuristics
