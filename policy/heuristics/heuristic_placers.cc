#include "policy/heuristics/heuristic_placers.h"

#include "policy/heuristics/heuristic_placer.h"
#include "policy/registry.h"

namespace placement {
namespace heuristics {

absl::StatusOr<PlacerResult> HeuristicPlacer::Place(const PlacementProblem& problem, const Budget& budget) const {
  if (absl::Status s = CheckStart(problem, budget); !s.ok()) return s;
  absl::StatusOr<UnitIndex> units = UnitIndex::Build(*problem.costs);
  if (!units.ok()) return units.status();
  if (budget.Expired()) return budget.ExpiredStatus();
  return PlaceWithMemoryFallback(problem, budget,
                                 [&](MemoryModel memory) { return Run(problem, *units, memory, budget); });
}

}  // namespace heuristics

void RegisterHeuristicPlacers(PlacerRegistry& registry) {
  registry.Register(heuristics::MakeSingleDevicePlacer());
  registry.Register(heuristics::MakeRoundRobinPlacer());
  registry.Register(heuristics::MakeHashPlacer());
  registry.Register(heuristics::MakeCriticalPathPlacer());
  registry.Register(heuristics::MakeMTopoPlacer());
  registry.Register(heuristics::MakeMEtfPlacer());
  registry.Register(heuristics::MakeMSctPlacer());
  registry.Register(heuristics::MakeHeftPlacer());
  registry.Register(heuristics::MakeScotchPlacer());
  registry.Register(heuristics::MakeMetisPlacer());
}

}  // namespace placement
