#include "policy/tarnawski/tarnawski_placers.h"

#include <memory>

#include "policy/registry.h"
#include "policy/tarnawski/greedy.h"
#include "policy/tarnawski/instance.h"

namespace placement {
namespace {

// What every placer of the family shares: the objective and cost model it optimizes.
class TarnawskiPlacer : public Placer {
 public:
  std::vector<Objective> objectives() const override { return {Objective::kLatency}; }
  std::vector<CostModelKind> cost_models() const override { return {CostModelKind::kTarnawski}; }
};

class GreedyPlacer : public TarnawskiPlacer {
 public:
  absl::string_view name() const override { return "tarnawski_greedy"; }
  absl::string_view description() const override {
    return "Tarnawski et al.'s latency baseline: fill accelerators in a depth-first topological order of the blocks";
  }
  absl::StatusOr<PlacerResult> Place(const PlacementProblem& problem, const Budget& budget) const override {
    if (budget.Expired()) return budget.ExpiredStatus();
    absl::StatusOr<tarnawski::Instance> instance = tarnawski::BuildInstance(problem);
    if (!instance.ok()) return instance.status();
    absl::StatusOr<std::vector<DeviceId>> split = tarnawski::GreedySplit(*instance);
    if (!split.ok()) return split.status();
    return tarnawski::Answer(problem, *instance, *split, std::string(name()));
  }
};

}  // namespace

void RegisterTarnawskiPlacers(PlacerRegistry& registry) { registry.Register(std::make_unique<GreedyPlacer>()); }

}  // namespace placement
