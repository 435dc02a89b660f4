// Every answer's value is at least its lower bound: each placer of the default registry, for each objective it
// optimizes, and the plans (data, pipeline, hybrid) of a training step, on random graphs and clusters. A figure
// below the bound would mean the bound is no bound, or the value is not what the placement does.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "graph/cost_model.h"
#include "graph/generators.h"
#include "graph/topology_json.h"
#include "graph/training.h"
#include "policy/placer_families.h"

namespace placement {
namespace {

constexpr double kSlack = 1e-9;

std::vector<Graph> Graphs() {
  std::vector<Graph> graphs;
  for (uint64_t seed : {3, 7}) {
    LayeredDagOptions o;
    o.num_ops = 40;
    o.seed = seed;
    absl::StatusOr<Graph> forward = LayeredRandomDag(o);
    EXPECT_TRUE(forward.ok()) << forward.status();
    if (!forward.ok()) continue;
    absl::StatusOr<Graph> step = BuildTrainingGraph(*forward);
    EXPECT_TRUE(step.ok()) << step.status();
    graphs.push_back(*std::move(forward));
    if (step.ok()) graphs.push_back(*std::move(step));
  }
  return graphs;
}

void ExpectValueAtLeastBound(const PlacerResult& r, const std::string& what) {
  const double bound = r.evaluation.bound.value;
  EXPECT_GE(r.evaluation.value, bound * (1 - kSlack)) << what << " (" << r.algorithm << ")";
}

TEST(BoundsProperty, EveryPlacersValueIsAtLeastItsLowerBound) {
  const std::vector<Graph> graphs = Graphs();
  int32_t answers = 0;
  for (const char* cluster : {"3xA100", "2x2xV100"}) {
    const absl::StatusOr<Topology> topology = ParseTopologyShorthand(cluster);
    ASSERT_TRUE(topology.ok()) << topology.status();
    for (size_t i = 0; i < graphs.size(); ++i) {
      const absl::StatusOr<CostModel> costs = CostModel::Create(graphs[i], *topology);
      ASSERT_TRUE(costs.ok()) << costs.status();
      for (const Placer* placer : DefaultPlacerRegistry().All()) {
        for (Objective objective : placer->objectives()) {
          PlacementProblem problem;
          problem.costs = &*costs;
          problem.objective = objective;
          const absl::StatusOr<PlacerResult> r = placer->Place(problem, Budget::For(absl::Milliseconds(150)));
          if (!r.ok()) continue;  // refusals (memory, size limits, an expired budget) have no value to check
          ++answers;
          ExpectValueAtLeastBound(*r, std::string(placer->name()) + " " + std::string(ObjectiveName(objective)) +
                                          " on " + cluster + ", graph " + std::to_string(i));
        }
      }
    }
  }
  EXPECT_GT(answers, 50);  // the property was checked, not skipped
}

TEST(BoundsProperty, EveryPlansValueIsAtLeastItsLowerBound) {
  const std::vector<Graph> graphs = Graphs();
  const absl::StatusOr<const Placer*> automatic = DefaultPlacerRegistry().Find("auto");
  ASSERT_TRUE(automatic.ok()) << automatic.status();
  int32_t answers = 0;
  for (const char* cluster : {"4xA100", "2x4xH100"}) {
    const absl::StatusOr<Topology> topology = ParseTopologyShorthand(cluster);
    ASSERT_TRUE(topology.ok()) << topology.status();
    for (size_t i = 1; i < graphs.size(); i += 2) {  // the training steps
      const absl::StatusOr<CostModel> costs = CostModel::Create(graphs[i], *topology);
      ASSERT_TRUE(costs.ok()) << costs.status();
      for (Parallelism p : {Parallelism::kData, Parallelism::kPipeline, Parallelism::kHybrid}) {
        for (int64_t global_batch : {0, 16}) {
          PlacementProblem problem;
          problem.costs = &*costs;
          problem.objective = Objective::kThroughput;
          problem.parallelism = p;
          problem.global_batch = global_batch;
          const absl::StatusOr<PlacerResult> r = (*automatic)->Place(problem, Budget::For(absl::Milliseconds(300)));
          if (!r.ok()) continue;
          ++answers;
          ExpectValueAtLeastBound(*r, std::string(ParallelismName(p)) + " on " + cluster + ", global batch " +
                                          std::to_string(global_batch) + ", graph " + std::to_string(i));
        }
      }
    }
  }
  EXPECT_GT(answers, 10);
}

}  // namespace
}  // namespace placement
