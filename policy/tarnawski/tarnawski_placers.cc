#include "policy/tarnawski/tarnawski_placers.h"

#include <memory>
#include <utility>

#include "absl/strings/str_format.h"

#include "policy/registry.h"
#include "policy/tarnawski/greedy.h"
#include "policy/tarnawski/instance.h"
#include "policy/tarnawski/latency_ip.h"
#include "policy/tarnawski/search.h"

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

class SearchPlacer : public TarnawskiPlacer {
 public:
  absl::string_view name() const override { return "tarnawski_search"; }
  absl::string_view description() const override {
    return "iterated local search over contiguous splits of Tarnawski et al.'s latency model, from the greedy or a "
           "given start";
  }
  absl::StatusOr<PlacerResult> Place(const PlacementProblem& problem, const Budget& budget) const override {
    if (budget.Expired()) return budget.ExpiredStatus();
    absl::StatusOr<tarnawski::Instance> instance = tarnawski::BuildInstance(problem);
    if (!instance.ok()) return instance.status();
    absl::StatusOr<std::vector<DeviceId>> start = tarnawski::StartSplit(problem, *instance);
    if (!start.ok()) return start.status();
    tarnawski::SearchOptions options;
    options.seed = problem.seed;
    const tarnawski::SearchOutcome found = tarnawski::SearchSplit(*instance, *std::move(start), options, budget);
    absl::StatusOr<PlacerResult> result = tarnawski::Answer(problem, *instance, found.split, std::string(name()));
    if (!result.ok()) return result.status();
    result->notes.push_back(absl::StrFormat("%d splits scored, %d kicks, %d improvements; %s", found.evaluations,
                                            found.kicks, found.improvements,
                                            found.converged ? "converged" : "stopped by the deadline"));
    return result;
  }
};

class IpPlacer : public TarnawskiPlacer {
 public:
  IpPlacer(const char* name, int32_t q, const char* description) : name_(name), q_(q), description_(description) {}
  absl::string_view name() const override { return name_; }
  absl::string_view description() const override { return description_; }
  absl::StatusOr<PlacerResult> Place(const PlacementProblem& problem, const Budget& budget) const override {
    return tarnawski::PlaceLatencyIp(problem, budget, q_, name_);
  }

 private:
  const char* name_;
  int32_t q_;
  const char* description_;
};

}  // namespace

void RegisterTarnawskiPlacers(PlacerRegistry& registry) {
  registry.Register(std::make_unique<GreedyPlacer>());
  registry.Register(std::make_unique<SearchPlacer>());
  registry.Register(std::make_unique<IpPlacer>(
      "ilp_tarnawski", 1,
      "Tarnawski et al.'s latency integer program (contiguous) on CBC, warm-started by tarnawski_search"));
  registry.Register(std::make_unique<IpPlacer>(
      "ilp_tarnawski_nc", 2, "the same program with two subgraphs per accelerator (their non-contiguous variant)"));
}

}  // namespace placement
