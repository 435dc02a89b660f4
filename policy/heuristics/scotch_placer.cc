// scotch: a k-way mapping of the unit graph by Scotch (Pellegrini), part i = device i.
//
// Vertices are units (colocation groups contracted) weighted by their fastest time; edges carry the mean
// transfer time of the tensors between them. The target is Scotch's weighted complete graph (archCmpltw) with
// each device weighted by its speed, so a device twice as fast gets twice the work; on identical devices that
// is exactly SCOTCH_graphPart. Pinned units, and units only one device can run, are fixed vertices. Scotch
// balances compute only; memory is then repaired by AssignParts.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <mutex>
#include <utility>

#include "absl/strings/str_cat.h"
#include "policy/heuristics/heuristic_placer.h"
#include "policy/heuristics/partition_common.h"

extern "C" {
#include <scotch.h>
}

namespace placement::heuristics {
namespace {

static_assert(sizeof(SCOTCH_Num) == sizeof(int32_t), "Debian's default Scotch uses 32-bit integers");

// Scotch keeps its random generator in process-wide state; one mapping at a time keeps results reproducible.
std::mutex& ScotchMutex() {
  static std::mutex* m = new std::mutex;
  return *m;
}

// Runs the mapping; parts[u] is the device of unit u, or the call fails naming the Scotch step.
absl::Status MapWithScotch(const UnitGraph& ug, absl::Span<const int32_t> device_weight, uint64_t seed,
                           std::vector<SCOTCH_Num>& parts) {
  const SCOTCH_Num nv = static_cast<SCOTCH_Num>(ug.vertex_weight.size());
  std::vector<SCOTCH_Num> verttab(ug.xadj.begin(), ug.xadj.end());
  std::vector<SCOTCH_Num> edgetab(ug.adjncy.begin(), ug.adjncy.end());
  std::vector<int32_t> velo = ScaleToIntegers(ug.vertex_weight);
  std::vector<int32_t> edlo = ScaleToIntegers(ug.edge_weight);
  std::vector<SCOTCH_Num> velotab(velo.begin(), velo.end()), edlotab(edlo.begin(), edlo.end());
  std::vector<SCOTCH_Num> archweights(device_weight.begin(), device_weight.end());

  std::lock_guard<std::mutex> lock(ScotchMutex());
  SCOTCH_randomSeed(static_cast<SCOTCH_Num>(seed & 0x7fffffff));
  SCOTCH_randomReset();
  SCOTCH_Graph graph;
  SCOTCH_Arch arch;
  SCOTCH_Strat strat;
  SCOTCH_graphInit(&graph);
  SCOTCH_archInit(&arch);
  SCOTCH_stratInit(&strat);
  absl::Status status;
  if (SCOTCH_graphBuild(&graph, 0, nv, verttab.data(), nullptr, velotab.data(), nullptr,
                        static_cast<SCOTCH_Num>(edgetab.size()), edgetab.data(),
                        edlotab.empty() ? nullptr : edlotab.data()) != 0) {
    status = absl::InternalError("Scotch rejected the unit graph (SCOTCH_graphBuild)");
  } else if (SCOTCH_archCmpltw(&arch, static_cast<SCOTCH_Num>(archweights.size()), archweights.data()) != 0) {
    status = absl::InternalError("Scotch rejected the device weights (SCOTCH_archCmpltw)");
  } else if (SCOTCH_stratGraphMapBuild(&strat, SCOTCH_STRATQUALITY, static_cast<SCOTCH_Num>(archweights.size()),
                                       0.05) != 0) {
    status = absl::InternalError("Scotch could not build a mapping strategy (SCOTCH_stratGraphMapBuild)");
  } else if (SCOTCH_graphMapFixed(&graph, &arch, &strat, parts.data()) != 0) {
    status = absl::InternalError("Scotch failed to map the unit graph (SCOTCH_graphMapFixed)");
  }
  SCOTCH_stratExit(&strat);
  SCOTCH_archExit(&arch);
  SCOTCH_graphExit(&graph);
  return status;
}

class ScotchPlacer final : public HeuristicPlacer {
 public:
  ScotchPlacer()
      : HeuristicPlacer("scotch",
                        "Scotch k-way mapping of the unit graph (compute-balanced by device speed, cut transfers), "
                        "memory repaired") {}

 protected:
  absl::StatusOr<PlacerResult> Run(const PlacementProblem& problem, const UnitIndex& units, MemoryModel memory,
                                   const Budget& budget) const override {
    const int32_t nd = problem.topology().num_devices();
    const int32_t nu = units.num_units();
    std::vector<int32_t> part(nu, 0);
    if (nd > 1) {
      const UnitGraph ug = ContractUnits(*problem.costs, units);
      const std::vector<double> speed = DeviceSpeeds(*problem.costs);
      std::vector<int32_t> weight(nd);
      double fastest = 0;
      for (double s : speed) fastest = std::max(fastest, s);
      for (DeviceId d = 0; d < nd; ++d)
        weight[d] = std::max(1, static_cast<int32_t>(std::lround(1000 * speed[d] / fastest)));
      std::vector<SCOTCH_Num> parts(nu, -1);
      for (int32_t u = 0; u < nu; ++u) {
        if (units.pinned(u) != kNone) {
          parts[u] = units.pinned(u);
          continue;
        }
        DeviceId only = kNone;
        int32_t count = 0;
        for (DeviceId d = 0; d < nd; ++d) {
          if (units.allowed(u, d)) {
            only = d;
            ++count;
          }
        }
        if (count == 1) parts[u] = only;
      }
      if (budget.Expired()) return budget.ExpiredStatus();
      if (absl::Status s = MapWithScotch(ug, weight, problem.seed, parts); !s.ok()) return s;
      for (int32_t u = 0; u < nu; ++u) part[u] = static_cast<int32_t>(parts[u]);
    }
    if (budget.Expired()) return budget.ExpiredStatus();
    MemoryLedger ledger = NewLedger(problem, units, memory);
    absl::StatusOr<RepairStats> stats = AssignParts(problem, units, ledger, part, budget);
    if (!stats.ok()) return stats.status();
    return FinishPlacement(problem, ledger, name(), RepairNotes(*stats));
  }
};

}  // namespace

std::unique_ptr<Placer> MakeScotchPlacer() { return std::make_unique<ScotchPlacer>(); }

}  // namespace placement::heuristics
