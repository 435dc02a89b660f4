// The common frame of the heuristic placers and the factory of each one (registered by heuristic_placers.cc).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "policy/heuristics/placement_state.h"
#include "policy/placer.h"

namespace placement::heuristics {

// Checks the budget and the problem, resolves units and pins, then runs the algorithm. Every heuristic accepts
// all three objectives: the memory model follows the objective (PlaceWithMemoryFallback), and the result is
// scored under it.
class HeuristicPlacer : public Placer {
 public:
  HeuristicPlacer(absl::string_view name, absl::string_view description) : name_(name), description_(description) {}

  absl::string_view name() const final { return name_; }
  absl::string_view description() const final { return description_; }
  std::vector<Objective> objectives() const override {
    return {Objective::kStepTime, Objective::kThroughput, Objective::kLatency};
  }
  absl::StatusOr<PlacerResult> Place(const PlacementProblem& problem, const Budget& budget) const final;

 protected:
  // `units` is built; the budget was not yet expired.
  virtual absl::StatusOr<PlacerResult> Run(const PlacementProblem& problem, const UnitIndex& units, MemoryModel memory,
                                           const Budget& budget) const = 0;
  // `memory` is the model Place chose: the objective's, then kAllocations where that one's answer did not fit.
  MemoryLedger NewLedger(const PlacementProblem& problem, const UnitIndex& units, MemoryModel memory) const {
    return MemoryLedger(*problem.costs, units, memory);
  }

 private:
  std::string name_;
  std::string description_;
};

std::unique_ptr<Placer> MakeSingleDevicePlacer();
std::unique_ptr<Placer> MakeRoundRobinPlacer();
std::unique_ptr<Placer> MakeHashPlacer();
std::unique_ptr<Placer> MakeCriticalPathPlacer();
std::unique_ptr<Placer> MakeMTopoPlacer();
std::unique_ptr<Placer> MakeMEtfPlacer();
std::unique_ptr<Placer> MakeMSctPlacer();
std::unique_ptr<Placer> MakeHeftPlacer();
std::unique_ptr<Placer> MakeScotchPlacer();
std::unique_ptr<Placer> MakeMetisPlacer();

}  // namespace placement::heuristics
