// Objectives and lower bounds on hand-computed examples.
#include "simulator/objectives.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "simulator/tests/test_support.h"

namespace placement {
namespace {

using ::placement::testing::Build;
using ::placement::testing::Costs;
using ::placement::testing::Cpu;
using ::placement::testing::Gpu;
using ::placement::testing::Matrix;
using ::placement::testing::Op;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// An operator whose single output takes `send` seconds to move, as the Tarnawski inputs give cost(u).
OpSpec Profiled(std::string name, double seconds, double send) {
  OpSpec op = Op(std::move(name), seconds);
  op.outputs[0].transfer_seconds = send;
  return op;
}

// a on gpu0 feeds b and c on gpu1 and d on the CPU; b feeds e back on gpu0.
struct PipelineExample {
  PipelineExample() {
    GraphBuilder builder;
    const OpId a = builder.AddOp(Profiled("a", 1.0, 0.25));
    const OpId b = builder.AddOp(Profiled("b", 2.0, 0.125));
    const OpId c = builder.AddOp(Profiled("c", 3.0, 0.5));
    const OpId d = builder.AddOp(Profiled("d", 4.0, 0.5));
    const OpId e = builder.AddOp(Profiled("e", 0.5, 0.5));
    builder.AddEdge(a, 0, b);
    builder.AddEdge(a, 0, c);
    builder.AddEdge(a, 0, d);
    builder.AddEdge(b, 0, e);
    graph = Build(std::move(builder));
    topology = Matrix({Gpu("gpu0"), Gpu("gpu1"), Cpu("cpu")}, 1e9);
  }
  Graph graph;
  Topology topology;
  Placement placement{{0, 1, 1, 2, 0}};
};

TEST(Objectives, ThroughputLoadCountsEachTensorOncePerDeviceAndCpusPayNothing) {
  const PipelineExample ex;
  const CostModel costs = Costs(ex.graph, ex.topology);
  // gpu0: a 1 + e 0.5, sends a's output once (0.25) though three readers sit on two devices, receives
  //       b's (0.125)                                                         = 1.875
  // gpu1: b 2 + c 3, receives a's output once for its two readers (0.25), sends b's (0.125) = 5.375
  // cpu:  d 4; the CPU reads host memory and pays for no transfer                = 4
  EXPECT_THAT(DeviceLoads(costs, ex.placement), ElementsAre(1.875, 5.375, 4.0));

  absl::StatusOr<Evaluation> ev = Evaluate(costs, ex.placement, Objective::kThroughput);
  ASSERT_TRUE(ev.ok()) << ev.status();
  EXPECT_DOUBLE_EQ(ev->value, 5.375);
  ASSERT_EQ(ev->devices.size(), 3u);
  EXPECT_DOUBLE_EQ(ev->devices[1].busy, 5.0);
  EXPECT_DOUBLE_EQ(ev->devices[1].load, 5.375);
  // Bound: the work, 10.5 s, over three devices is 3.5; the largest operator is 4.
  EXPECT_DOUBLE_EQ(ev->bound.largest_unit, 4.0);
  EXPECT_DOUBLE_EQ(ev->bound.value, 4.0);
  EXPECT_DOUBLE_EQ(ev->ratio, 5.375 / 4.0);
}

TEST(Objectives, ThroughputMemoryHoldsEachDevicesParameters) {
  GraphBuilder builder;
  OpSpec a = Op("a", 1.0);
  a.param_bytes = 600;
  OpSpec b = Op("b", 1.0);
  b.param_bytes = 600;
  builder.AddOp(a);
  builder.AddOp(b);
  const Graph g = Build(std::move(builder));
  const Topology t = Matrix({Gpu("d0", 1000), Gpu("d1", 1000)}, 1e9);
  const CostModel costs = Costs(g, t);

  absl::StatusOr<Evaluation> together = Evaluate(costs, Placement{{0, 0}}, Objective::kThroughput);
  ASSERT_TRUE(together.ok()) << together.status();
  EXPECT_EQ(together->devices[0].peak_memory, 1200);
  EXPECT_TRUE(together->devices[0].oom);
  EXPECT_FALSE(together->fits_memory);

  absl::StatusOr<Evaluation> apart = Evaluate(costs, Placement{{0, 1}}, Objective::kThroughput);
  ASSERT_TRUE(apart.ok()) << apart.status();
  EXPECT_TRUE(apart->fits_memory);
  EXPECT_EQ(apart->bound.min_devices_for_memory, 2);
}

TEST(Objectives, StepTimeIsTheSimulatedMakespan) {
  const PipelineExample ex;
  const CostModel costs = Costs(ex.graph, ex.topology);
  absl::StatusOr<Evaluation> ev = Evaluate(costs, ex.placement, Objective::kStepTime);
  ASSERT_TRUE(ev.ok()) << ev.status();
  // a 0..1; its output reaches gpu1 and the CPU at 1.25; b 1.25..3.25 then c 3.25..6.25 on gpu1, d
  // 1.25..5.25 on the CPU; b's output is back on gpu0 at 3.375 and e runs 3.375..3.875.
  EXPECT_DOUBLE_EQ(ev->value, 6.25);
  EXPECT_DOUBLE_EQ(ev->simulation.makespan, 6.25);
  EXPECT_DOUBLE_EQ(ev->devices[1].busy, 5.0);
  EXPECT_DOUBLE_EQ(ev->devices[1].load, 5.0);
  // Critical path a -> c = 4 (or a -> d = 5); work 10.5 / 3 = 3.5.
  EXPECT_DOUBLE_EQ(ev->bound.critical_path, 5.0);
  EXPECT_DOUBLE_EQ(ev->bound.value, 5.0);
  EXPECT_DOUBLE_EQ(ev->ratio, 6.25 / 5.0);
}

TEST(Objectives, LatencyRejectsBackwardOperators) {
  GraphBuilder builder;
  const OpId fwd = builder.AddOp(Op("forward", 1.0));
  OpSpec grad = Op("grad", 1.0);
  grad.is_backward = true;
  const OpId bwd = builder.AddOp(grad);
  builder.AddEdge(fwd, 0, bwd);
  const Graph g = Build(std::move(builder));
  const Topology t = Matrix({Gpu("d0")}, 1e9);
  const CostModel costs = Costs(g, t);

  absl::StatusOr<Evaluation> latency = Evaluate(costs, Placement{{0, 0}}, Objective::kLatency);
  EXPECT_EQ(latency.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(latency.status().message(), HasSubstr("'grad'"));
  absl::StatusOr<Evaluation> step = Evaluate(costs, Placement{{0, 0}}, Objective::kStepTime);
  ASSERT_TRUE(step.ok()) << step.status();
  EXPECT_DOUBLE_EQ(step->value, 2.0);
}

TEST(Objectives, LatencySimulatesAnInferenceGraph) {
  const PipelineExample ex;
  const CostModel costs = Costs(ex.graph, ex.topology);
  absl::StatusOr<Evaluation> ev = Evaluate(costs, ex.placement, Objective::kLatency);
  ASSERT_TRUE(ev.ok()) << ev.status();
  EXPECT_EQ(ev->objective, Objective::kLatency);
  EXPECT_DOUBLE_EQ(ev->value, 6.25);
}

TEST(Objectives, NamesRoundTripAndBadNamesAreExplained) {
  for (Objective o : {Objective::kStepTime, Objective::kThroughput, Objective::kLatency}) {
    absl::StatusOr<Objective> parsed = ParseObjective(ObjectiveName(o));
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_EQ(*parsed, o);
  }
  EXPECT_EQ(ObjectiveName(Objective::kStepTime), "step_time");
  absl::StatusOr<Objective> bad = ParseObjective("speed");
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.status().message(), HasSubstr("'speed'"));
  EXPECT_THAT(bad.status().message(), HasSubstr("step_time, throughput, latency"));
}

// Two kinds of device: "gpu" and "fast"; each operator names its time on both.
OpSpec TwoKinds(std::string name, double gpu, double fast) {
  OpSpec op = Op(std::move(name), gpu);
  op.measured_seconds = {{"gpu", gpu}, {"fast", fast}};
  return op;
}

Device Fast(std::string name, int64_t memory = 0) {
  Device d = Gpu(std::move(name), memory);
  d.kind = "fast";
  d.peak_flops *= 2;
  return d;
}

TEST(LowerBound, StepTimeIsTheLongerOfCriticalPathAndWorkPerDevice) {
  // a -> b and a lone c; fastest times a 1, b 3, c 1.
  GraphBuilder builder;
  const OpId a = builder.AddOp(TwoKinds("a", 2.0, 1.0));
  const OpId b = builder.AddOp(TwoKinds("b", 4.0, 3.0));
  builder.AddOp(TwoKinds("c", 1.0, 5.0));
  builder.AddEdge(a, 0, b);
  const Graph g = Build(std::move(builder));
  const Topology t = Matrix({Gpu("slow"), Fast("quick")}, 1e9);
  const CostModel costs = Costs(g, t);

  const LowerBound lb = ComputeLowerBound(costs, Objective::kStepTime);
  EXPECT_DOUBLE_EQ(lb.critical_path, 4.0);      // a then b, each on its fastest device
  EXPECT_NEAR(lb.work_per_device, 2.5, 1e-12);  // (1 + 3 + 1) / 2
  EXPECT_DOUBLE_EQ(lb.value, 4.0);
  EXPECT_EQ(lb.min_devices_for_memory, 0);  // both devices are unlimited

  // Four independent one-second operators on two devices: work, not the path, binds.
  GraphBuilder wide;
  for (int i = 0; i < 4; ++i) wide.AddOp(TwoKinds("w" + std::to_string(i), 1.0, 1.0));
  const Graph wg = Build(std::move(wide));
  const CostModel wide_costs = Costs(wg, t);
  const LowerBound wide_lb = ComputeLowerBound(wide_costs, Objective::kLatency);
  EXPECT_DOUBLE_EQ(wide_lb.critical_path, 1.0);
  EXPECT_NEAR(wide_lb.value, 2.0, 1e-12);
  EXPECT_LE(wide_lb.value, 2.0);  // and never above what a schedule can reach
}

TEST(LowerBound, ThroughputCountsAColocationGroupAsOneUnit) {
  // a and b must share a device: 2 s together on "gpu", 4 s on "fast". c alone: 1.5 s at best.
  GraphBuilder builder;
  OpSpec a = TwoKinds("a", 1.0, 2.0);
  a.colocation_group = "g";
  OpSpec b = TwoKinds("b", 1.0, 2.0);
  b.colocation_group = "g";
  builder.AddOp(a);
  builder.AddOp(b);
  builder.AddOp(TwoKinds("c", 3.0, 1.5));
  const Graph g = Build(std::move(builder));
  const Topology t = Matrix({Gpu("slow"), Fast("quick")}, 1e9);
  const CostModel costs = Costs(g, t);

  const LowerBound lb = ComputeLowerBound(costs, Objective::kThroughput);
  EXPECT_DOUBLE_EQ(lb.largest_unit, 2.0);
  EXPECT_NEAR(lb.work_per_device, 1.75, 1e-12);  // (1 + 1 + 1.5) / 2
  EXPECT_DOUBLE_EQ(lb.value, 2.0);
  EXPECT_DOUBLE_EQ(lb.critical_path, 0.0);  // not a throughput term
}

TEST(LowerBound, MemoryNeedsEnoughOfTheLargestDevice) {
  GraphBuilder builder;
  for (int i = 0; i < 5; ++i) {
    OpSpec op = Op("p" + std::to_string(i), 1.0);
    op.param_bytes = 50;
    builder.AddOp(op);
  }
  const Graph g = Build(std::move(builder));
  // 250 bytes of parameters, devices of at most 100 bytes: three at least.
  const Topology bounded = Matrix({Gpu("d0", 100), Gpu("d1", 60)}, 1e9);
  const CostModel costs = Costs(g, bounded);
  EXPECT_EQ(ComputeLowerBound(costs, Objective::kStepTime).min_devices_for_memory, 3);
  // A device without a limit can hold everything.
  const Topology unbounded = Matrix({Gpu("d0", 100), Gpu("host", 0)}, 1e9);
  const CostModel costs2 = Costs(g, unbounded);
  EXPECT_EQ(ComputeLowerBound(costs2, Objective::kThroughput).min_devices_for_memory, 0);
}

}  // namespace
}  // namespace placement
