// The plan model (and PipeDream's) against figures computed by hand on small graphs and clusters.
#include "simulator/plan_model.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "graph/pipedream.h"
#include "simulator/collectives.h"
#include "simulator/pipedream_model.h"
#include "simulator/tests/test_support.h"

namespace placement {
namespace {

using testing::Build;
using testing::Costs;
using testing::Gpu;
using ::testing::HasSubstr;
using testing::Matrix;
using testing::Op;

// a (2 s) -> b (2 s), 100 bytes between them: an inference graph.
Graph Chain() {
  GraphBuilder b;
  b.AddOp(Op("a", 2.0, {100}));
  b.AddOp(Op("b", 2.0));
  b.AddEdge("a", 0, "b");
  return Build(std::move(b));
}

// One training step of one layer: f (1 s, 1,000 bytes of weights, 10 bytes out) and f/grad (2 s) reading it.
Graph Layer() {
  GraphBuilder b;
  OpSpec f = Op("f", 1.0, {10});
  f.param_bytes = 1000;
  f.colocation_group = "f";
  b.AddOp(std::move(f));
  OpSpec g = Op("f/grad", 2.0, {10});
  g.is_backward = true;
  g.colocation_group = "f";
  b.AddOp(std::move(g));
  b.AddEdge("f", 0, "f/grad");
  return Build(std::move(b));
}

std::vector<Device> Gpus(int n) {
  std::vector<Device> out;
  for (int i = 0; i < n; ++i) out.push_back(Gpu("gpu" + std::to_string(i)));
  return out;
}

ParallelPlan Plan(std::vector<int32_t> stage_of_op, std::vector<std::vector<DeviceId>> groups) {
  ParallelPlan p;
  p.stage_of_op = std::move(stage_of_op);
  for (auto& g : groups) p.stages.push_back(PlanStage{std::move(g)});
  return p;
}

TEST(PlanModel, DataParallelInferenceIsComputeOverReplicas) {
  const Graph g = Chain();
  const Topology t = Matrix(Gpus(4), 1000);
  const CostModel c = Costs(g, t);
  absl::StatusOr<PlanEvaluation> ev = EvaluatePlan(c, Plan({0, 0}, {{0, 1, 2, 3}}));
  ASSERT_TRUE(ev.ok()) << ev.status();
  EXPECT_DOUBLE_EQ(ev->time_per_sample, 1.0);                     // 4 s a micro-batch on each of 4 replicas
  EXPECT_EQ(ev->stages[0].allreduce_kind, AllReduceKind::kNone);  // no gradients to share
}

TEST(PlanModel, ReplicatedStagesSendEachMicroBatchOnceBetweenTheirReplicas) {
  const Graph g = Chain();
  const Topology t = Matrix(Gpus(4), 1000);
  const CostModel c = Costs(g, t);
  absl::StatusOr<PlanEvaluation> pipeline = EvaluatePlan(c, Plan({0, 1}, {{0}, {1}}));
  ASSERT_TRUE(pipeline.ok()) << pipeline.status();
  EXPECT_DOUBLE_EQ(pipeline->time_per_sample, 2.0);
  absl::StatusOr<PlanEvaluation> hybrid = EvaluatePlan(c, Plan({0, 1}, {{0, 1}, {2, 3}}));
  ASSERT_TRUE(hybrid.ok()) << hybrid.status();
  EXPECT_DOUBLE_EQ(hybrid->time_per_sample, 1.0);
  EXPECT_EQ(hybrid->bottleneck, "stage 1");
  // A slow link makes the transfer the bottleneck: 100 bytes at 40 B/s, every other micro-batch on each link.
  const Topology slow = Matrix(Gpus(4), 40);
  const CostModel cs = Costs(g, slow);
  absl::StatusOr<PlanEvaluation> bound = EvaluatePlan(cs, Plan({0, 1}, {{0, 1}, {2, 3}}));
  ASSERT_TRUE(bound.ok()) << bound.status();
  EXPECT_DOUBLE_EQ(bound->time_per_sample, 1.25);
  EXPECT_THAT(bound->bottleneck, HasSubstr("link"));
}

TEST(PlanModel, RingAllReduceOverlapsTheRoundsInFlight) {
  const Graph g = Layer();
  const Topology t = Matrix(Gpus(2), 1000);
  const CostModel c = Costs(g, t);
  absl::StatusOr<PlanEvaluation> ev = EvaluatePlan(c, Plan({0, 0}, {{0, 1}}));
  ASSERT_TRUE(ev.ok()) << ev.status();
  const StageScore& s = ev->stages[0];
  EXPECT_EQ(s.allreduce_kind, AllReduceKind::kRing);
  EXPECT_DOUBLE_EQ(s.allreduce, 1.0);          // 2 steps of 500 bytes at 1,000 B/s
  EXPECT_EQ(s.in_flight, 2);                   // twice ceil(2 devices / 2 replicas)
  EXPECT_DOUBLE_EQ(ev->time_per_sample, 1.5);  // 3 s of compute a round, over 2 replicas
  // Weights: a version per micro-batch in flight and the latest, plus a gradient; activations twice; the working set.
  EXPECT_EQ(s.weight_versions, 3);
  EXPECT_EQ(s.memory_bytes, 1000 * 3 + 1000 + 10 * 2 + 10);
}

TEST(PlanModel, GlobalBatchFlushesEveryStepAndAllReducesOnce) {
  const Graph g = Layer();
  const Topology t = Matrix(Gpus(2), 1000);
  const CostModel c = Costs(g, t);
  ParallelPlan p = Plan({0, 0}, {{0, 1}});
  p.global_batch = 4;
  absl::StatusOr<PlanEvaluation> ev = EvaluatePlan(c, p);
  ASSERT_TRUE(ev.ok()) << ev.status();
  // Two micro-batches of 3 s a replica, then the 1 s all-reduce: no optimizer reads the gradient, so it has no
  // buckets to all-reduce during the backward pass.
  EXPECT_DOUBLE_EQ(ev->step_time, 7.0);
  EXPECT_DOUBLE_EQ(ev->time_per_sample, 7.0 / 4);
  EXPECT_EQ(ev->stages[0].weight_versions, 1);
  // Each replica runs a micro-batch's backward before the next one's forward: one micro-batch's activations.
  EXPECT_EQ(ev->stages[0].in_flight, 1);
}

TEST(PlanModel, BadPlansNameTheirStage) {
  const Graph g = Layer();
  const Topology t = Matrix(Gpus(4), 1000);
  const CostModel c = Costs(g, t);
  ParallelPlan gpipe = Plan({0, 0}, {{0, 1}});
  gpipe.schedule = Schedule::kGPipe;
  EXPECT_TRUE(absl::IsInvalidArgument(EvaluatePlan(c, gpipe).status()));
  ParallelPlan small = Plan({0, 0}, {{0, 1, 2, 3}});
  small.global_batch = 2;
  absl::Status s = EvaluatePlan(c, small).status();
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_THAT(s.message(), HasSubstr("stage 1"));
  EXPECT_THAT(s.message(), HasSubstr("4 replicas"));
  EXPECT_TRUE(absl::IsInvalidArgument(EvaluatePlan(c, Plan({0, 0}, {{0}, {0}})).status()));  // a device twice
  EXPECT_TRUE(absl::IsInvalidArgument(EvaluatePlan(c, Plan({0, 1}, {{0}, {1}})).status()));  // a split colocation
}

TEST(PlanModel, PlanThatDoesNotFitNamesTheStage) {
  const Graph g = Layer();
  const Topology t = testing::WithMemory(Matrix(Gpus(2), 1000), 3000);
  const CostModel c = Costs(g, t);
  const ParallelPlan p = Plan({0, 0}, {{0, 1}});
  absl::StatusOr<PlanEvaluation> ev = EvaluatePlan(c, p);
  ASSERT_TRUE(ev.ok()) << ev.status();
  EXPECT_FALSE(ev->fits_memory);
  const absl::Status s = PlanMemoryStatus(c, p, *ev);
  EXPECT_TRUE(absl::IsFailedPrecondition(s)) << s;
  EXPECT_THAT(s.message(), HasSubstr("stage 1"));
  EXPECT_THAT(s.message(), HasSubstr("does not fit memory"));
}

Topology TwoHosts(double intra, double network) {
  HierarchySpec spec;
  for (int h = 0; h < 2; ++h)
    spec.hosts.push_back(HostSpec{"host" + std::to_string(h), {Gpu("gpu0"), Gpu("gpu1")}, intra, 0});
  spec.network_bandwidth = network;
  absl::StatusOr<Topology> t = BuildHierarchy(spec);
  EXPECT_TRUE(t.ok()) << t.status();
  return *std::move(t);
}

TEST(PlanModel, GroupAcrossHostsIsRefusedWhereTheTopologyKeepsThemInside) {
  const Graph g = Layer();
  const Topology t = TwoHosts(1000, 100).WithGroupsInsideHosts();
  const CostModel c = Costs(g, t);
  const absl::Status s = EvaluatePlan(c, Plan({0, 0}, {{0, 2}})).status();
  EXPECT_TRUE(absl::IsFailedPrecondition(s)) << s;
  EXPECT_THAT(s.message(), HasSubstr("stage 1"));
  EXPECT_THAT(s.message(), HasSubstr("spans hosts"));
  EXPECT_TRUE(EvaluatePlan(c, Plan({0, 0}, {{0, 1}})).ok());
}

TEST(Collectives, HierarchicalAllReduceBeatsTheRingAcrossASlowNetwork) {
  const Topology t = TwoHosts(1000, 10);
  const std::vector<DeviceId> all = {0, 1, 2, 3};
  const AllReducePlan plan = PlanAllReduce(t, all, 400);
  EXPECT_EQ(plan.kind, AllReduceKind::kHierarchical);
  // Inside each host 2 steps of 200 bytes at 1,000 B/s; between hosts 2 steps of 100 bytes, each interface
  // carrying 4 of them (two rings, in and out) at 10 B/s.
  EXPECT_DOUBLE_EQ(plan.seconds, 2 * 0.2 + 2 * 40.0);
  const Topology flat = Matrix(Gpus(4), 1000);
  const AllReducePlan ring = PlanAllReduce(flat, all, 400);
  EXPECT_EQ(ring.kind, AllReduceKind::kRing);
  EXPECT_DOUBLE_EQ(ring.seconds, 6 * 0.1);  // 2 (r - 1) steps of 100 bytes
}

// l1 (1 s, 2,000 bytes of weights) hands 3,000 bytes to l2 (1 s), whose gradient sends 3,000 bytes back to
// l1/grad (2 s); on three hosts of one GPU each, behind interfaces of 1,000 B/s.
Graph CutBetweenHosts() { return testing::TwoLayerStep(3000, 2000, 0); }
Topology ThreeHostsOfOneGpu() { return testing::HostsOfOneGpu(3, 1000); }

TEST(PlanModel, InterfaceIdlesWhileThePeersOfItsTransfersCarryAnAllReduce) {
  const Graph g = CutBetweenHosts();
  const Topology t = ThreeHostsOfOneGpu();
  const CostModel c = Costs(g, t);
  // l1 on hosts 0 and 1, l2 on host 2: every micro-batch's activations come into host 2 and its gradient goes out.
  absl::StatusOr<PlanEvaluation> ev = EvaluatePlan(c, Plan({0, 0, 1, 1}, {{0, 1}, {2}}));
  ASSERT_TRUE(ev.ok()) << ev.status();
  // host2/nic carries 2 x 3 s a sample. Stage 1's ring holds both other interfaces for 2 steps of two 1,000-byte
  // sends (4 s) once every 2 samples, and no 3 s transfer fits a gap in it: host 2 waits 2 s a sample.
  EXPECT_DOUBLE_EQ(ev->link_busy[2], 6.0);
  EXPECT_DOUBLE_EQ(ev->time_per_sample, 8.0);
  EXPECT_EQ(ev->bottleneck, "link host2/nic");
  // Host 0's interface carries the ring (4 s a round) and half the micro-batches (3 s a sample): no waiting there.
  EXPECT_DOUBLE_EQ(ev->link_busy[0], 5.0);
  // With a global batch the all-reduce runs after the step's transfers, and nothing waits for it.
  ParallelPlan flushed = Plan({0, 0, 1, 1}, {{0, 1}, {2}});
  flushed.global_batch = 8;
  absl::StatusOr<PlanEvaluation> step = EvaluatePlan(c, flushed);
  ASSERT_TRUE(step.ok()) << step.status();
  EXPECT_GE(step->step_time, 8 * 6.0);
}

TEST(Collectives, SecondsUnavailableCountsOnlyGapsTheTransferFits) {
  const Topology t = ThreeHostsOfOneGpu();
  // The ring of hosts 0 and 1: 2 steps, each two 1,000-byte sends holding both interfaces one after the other.
  const AllReducePlan ring = PlanAllReduce(t, std::vector<DeviceId>{0, 1}, 2000);
  EXPECT_DOUBLE_EQ(ring.seconds, 4.0);
  EXPECT_DOUBLE_EQ(SecondsUnavailable(t, ring, 0, 3.0), 4.0);
  EXPECT_DOUBLE_EQ(SecondsUnavailable(t, ring, 2, 3.0), 0.0);  // host 2 takes no part
}

// Three layers as PipeDream profiles them: milliseconds and bytes.
constexpr char kProfile[] =
    "node1 -- Conv2d(3, 64) -- forward_compute_time=10.0, backward_compute_time=20.0, activation_size=1000000.0, "
    "parameter_size=4000000.0\n"
    "node2 -- ReLU() -- forward_compute_time=5.0, backward_compute_time=5.0, activation_size=1000000.0, "
    "parameter_size=0.0\n"
    "node3 -- Linear(64, 10) -- forward_compute_time=4.0, backward_compute_time=6.0, activation_size=2000.0, "
    "parameter_size=8000000.0\n"
    "\tnode1 -- node2\n"
    "\tnode2 -- node3\n";

TEST(PipeDreamModel, FlatLevelFollowsItsPlannersFormulas) {
  absl::StatusOr<Problem> p = ParsePipeDreamProfile(kProfile, /*training=*/true);
  ASSERT_TRUE(p.ok()) << p.status();
  const Topology t = Matrix(Gpus(4), 1e9);
  const CostModel c = Costs(p->graph, t);
  // node1 and its gradient on gpu0, gpu1; node2 and node3 on gpu2.
  ParallelPlan plan = Plan({0, 1, 1, 0, 1, 1}, {{0, 1}, {2}});
  absl::StatusOr<PlanEvaluation> ev = EvaluatePlan(c, plan, CostModelKind::kPipeDream);
  ASSERT_TRUE(ev.ok()) << ev.status();
  const double first = (0.030 + 4 * 1 * 4e6 / (1e9 * 2)) / 2;  // (C + 4 (r-1) P / (B r)) / r
  const double second = 0.020;                                 // C, and its input 2 A / (B r') = 0.002 is less
  EXPECT_DOUBLE_EQ(ev->stages[0].period, first);
  EXPECT_DOUBLE_EQ(ev->stages[1].period, second);
  EXPECT_DOUBLE_EQ(ev->time_per_sample, second);
  EXPECT_FALSE(ev->memory_checked);
  EXPECT_TRUE(absl::IsInvalidArgument(
      EvaluateUnder(c, FirstReplicaPlacement(plan), Objective::kStepTime, {}, CostModelKind::kPipeDream).status()));
}

TEST(PipeDreamModel, CutsChargeTheAugmentedAntichainAsItsPlannerDoes) {
  // a -> b, a -> c, b -> d, c -> d: before d, the maximal layers b and c, and a, whose edge to c leaves b's
  // ancestors (though it stays before the cut).
  GraphBuilder b;
  b.AddOp(Op("a", 1, {1}));
  b.AddOp(Op("b", 1, {10}));
  b.AddOp(Op("c", 1, {100}));
  b.AddOp(Op("d", 1, {1000}));
  for (auto [from, to] : {std::pair{"a", "b"}, std::pair{"a", "c"}, std::pair{"b", "d"}, std::pair{"c", "d"}})
    b.AddEdge(from, 0, to);
  const Graph g = Build(std::move(b));
  const AntichainActivations activations(g);
  EXPECT_DOUBLE_EQ(activations.CutBytes({1, 1, 1, 0}), 111);
  EXPECT_DOUBLE_EQ(activations.CutBytes({1, 1, 0, 0}), 11);  // before c and d: b, and a (its edge to c)
  EXPECT_DOUBLE_EQ(activations.CutBytes({1, 0, 0, 0}), 1);
}

TEST(PipeDreamModel, HostsAreAPipelineOfBlocks) {
  absl::StatusOr<Problem> p = ParsePipeDreamProfile(kProfile, /*training=*/true);
  ASSERT_TRUE(p.ok()) << p.status();
  const Topology t = TwoHosts(4e9, 1e9);
  const CostModel c = Costs(p->graph, t);
  // One block on both hosts: node1 on each host's gpu0, node2 and node3 on each host's gpu1.
  const ParallelPlan plan = Plan({0, 1, 1, 0, 1, 1}, {{0, 2}, {1, 3}});
  absl::StatusOr<PlanEvaluation> ev = EvaluatePlan(c, plan, CostModelKind::kPipeDream);
  ASSERT_TRUE(ev.ok()) << ev.status();
  // Inside a host: 0.030 and max(0.020, 2 x 1 MB / 4 GB/s); the block's weights (12 MB) all-reduced between the
  // two hosts, shared by the 2 devices of each: (inner + 4 x 1 x 12e6 / (1e9 x 2) / 2) / 2.
  const double comm = 4 * 1 * 12e6 / (1e9 * 2) / 2;
  EXPECT_DOUBLE_EQ(ev->stages[0].period, (0.030 + comm) / 2);
  EXPECT_DOUBLE_EQ(ev->stages[1].period, (0.020 + comm) / 2);
  EXPECT_DOUBLE_EQ(ev->time_per_sample, (0.030 + comm) / 2);
  // A stage with different counts on its hosts does not nest.
  EXPECT_TRUE(absl::IsUnimplemented(
      EvaluatePlan(c, Plan({0, 1, 1, 0, 1, 1}, {{0, 1, 2}, {3}}), CostModelKind::kPipeDream).status()));
}

}  // namespace
}  // namespace placement

namespace placement {
namespace {

// One training step of one layer with Adam: f (1,000 bytes of weights), its input gradient, its weight gradient
// (1,000 bytes) and the update holding the optimizer's two moments (2,000 bytes).
Graph LayerWithOptimizer() {
  GraphBuilder b;
  OpSpec f = Op("f", 1.0, {10});
  f.param_bytes = 1000;
  b.AddOp(std::move(f));
  OpSpec grad = Op("f/grad", 1.0, {10});
  grad.is_backward = true;
  b.AddOp(std::move(grad));
  OpSpec wgrad = Op("f/wgrad", 1.0, {1000});
  wgrad.is_backward = true;
  wgrad.op_type = "KernelWeightGrad";
  b.AddOp(std::move(wgrad));
  OpSpec update = Op("f/update", 0.1, {});
  update.is_backward = true;
  update.op_type = "AdamUpdate";
  update.param_bytes = 2000;
  b.AddOp(std::move(update));
  b.AddEdge("f", 0, "f/grad");
  b.AddEdge("f", 0, "f/wgrad");
  b.AddEdge("f/wgrad", 0, "f/update");
  return Build(std::move(b));
}

StageScore ShardedStage(const CostModel& c, Sharding sharding) {
  ParallelPlan p = Plan({0, 0, 0, 0}, {{0, 1, 2, 3}});
  p.global_batch = 8;
  p.sharding = sharding;
  absl::StatusOr<PlanEvaluation> ev = EvaluatePlan(c, p);
  EXPECT_TRUE(ev.ok()) << ev.status();
  return ev.ok() ? ev->stages[0] : StageScore{};
}

TEST(PlanModel, ShardingSplitsWhatItNamesAcrossTheReplicas) {
  const Graph g = LayerWithOptimizer();
  const Topology t = Matrix(Gpus(4), 1000);
  const CostModel c = Costs(g, t);
  const StageScore none = ShardedStage(c, Sharding::kNone);
  EXPECT_EQ(none.weight_bytes, 1000);
  EXPECT_EQ(none.gradient_bytes, 2000);  // the gradients and DDP's bucket copy
  EXPECT_EQ(none.optimizer_bytes, 2000);
  const StageScore zero1 = ShardedStage(c, Sharding::kOptimizer);
  EXPECT_EQ(zero1.optimizer_bytes, 500);
  EXPECT_EQ(zero1.gradient_bytes, 2000);
  EXPECT_EQ(zero1.memory_bytes, none.memory_bytes - 1500);
  const StageScore zero2 = ShardedStage(c, Sharding::kGradients);
  EXPECT_EQ(zero2.gradient_bytes, 250);  // a quarter, and no bucket copy
  EXPECT_EQ(zero2.memory_bytes, none.memory_bytes - 1500 - 1750);
  const StageScore zero3 = ShardedStage(c, Sharding::kParameters);
  EXPECT_EQ(zero3.weight_bytes, 250);
  EXPECT_EQ(zero3.working_bytes, zero2.working_bytes + 1000);  // f's weights gathered whole while it runs
  EXPECT_EQ(zero3.memory_bytes, zero2.memory_bytes - 750 + 1000);
  // ZeRO-1 and ZeRO-2 move what the all-reduce moved; ZeRO-3 gathers the weights every pass besides.
  EXPECT_DOUBLE_EQ(zero1.allreduce, none.allreduce);
  EXPECT_DOUBLE_EQ(zero2.period, none.period);
  EXPECT_GE(zero3.forward, zero3.allreduce / 2);
  EXPECT_GE(zero3.period, zero2.period);
}

TEST(PlanModel, ShardingNeedsASynchronousStep) {
  const Graph g = LayerWithOptimizer();
  const Topology t = Matrix(Gpus(4), 1000);
  const CostModel c = Costs(g, t);
  ParallelPlan p = Plan({0, 0, 0, 0}, {{0, 1, 2, 3}});
  p.sharding = Sharding::kGradients;
  absl::StatusOr<PlanEvaluation> ev = EvaluatePlan(c, p);
  ASSERT_FALSE(ev.ok());
  EXPECT_THAT(ev.status().message(), HasSubstr("give a global batch"));
  EXPECT_EQ(ParseSharding("fsdp").value(), Sharding::kParameters);
  EXPECT_THAT(ParseSharding("zero4").status().message(), HasSubstr("known: none, zero1"));
}

}  // namespace
}  // namespace placement

namespace placement {
namespace {

// f0 -> f1 -> f2 -> f3, 100-byte outputs, each read again by its backward operator g<i> (2 s each, f<i> 1 s).
Graph ForwardChainWithBackward() {
  GraphBuilder b;
  for (int i = 0; i < 4; ++i) b.AddOp(Op("f" + std::to_string(i), 1.0, {100}));
  for (int i = 0; i < 4; ++i) {
    OpSpec g = Op("g" + std::to_string(i), 2.0, {1});
    g.is_backward = true;
    b.AddOp(std::move(g));
  }
  for (int i = 0; i < 4; ++i) {
    if (i + 1 < 4) b.AddEdge("f" + std::to_string(i), 0, "f" + std::to_string(i + 1));
    b.AddEdge("f" + std::to_string(i), 0, "g" + std::to_string(i));
  }
  return Build(std::move(b));
}

StageScore Recomputed(const CostModel& c, Recompute recompute, std::vector<std::vector<DeviceId>> groups,
                      int64_t global_batch) {
  ParallelPlan p = Plan(std::vector<int32_t>(8, 0), std::move(groups));
  p.global_batch = global_batch;
  p.recompute = recompute;
  absl::StatusOr<PlanEvaluation> ev = EvaluatePlan(c, p);
  EXPECT_TRUE(ev.ok()) << ev.status();
  return ev.ok() ? ev->stages[0] : StageScore{};
}

TEST(PlanModel, RecomputationKeepsTheSegmentsInputsAndRunsTheForwardAgain) {
  const Graph g = ForwardChainWithBackward();
  const Topology t = Matrix(Gpus(2), 1000);
  const CostModel c = Costs(g, t);
  // Synchronous data parallelism: one micro-batch in flight. Two segments (f0 f1 | f2 f3) keep f1's output and
  // recompute one segment at a time (200 bytes): 300 against keeping all four outputs.
  const StageScore kept = Recomputed(c, Recompute::kNone, {{0, 1}}, 4);
  const StageScore two = Recomputed(c, Recompute::kFull, {{0, 1}}, 4);
  EXPECT_EQ(kept.stash_bytes, 400);
  EXPECT_EQ(two.stash_bytes, 100);
  EXPECT_EQ(two.working_bytes, kept.working_bytes + 200);
  EXPECT_EQ(two.memory_bytes, kept.memory_bytes - 300 + 200);
  EXPECT_DOUBLE_EQ(two.backward, kept.backward + kept.forward);  // the forward once more
  // Four micro-batches in flight (asynchronous 1F1B on 2 replicas of one stage: twice ceil(2 / 2), and more
  // without a step): one segment, nothing kept but the recomputation's 400 bytes once.
  const StageScore async = Recomputed(c, Recompute::kFull, {{0, 1}}, 0);
  ASSERT_GT(async.in_flight, 1);
  EXPECT_EQ(async.stash_bytes, 0);
  EXPECT_LT(async.memory_bytes, Recomputed(c, Recompute::kNone, {{0, 1}}, 0).memory_bytes);
  EXPECT_EQ(ParseRecompute("full").value(), Recompute::kFull);
  EXPECT_THAT(ParseRecompute("some").status().message(), HasSubstr("known: none, full"));
}

}  // namespace
}  // namespace placement
