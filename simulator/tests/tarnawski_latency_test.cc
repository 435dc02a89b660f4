// Tarnawski et al.'s latency model on hand-computed splits: blocks, pieces, transfers, cycles and memory.
#include "simulator/tarnawski_latency.h"

#include <limits>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "simulator/objectives.h"
#include "simulator/tests/test_support.h"

namespace placement {
namespace {

using ::placement::testing::Build;
using ::placement::testing::Costs;
using ::placement::testing::Cpu;
using ::placement::testing::Gpu;
using ::placement::testing::Matrix;
using ::testing::HasSubstr;

// An operator taking `accelerator` on a gpu and `cpu` on a CPU, whose output costs `send` to move to or from
// host memory (their cost(u)).
OpSpec Node(std::string name, double accelerator, double cpu, double send, int64_t bytes = 0) {
  OpSpec op;
  op.name = std::move(name);
  op.op_type = "layer";
  op.measured_seconds = {{"gpu", accelerator}, {"cpu", cpu}};
  op.param_bytes = bytes;
  op.outputs.push_back(OutputTensor{0, send});
  return op;
}

constexpr DeviceId kAcc0 = 0, kAcc1 = 1, kCpu = 2;

Topology TwoAcceleratorsAndACpu(int64_t memory = 0) {
  return Matrix({Gpu("acc0", memory), Gpu("acc1", memory), Cpu("cpu0")}, 1e9);
}

// a -> b -> c -> d, a chain.
Graph Chain() {
  GraphBuilder b;
  const OpId a = b.AddOp(Node("a", 1, 10, 0.5, 100));
  const OpId x = b.AddOp(Node("b", 2, 20, 0.25, 100));
  const OpId c = b.AddOp(Node("c", 3, 30, 0.125, 100));
  const OpId d = b.AddOp(Node("d", 4, 40, 1, 100));
  b.AddEdge(a, 0, x);
  b.AddEdge(x, 0, c);
  b.AddEdge(c, 0, d);
  return Build(std::move(b));
}

double LatencyOf(const CostModel& costs, std::vector<DeviceId> device) {
  absl::StatusOr<Evaluation> ev =
      Evaluate(costs, Placement{std::move(device)}, Objective::kLatency, {}, CostModelKind::kTarnawski);
  EXPECT_TRUE(ev.ok()) << ev.status();
  return ev.ok() ? ev->value : -1;
}

TEST(TarnawskiLatency, ABlockPaysItsTransfersInAndOutOnce) {
  const Graph g = Chain();
  const Topology t = TwoAcceleratorsAndACpu();
  const CostModel costs = Costs(g, t);
  // a on the CPU (10); {b, c} on acc0: ready 10, cost(a) 0.5 in, 2 + 3, cost(c) 0.125 out = 15.625; d on acc1:
  // 15.625 + cost(c) 0.125 + 4 = 19.75.
  EXPECT_DOUBLE_EQ(LatencyOf(costs, {kCpu, kAcc0, kAcc0, kAcc1}), 19.75);
  // Everything on one accelerator: one block, no transfers (d's output goes nowhere).
  EXPECT_DOUBLE_EQ(LatencyOf(costs, {kAcc0, kAcc0, kAcc0, kAcc0}), 10.0);
  // Everything on the CPU: 100.
  EXPECT_DOUBLE_EQ(LatencyOf(costs, {kCpu, kCpu, kCpu, kCpu}), 100.0);
}

TEST(TarnawskiLatency, ANonContiguousSetRunsAsPiecesOneAfterAnother) {
  const Graph g = Chain();
  const Topology t = TwoAcceleratorsAndACpu();
  const CostModel costs = Costs(g, t);
  TarnawskiLatency model(costs);
  std::vector<LatencyBlock> blocks;
  // {a, c} on acc0 with b on the CPU between: piece 1 = {a} ends at 1 + 0.5 = 1.5; b 20 -> 21.5; piece 2 = {c}
  // ready at 21.5, cost(b) 0.25 in, 3, cost(c) 0.125 out = 24.875; d on the CPU: 64.875.
  absl::StatusOr<double> latency = model.Score(std::vector<DeviceId>{kAcc0, kCpu, kAcc0, kCpu}, &blocks);
  ASSERT_TRUE(latency.ok()) << latency.status();
  EXPECT_DOUBLE_EQ(*latency, 64.875);
  EXPECT_EQ(model.pieces(kAcc0), 2);
  EXPECT_EQ(model.pieces(kAcc1), 0);
  ASSERT_EQ(blocks.size(), 2u);
  EXPECT_EQ(blocks[0].piece, 1);
  EXPECT_DOUBLE_EQ(blocks[0].finish, 1.5);
  EXPECT_EQ(blocks[1].piece, 2);
  EXPECT_DOUBLE_EQ(blocks[1].ready, 21.5);
  EXPECT_DOUBLE_EQ(blocks[1].transfer, 0.375);
  EXPECT_DOUBLE_EQ(blocks[1].finish, 24.875);
}

// a and c are sources, b and d sinks; a -> b and c -> d.
Graph TwoPairs() {
  GraphBuilder b;
  const OpId a = b.AddOp(Node("a", 1, 10, 1));
  const OpId x = b.AddOp(Node("b", 1, 10, 0));
  const OpId c = b.AddOp(Node("c", 1, 10, 1));
  const OpId d = b.AddOp(Node("d", 1, 10, 0));
  b.AddEdge(a, 0, x);
  b.AddEdge(c, 0, d);
  return Build(std::move(b));
}

TEST(TarnawskiLatency, BlocksThatFeedEachOtherAreRejectedNamingTheAccelerators) {
  const Graph g = TwoPairs();
  const Topology t = TwoAcceleratorsAndACpu();
  const CostModel costs = Costs(g, t);
  // acc0 = {a, d} and acc1 = {b, c}: each set is contiguous, but acc0 feeds acc1 (a -> b) and acc1 feeds acc0
  // (c -> d), so neither block can run first.
  absl::StatusOr<Evaluation> ev =
      Evaluate(costs, Placement{{kAcc0, kAcc1, kAcc1, kAcc0}}, Objective::kLatency, {}, CostModelKind::kTarnawski);
  ASSERT_FALSE(ev.ok());
  EXPECT_EQ(ev.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(ev.status().message(), HasSubstr("'acc0'"));
  EXPECT_THAT(ev.status().message(), HasSubstr("'acc1'"));
  EXPECT_THAT(ev.status().message(), HasSubstr("'a' on acc0 feeds 'b' on acc1"));
  TarnawskiLatency model(costs);
  EXPECT_EQ(model.Latency(std::vector<DeviceId>{kAcc0, kAcc1, kAcc1, kAcc0}), std::numeric_limits<double>::infinity());
  // One pair per accelerator: two blocks side by side, 1 + 1 each with nothing to move.
  EXPECT_DOUBLE_EQ(LatencyOf(costs, {kAcc0, kAcc0, kAcc1, kAcc1}), 2.0);
  // a, c on acc0 and b, d on acc1: acc0 sends both outputs (2 + 1 + 1 = 4), acc1 receives them (4 + 2 + 2 = 8).
  EXPECT_DOUBLE_EQ(LatencyOf(costs, {kAcc0, kAcc1, kAcc0, kAcc1}), 8.0);
}

TEST(TarnawskiLatency, CpuOperatorsRunConcurrentlyWithoutLimit) {
  GraphBuilder b;
  const OpId src = b.AddOp(Node("src", 1, 1, 0.5));
  for (int i = 0; i < 20; ++i) b.AddEdge(src, 0, b.AddOp(Node("w" + std::to_string(i), 1, 7, 0)));
  const Graph g = Build(std::move(b));
  const Topology t = TwoAcceleratorsAndACpu();
  const CostModel costs = Costs(g, t);
  // 20 CPU operators of 7 after the source on acc0 (1 + 0.5 out): 8.5, not 1.5 + 20 * 7.
  std::vector<DeviceId> device(g.num_ops(), kCpu);
  device[src] = kAcc0;
  EXPECT_DOUBLE_EQ(LatencyOf(costs, device), 8.5);
  // The bound is the critical path alone: 1 + 1.
  absl::StatusOr<Evaluation> ev =
      Evaluate(costs, Placement{device}, Objective::kLatency, {}, CostModelKind::kTarnawski);
  ASSERT_TRUE(ev.ok());
  EXPECT_DOUBLE_EQ(ev->bound.value, 2.0);
  EXPECT_EQ(ev->bound.work_per_device, 0.0);
}

TEST(TarnawskiLatency, ATensorIsChargedOncePerBlockWhateverItsReaders) {
  GraphBuilder b;
  const OpId a = b.AddOp(Node("a", 1, 1, 2));
  const OpId x = b.AddOp(Node("x", 1, 1, 0));
  const OpId y = b.AddOp(Node("y", 1, 1, 0));
  const OpId z = b.AddOp(Node("z", 1, 1, 0));
  b.AddEdge(a, 0, x);
  b.AddEdge(a, 0, y);
  b.AddEdge(a, 0, z);
  const Graph g = Build(std::move(b));
  const Topology t = TwoAcceleratorsAndACpu();
  const CostModel costs = Costs(g, t);
  // a on acc0 sends once (1 + 2 = 3); {x, y} on acc1 receive once (3 + 2 + 2 = 7); z on the CPU: 4.
  EXPECT_DOUBLE_EQ(LatencyOf(costs, {kAcc0, kAcc1, kAcc1, kCpu}), 7.0);
}

TEST(TarnawskiLatency, MemoryIsPerAcceleratorAndTheCpuHasNoLimit) {
  const Graph g = Chain();
  const Topology t = Matrix({Gpu("acc0", 250), Gpu("acc1", 250), Cpu("cpu0")}, 1e9);
  const CostModel costs = Costs(g, t);
  absl::StatusOr<Evaluation> ev =
      Evaluate(costs, Placement{{kAcc0, kAcc0, kAcc0, kCpu}}, Objective::kLatency, {}, CostModelKind::kTarnawski);
  ASSERT_TRUE(ev.ok()) << ev.status();
  EXPECT_FALSE(ev->fits_memory);
  EXPECT_TRUE(ev->devices[kAcc0].oom);
  EXPECT_EQ(ev->devices[kAcc0].peak_memory, 300);
  ev = Evaluate(costs, Placement{{kAcc0, kAcc0, kAcc1, kCpu}}, Objective::kLatency, {}, CostModelKind::kTarnawski);
  ASSERT_TRUE(ev.ok()) << ev.status();
  EXPECT_TRUE(ev->fits_memory);
  // acc0: 1 + 2 compute + cost(b) 0.25 out; acc1: 0.25 in + 3 + 0.125 out.
  EXPECT_DOUBLE_EQ(ev->devices[kAcc0].load, 3.25);
  EXPECT_DOUBLE_EQ(ev->devices[kAcc1].load, 3.375);
  EXPECT_DOUBLE_EQ(ev->devices[kCpu].load, 40.0);
}

TEST(TarnawskiLatency, CostModelNamesAndTheObjectiveItScores) {
  EXPECT_EQ(*ParseCostModel(""), CostModelKind::kDefault);
  EXPECT_EQ(*ParseCostModel("default"), CostModelKind::kDefault);
  EXPECT_EQ(*ParseCostModel("tarnawski"), CostModelKind::kTarnawski);
  EXPECT_EQ(CostModelName(CostModelKind::kTarnawski), "tarnawski");
  absl::StatusOr<CostModelKind> unknown = ParseCostModel("roofline");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(unknown.status().message(), HasSubstr("roofline"));
  EXPECT_THAT(unknown.status().message(), HasSubstr("tarnawski"));

  const Graph g = Chain();
  const Topology t = TwoAcceleratorsAndACpu();
  const CostModel costs = Costs(g, t);
  absl::StatusOr<Evaluation> ev =
      Evaluate(costs, Placement{{kAcc0, kAcc0, kAcc0, kAcc0}}, Objective::kThroughput, {}, CostModelKind::kTarnawski);
  ASSERT_FALSE(ev.ok());
  EXPECT_EQ(ev.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(ev.status().message(), HasSubstr("latency"));
}

TEST(TarnawskiLatency, UnmeasuredTransfersGoThroughTheHostCpu) {
  GraphBuilder b;
  OpSpec a = Node("a", 1, 1, 0);
  a.outputs[0] = OutputTensor{1000, -1};  // 1000 bytes at 1000 B/s: 1 to or from the host
  const OpId x = b.AddOp(std::move(a));
  const OpId y = b.AddOp(Node("y", 1, 1, 0));
  b.AddEdge(x, 0, y);
  const Graph g = Build(std::move(b));
  const Topology t = Matrix({Gpu("acc0"), Gpu("acc1"), Cpu("cpu0")}, 1000);
  const CostModel costs = Costs(g, t);
  // a on acc0: 1 + 1 out; y on acc1: 2 + 1 in + 1 = 4.
  EXPECT_DOUBLE_EQ(LatencyOf(costs, {kAcc0, kAcc1}), 4.0);
}

}  // namespace
}  // namespace placement
