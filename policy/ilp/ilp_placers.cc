#include "policy/ilp/ilp_placers.h"

#include <memory>

#include "policy/ilp/latency_ilp.h"
#include "policy/ilp/throughput_ilp.h"
#include "policy/registry.h"

namespace placement {
namespace {

class ThroughputIlpPlacer : public Placer {
 public:
  absl::string_view name() const override { return "ilp_throughput"; }
  absl::string_view description() const override {
    return "exact non-contiguous max-load split as a MILP (CBC), warm-started from a contiguous split and local search";
  }
  std::vector<Objective> objectives() const override { return {Objective::kThroughput}; }
  absl::StatusOr<PlacerResult> Place(const PlacementProblem& problem, const Budget& budget) const override {
    return ilp::PlaceThroughputIlp(problem, budget);
  }
};

class LatencyIlpPlacer : public Placer {
 public:
  absl::string_view name() const override { return "ilp_latency"; }
  absl::string_view description() const override {
    return "placement and schedule of small graphs (<= 60 operators) as a disjunctive MILP (CBC), checked by the "
           "simulator";
  }
  std::vector<Objective> objectives() const override { return {Objective::kLatency, Objective::kStepTime}; }
  absl::StatusOr<PlacerResult> Place(const PlacementProblem& problem, const Budget& budget) const override {
    return ilp::PlaceLatencyIlp(problem, budget);
  }
};

}  // namespace

void RegisterIlpPlacers(PlacerRegistry& registry) {
  registry.Register(std::make_unique<ThroughputIlpPlacer>());
  registry.Register(std::make_unique<LatencyIlpPlacer>());
}

}  // namespace placement
