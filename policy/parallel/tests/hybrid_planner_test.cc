// The hybrid planner: exact against brute force on small chains under PipeDream's cost model, never worse than
// PipeDream's own planner on its published rows, and the errors a plan can run into.
#include "policy/parallel/hybrid_placer.h"

#include <functional>
#include <random>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/pipedream.h"
#include "graph/topology_json.h"
#include "policy/placer_families.h"
#include "tests/support/shared_inputs.h"

namespace placement {
namespace {

using ::testing::HasSubstr;

Topology Gpus(int n, double bandwidth, int64_t memory = 0) {
  std::vector<Device> devices;
  for (int i = 0; i < n; ++i)
    devices.push_back(Device{"gpu" + std::to_string(i), "gpu", DeviceType::kAccelerator, 1e12, 1e12, memory, 0, 0});
  std::vector<std::vector<double>> bw(n, std::vector<double>(n, bandwidth)), lat(n, std::vector<double>(n, 0));
  return *BuildMatrix("gpus", devices, bw, lat);
}

PlacementProblem Throughput(const CostModel& costs) {
  PlacementProblem problem;
  problem.costs = &costs;
  problem.objective = Objective::kThroughput;
  return problem;
}

// A chain of `layers` layers with random times, activations and weights, as a PipeDream profile.
std::string RandomChain(int layers, std::mt19937& rng) {
  std::uniform_real_distribution<double> ms(1, 20), mb(0.1, 20);
  std::string text;
  for (int i = 1; i <= layers; ++i) {
    absl::StrAppend(&text, "node", i, " -- Layer -- forward_compute_time=", ms(rng),
                    ", backward_compute_time=", ms(rng), ", activation_size=", mb(rng) * 1e6,
                    ", parameter_size=", mb(rng) * 1e6, "\n");
  }
  for (int i = 1; i < layers; ++i) absl::StrAppend(&text, "\tnode", i, " -- node", i + 1, "\n");
  return text;
}

// The best plan by enumeration: every split of the chain into consecutive stages and every replica count per
// stage with at most `devices` in all, scored by the plan model.
double BruteForce(const CostModel& costs, int layers, int devices) {
  double best = std::numeric_limits<double>::infinity();
  std::vector<int> cut_after, replicas;
  std::function<void(int, int)> stage = [&](int from, int used) {
    if (from == layers) {
      ParallelPlan plan;
      plan.stage_of_op.assign(2 * layers, 0);
      int first = 0, device = 0;
      for (size_t s = 0; s < cut_after.size(); ++s) {
        for (int l = first; l <= cut_after[s]; ++l)
          plan.stage_of_op[l] = plan.stage_of_op[layers + l] = static_cast<int32_t>(s);
        plan.stages.emplace_back();
        for (int r = 0; r < replicas[s]; ++r) plan.stages.back().devices.push_back(device++);
        first = cut_after[s] + 1;
      }
      absl::StatusOr<PlanEvaluation> ev = EvaluatePlan(costs, plan, CostModelKind::kPipeDream);
      if (ev.ok()) best = std::min(best, ev->time_per_sample);
      return;
    }
    for (int last = from; last < layers; ++last) {
      for (int r = 1; used + r <= devices; ++r) {
        cut_after.push_back(last);
        replicas.push_back(r);
        stage(last + 1, used + r);
        cut_after.pop_back();
        replicas.pop_back();
      }
    }
  };
  stage(0, 0);
  return best;
}

TEST(HybridPlanner, MatchesBruteForceOnRandomChainsUnderPipeDreamsModel) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 12; ++trial) {
    const int layers = 3 + trial % 4, devices = 2 + trial % 3;
    absl::StatusOr<Problem> p = ParsePipeDreamProfile(RandomChain(layers, rng), /*training=*/true);
    ASSERT_TRUE(p.ok()) << p.status();
    const Topology t = Gpus(devices, 1e9 * (1 + trial % 3));
    absl::StatusOr<CostModel> costs = CostModel::Create(p->graph, t);
    ASSERT_TRUE(costs.ok());
    PlacementProblem problem = Throughput(*costs);
    problem.cost_model = CostModelKind::kPipeDream;
    absl::StatusOr<PlacerResult> r = PlanParallel(problem, Budget{}, Parallelism::kHybrid);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_NEAR(r->evaluation.value, BruteForce(*costs, layers, devices), 1e-12) << "trial " << trial;
    EXPECT_TRUE(r->proven_optimal);
  }
}

TEST(HybridPlanner, NeverWorseThanPipeDreamOnItsPublishedRows) {
  const std::vector<test_support::PipeDreamReference> rows = test_support::ReadPipeDreamReference();
  if (rows.empty()) GTEST_SKIP() << test_support::PipeDreamDir() << "/reference.tsv is not here (../shared is absent)";
  for (const test_support::PipeDreamReference& row : rows) {
    const std::string dir = test_support::PipeDreamDir().string();
    absl::StatusOr<Problem> p =
        ParsePipeDreamProfile(test_support::ReadFileToString(dir + "/profiles/" + row.model + ".txt"), true);
    ASSERT_TRUE(p.ok()) << row.model << ": " << p.status();
    absl::StatusOr<Topology> t = LoadTopologyFile(dir + "/topologies/" + row.topology + ".json");
    ASSERT_TRUE(t.ok()) << t.status();
    absl::StatusOr<CostModel> costs = CostModel::Create(p->graph, *t);
    ASSERT_TRUE(costs.ok());
    PlacementProblem problem = Throughput(*costs);
    problem.cost_model = CostModelKind::kPipeDream;
    const Parallelism mode = row.mode == "straight" ? Parallelism::kPipeline : Parallelism::kHybrid;
    absl::StatusOr<PlacerResult> r = PlanParallel(problem, Budget::For(absl::Seconds(60)), mode);
    ASSERT_TRUE(r.ok()) << row.model << " " << row.topology << ": " << r.status();
    EXPECT_LE(r->evaluation.value, row.time_per_stage * (1 + 1e-9))
        << row.model << " " << row.topology << " " << row.mode;
  }
}

// One training layer with the weights `weights` bytes, as a PipeDream profile.
absl::StatusOr<Problem> OneLayer(double weights) {
  return ParsePipeDreamProfile(absl::StrCat("node1 -- Linear -- forward_compute_time=10, backward_compute_time=20, "
                                            "activation_size=1000, parameter_size=",
                                            weights, "\n"),
                               true);
}

TEST(HybridPlanner, DataParallelismWithASmallerGlobalBatchNamesTheStage) {
  absl::StatusOr<Problem> p = OneLayer(1e6);
  ASSERT_TRUE(p.ok());
  const Topology t = Gpus(4, 1e9);
  absl::StatusOr<CostModel> costs = CostModel::Create(p->graph, t);
  PlacementProblem problem = Throughput(*costs);
  problem.global_batch = 2;
  const absl::Status s = PlanParallel(problem, Budget{}, Parallelism::kData).status();
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_THAT(s.message(), HasSubstr("stage 1"));
  // Hybrid plans keep every group within the global batch.
  absl::StatusOr<PlacerResult> hybrid = PlanParallel(problem, Budget{}, Parallelism::kHybrid);
  ASSERT_TRUE(hybrid.ok()) << hybrid.status();
  for (const PlanStage& stage : hybrid->plan->plan.stages) EXPECT_LE(stage.devices.size(), 2u);
}

TEST(HybridPlanner, PlanThatCannotFitMemoryNamesTheStage) {
  absl::StatusOr<Problem> p = OneLayer(1e9);
  ASSERT_TRUE(p.ok());
  const Topology t = Gpus(4, 1e9, /*memory=*/int64_t{1} << 30);
  absl::StatusOr<CostModel> costs = CostModel::Create(p->graph, t);
  const PlacementProblem problem = Throughput(*costs);
  const absl::Status s = PlanParallel(problem, Budget{}, Parallelism::kHybrid).status();
  EXPECT_TRUE(absl::IsFailedPrecondition(s)) << s;
  EXPECT_THAT(s.message(), HasSubstr("stage 1"));
  EXPECT_THAT(s.message(), HasSubstr("does not fit memory"));
}

TEST(HybridPlanner, GroupsStayInsideHostsWhereTheTopologySaysSo) {
  absl::StatusOr<Problem> p = OneLayer(1e6);
  ASSERT_TRUE(p.ok());
  absl::StatusOr<Topology> t =
      ParseTopologyJson(R"({"hosts": [{"count": 2, "devices": [{"preset": "A100", "count": 2}]}],
                                                    "data_parallel_across_hosts": false})");
  ASSERT_TRUE(t.ok()) << t.status();
  absl::StatusOr<CostModel> costs = CostModel::Create(p->graph, *t);
  const PlacementProblem problem = Throughput(*costs);
  const absl::Status data = PlanParallel(problem, Budget{}, Parallelism::kData).status();
  EXPECT_TRUE(absl::IsFailedPrecondition(data)) << data;
  EXPECT_THAT(data.message(), HasSubstr("stage 1"));
  EXPECT_THAT(data.message(), HasSubstr("spans hosts"));
  absl::StatusOr<PlacerResult> hybrid = PlanParallel(problem, Budget{}, Parallelism::kHybrid);
  ASSERT_TRUE(hybrid.ok()) << hybrid.status();
  for (const PlanStage& stage : hybrid->plan->plan.stages) {
    for (DeviceId d : stage.devices) EXPECT_EQ(t->device(d).host, t->device(stage.devices.front()).host);
  }
}

TEST(HybridPlanner, PlanOptionsAreCheckedAgainstTheObjectiveAndAlgorithm) {
  PlacementProblem problem;
  problem.objective = Objective::kStepTime;
  EXPECT_TRUE(absl::IsInvalidArgument(SetPlanOptions("hybrid", "", "", 0, "auto", problem)));
  problem.objective = Objective::kThroughput;
  EXPECT_TRUE(absl::IsInvalidArgument(SetPlanOptions("hybrid", "", "", 0, "heft", problem)));
  EXPECT_TRUE(absl::IsInvalidArgument(SetPlanOptions("operator", "pipedream", "", 0, "auto", problem)));
  EXPECT_TRUE(absl::IsInvalidArgument(SetPlanOptions("hybrid", "", "gpipe", 0, "auto", problem)));
  EXPECT_TRUE(absl::IsInvalidArgument(SetPlanOptions("sideways", "", "", 0, "auto", problem)));
  EXPECT_TRUE(absl::IsInvalidArgument(SetPlanOptions("hybrid", "tarnished", "", 0, "auto", problem)));
  ASSERT_TRUE(SetPlanOptions("hybrid", "pipedream", "gpipe", 64, "auto", problem).ok());
  EXPECT_EQ(problem.parallelism, Parallelism::kHybrid);
  EXPECT_EQ(problem.cost_model, CostModelKind::kPipeDream);
  EXPECT_EQ(problem.schedule, Schedule::kGPipe);
  EXPECT_EQ(problem.global_batch, 64);
}

// AUTO's answer for a two-layer PipeDream profile on 4 GPUs linked at 1 GB/s, as a hybrid plan of `global_batch`
// micro-batches a step (0: none given).
absl::StatusOr<PlacerResult> AutoOnTwoLayers(const std::string& profile, int64_t global_batch) {
  absl::StatusOr<Problem> p = ParsePipeDreamProfile(profile, true);
  if (!p.ok()) return p.status();
  const Topology t = Gpus(4, 1e9);
  absl::StatusOr<CostModel> costs = CostModel::Create(p->graph, t);
  if (!costs.ok()) return costs.status();
  PlacementProblem problem = Throughput(*costs);
  problem.parallelism = Parallelism::kHybrid;
  problem.global_batch = global_batch;
  absl::StatusOr<const Placer*> automatic = DefaultPlacerRegistry().Find("auto");
  if (!automatic.ok()) return automatic.status();
  return (*automatic)->Place(problem, Budget::For(absl::Seconds(20)));
}

TEST(HybridPlanner, AutoWeighsEveryKindOfPlanAndSaysWhichWon) {
  // 1 GB/s: all-reducing the last layer's 400 MB over every device costs more than its compute saves.
  absl::StatusOr<PlacerResult> r = AutoOnTwoLayers(
      "node1 -- Conv -- forward_compute_time=40, backward_compute_time=80, activation_size=1000000, "
      "parameter_size=1000\n"
      "node2 -- Linear -- forward_compute_time=2, backward_compute_time=4, activation_size=1000, "
      "parameter_size=400000000\n"
      "\tnode1 -- node2\n",
      0);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_TRUE(r->plan.has_value());
  std::string notes;
  for (const std::string& n : r->notes) absl::StrAppend(&notes, n, "\n");
  for (const char* kind : {"data:", "pipeline:", "hybrid:", "operator placement", "winner: hybrid"}) {
    EXPECT_THAT(notes, HasSubstr(kind));
  }
  // The heavy convolution replicated, the weights of the last layer on a device of its own.
  EXPECT_GE(r->plan->plan.num_stages(), 2);
  EXPECT_GE(r->plan->plan.replicas(0), 2);
  EXPECT_GT(r->plan->simulated_time_per_sample, 0);
}

// A step of one micro-batch that nothing splits well (a 1 GB activation between the layers on 1 GB/s links): the
// portfolio weighs the step on one device too, and never answers slower than it.
TEST(HybridPlanner, AutoWeighsTheStepOnOneDevice) {
  absl::StatusOr<PlacerResult> r = AutoOnTwoLayers(
      "node1 -- Conv -- forward_compute_time=40, backward_compute_time=80, activation_size=1000000000, "
      "parameter_size=1000\n"
      "node2 -- Linear -- forward_compute_time=40, backward_compute_time=80, activation_size=1000, "
      "parameter_size=1000\n"
      "\tnode1 -- node2\n",
      1);
  ASSERT_TRUE(r.ok()) << r.status();
  std::string one_device;
  for (const std::string& n : r->notes) {
    if (one_device.empty() && absl::StartsWith(n, "one device of 4: ")) one_device = n;  // its line, not its notes
  }
  ASSERT_FALSE(one_device.empty()) << absl::StrJoin(r->notes, "\n");
  const double alone = std::stod(one_device.substr(std::string("one device of 4: ").size()));
  EXPECT_LE(r->evaluation.value, alone * (1 + 1e-9)) << one_device;
}

}  // namespace
}  // namespace placement
