// The plan simulation against the plan model's figures on small plans, where the model is exact.
#include "simulator/plan_simulation.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "graph/training.h"
#include "simulator/plan_model.h"
#include "simulator/tests/test_support.h"

namespace placement {
namespace {

using testing::Build;
using testing::Costs;
using testing::Gpu;
using testing::Matrix;
using testing::Op;

std::vector<Device> Gpus(int n) {
  std::vector<Device> out;
  for (int i = 0; i < n; ++i) out.push_back(Gpu("gpu" + std::to_string(i)));
  return out;
}

// Two layers of a training step: each a forward (1 s, 1,000 bytes of weights) and a backward operator (2 s).
Graph TwoLayers() { return testing::TwoLayerStep(100, 1000, 1000); }

ParallelPlan Plan(std::vector<std::vector<DeviceId>> groups) {
  ParallelPlan p;
  p.stage_of_op = groups.size() == 1 ? std::vector<int32_t>{0, 0, 0, 0} : std::vector<int32_t>{0, 0, 1, 1};
  for (auto& g : groups) p.stages.push_back(PlanStage{std::move(g)});
  return p;
}

void ExpectAgreement(const CostModel& c, const ParallelPlan& plan, double tolerance) {
  absl::StatusOr<PlanEvaluation> model = EvaluatePlan(c, plan);
  ASSERT_TRUE(model.ok()) << model.status();
  absl::StatusOr<std::unique_ptr<PlanSimulation>> sim = SimulatePlan(c, plan);
  ASSERT_TRUE(sim.ok()) << sim.status();
  EXPECT_NEAR((*sim)->time_per_sample, model->time_per_sample, tolerance * model->time_per_sample)
      << "simulated " << (*sim)->micro_batches << " micro-batches";
  EXPECT_TRUE((*sim)->result.fits_memory);
}

// Two layers on two GPUs at 10,000 B/s.
class TwoGpus : public ::testing::Test {
 protected:
  const Graph g_ = TwoLayers();
  const Topology t_ = Matrix(Gpus(2), 1e4);
  const CostModel c_ = Costs(g_, t_);
};

TEST(PlanSimulation, DataParallelStageMatchesTheModel) {
  const Graph g = TwoLayers();
  const Topology t = Matrix(Gpus(4), 1e4);
  const CostModel c = Costs(g, t);
  ExpectAgreement(c, Plan({{0, 1, 2, 3}}), 0.01);
}

TEST(PlanSimulation, HybridPipelineMatchesTheModel) {
  const Graph g = TwoLayers();
  const Topology t = Matrix(Gpus(4), 1e4);
  const CostModel c = Costs(g, t);
  ExpectAgreement(c, Plan({{0, 1}, {2, 3}}), 0.02);
  ExpectAgreement(c, Plan({{0, 1, 2}, {3}}), 0.05);
}

// l1 on hosts 0 and 1, l2 on host 2 (one GPU each, interfaces of 1,000 B/s), 3,000 bytes each way per micro-batch:
// host 2's interface carries every micro-batch's tensors, and the other two hosts' interfaces also carry stage 1's
// all-reduce, during which the transfers into and out of host 2 wait.
TEST(PlanSimulation, TransfersWaitingForAnAllReduceOnThePeerInterfaceMatchTheModel) {
  const Graph g = testing::TwoLayerStep(3000, 2000, 0);
  const Topology t = testing::HostsOfOneGpu(3, 1000);
  const CostModel c = Costs(g, t);
  const ParallelPlan plan = Plan({{0, 1}, {2}});
  absl::StatusOr<PlanEvaluation> model = EvaluatePlan(c, plan);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ(model->bottleneck, "link host2/nic");
  EXPECT_GT(model->time_per_sample, model->link_busy[2] * 1.2);  // the waits, not only the interface's load
  ExpectAgreement(c, plan, 0.05);
}

TEST_F(TwoGpus, FlushedStepMatchesTheModel) {
  const CostModel& c = c_;
  ParallelPlan plan = Plan({{0, 1}});
  plan.global_batch = 4;
  absl::StatusOr<PlanEvaluation> model = EvaluatePlan(c, plan);
  ASSERT_TRUE(model.ok()) << model.status();
  absl::StatusOr<std::unique_ptr<PlanSimulation>> sim = SimulatePlan(c, plan);
  ASSERT_TRUE(sim.ok()) << sim.status();
  EXPECT_EQ((*sim)->micro_batches, 4);
  // Two micro-batches of 6 s a replica, then the all-reduce of 2,000 bytes: 2 steps of 1,000 at 10,000 B/s.
  EXPECT_NEAR((*sim)->step_time, 12.2, 1e-9);
  EXPECT_NEAR(model->step_time, 12.2, 1e-9);
}

// A training step of six layers of 30 MiB of weights each (forward 1 s, backward 2 s a layer) as
// BuildTrainingGraph makes it, data-parallel on two GPUs whose link all-reduces the 180 MiB in 6 s: the gradients
// go in buckets (1 MiB first, then 25 MiB), each all-reduced once the backward has produced it, so all but the last
// layers' buckets run under the backward pass, in the model and in the simulation alike.
TEST(PlanSimulation, BucketedAllReduceOverlapsTheBackwardAsDistributedDataParallel) {
  constexpr int64_t kWeights = int64_t{30} << 20;
  GraphBuilder b;
  for (int i = 0; i < 6; ++i) {
    OpSpec layer = Op("l" + std::to_string(i), 1.0, {1000});
    layer.param_bytes = kWeights;
    b.AddOp(std::move(layer));
    if (i > 0) b.AddEdge("l" + std::to_string(i - 1), 0, "l" + std::to_string(i));
  }
  absl::StatusOr<Graph> step = BuildTrainingGraph(Build(std::move(b)));
  ASSERT_TRUE(step.ok()) << step.status();
  const double bytes = 6.0 * kWeights;
  const Topology t = Matrix(Gpus(2), bytes / 6.0);  // a ring of two: 2 steps of half the bytes, 6 s
  const CostModel c = Costs(*step, t);
  ParallelPlan plan;
  plan.stage_of_op.assign(step->num_ops(), 0);
  plan.stages.push_back(PlanStage{{0, 1}});
  plan.global_batch = 2;
  absl::StatusOr<PlanEvaluation> model = EvaluatePlan(c, plan);
  ASSERT_TRUE(model.ok()) << model.status();
  const StageScore& x = model->stages[0];
  EXPECT_NEAR(x.allreduce, 6.0, 0.01);
  EXPECT_LT(x.allreduce_exposed, 0.5 * x.allreduce);  // the last layer's gradients and what queues behind them
  EXPECT_GT(x.allreduce_exposed, 0.0);
  EXPECT_LT(model->step_time, x.forward + x.backward + x.update + x.allreduce - 2.0);
  absl::StatusOr<std::unique_ptr<PlanSimulation>> sim = SimulatePlan(c, plan);
  ASSERT_TRUE(sim.ok()) << sim.status();
  EXPECT_NEAR((*sim)->step_time, model->step_time, 0.02 * model->step_time);
}

TEST_F(TwoGpus, AllReduceStepsUseTheLinksNotTheDevicesQueues) {
  const CostModel& c = c_;
  PlanSimulationOptions o;
  o.micro_batches = 4;
  absl::StatusOr<std::unique_ptr<PlanSimulation>> sim = SimulatePlan(c, Plan({{0, 1}}), o);
  ASSERT_TRUE(sim.ok()) << sim.status();
  EXPECT_EQ((*sim)->topology->num_devices(), 4);  // each device and its collective engine
  int64_t steps_on_engines = 0;
  for (OpId op = 0; op < (*sim)->graph->num_ops(); ++op) {
    if ((*sim)->graph->name(op).find("allreduce") != absl::string_view::npos) {
      EXPECT_GE((*sim)->placement.device[op], 2);
      ++steps_on_engines;
    }
  }
  EXPECT_GT(steps_on_engines, 0);
  EXPECT_GT((*sim)->result.transfers, 0);
}

TEST_F(TwoGpus, RefusesAPlanTooLargeToUnroll) {
  PlanSimulationOptions o;
  o.max_operators = 10;
  EXPECT_TRUE(absl::IsResourceExhausted(SimulatePlan(c_, Plan({{0, 1}}), o).status()));
}

// ZeRO in the simulated step holds what the plan model says each replica keeps: a quarter of the weights on each of
// four replicas under ZeRO-3 (2,000 bytes of weights: 1,500 fewer), and nothing less than unsharded otherwise.
TEST(PlanSimulation, ShardedReplicasHoldTheirShareOfTheWeights) {
  const Graph g = TwoLayers();
  const Topology t = Matrix(Gpus(4), 1e4);
  const CostModel c = Costs(g, t);
  const auto peak = [&](Sharding sharding) {
    ParallelPlan plan = Plan({{0, 1, 2, 3}});
    plan.global_batch = 8;
    plan.sharding = sharding;
    absl::StatusOr<std::unique_ptr<PlanSimulation>> sim = SimulatePlan(c, plan);
    EXPECT_TRUE(sim.ok()) << sim.status();
    return sim.ok() ? (*sim)->result.devices[0].peak_memory : int64_t{0};
  };
  const int64_t none = peak(Sharding::kNone);
  EXPECT_EQ(peak(Sharding::kOptimizer), none);  // these layers hold no optimizer state
  EXPECT_EQ(peak(Sharding::kParameters), none - 1500);
}

}  // namespace
}  // namespace placement
