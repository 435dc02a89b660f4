// Small cases whose answers are known by hand or from the papers.
#include <algorithm>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "policy/heuristics/favourite_child_lp.h"
#include "policy/heuristics/heft.h"
#include "policy/heuristics/list_scheduler.h"
#include "policy/heuristics/placement_state.h"
#include "policy/heuristics/tests/heuristics_test_util.h"

namespace placement::heuristics::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;

// The ten-task DAG of Topcuoglu, Hariri and Wu (IEEE TPDS 2002, Fig. 2) on three processors P1..P3, one kind
// each. Every edge is its own output tensor with the figure's communication cost as its measured transfer time.
Graph TopcuogluDag() {
  const double w[10][3] = {{14, 16, 9}, {13, 19, 18}, {11, 13, 19}, {13, 8, 17},  {12, 13, 10},
                           {13, 16, 9}, {7, 15, 11},  {5, 11, 14},  {18, 12, 20}, {21, 7, 16}};
  struct E {
    int src, dst;
    double cost;
  };
  const std::vector<E> edges = {{1, 2, 18}, {1, 3, 12}, {1, 4, 9},   {1, 5, 11},  {1, 6, 14},
                                {2, 8, 19}, {2, 9, 16}, {3, 7, 23},  {4, 8, 27},  {4, 9, 23},
                                {5, 9, 13}, {6, 8, 15}, {7, 10, 17}, {8, 10, 11}, {9, 10, 13}};
  std::vector<OpSpec> ops(10);
  for (int i = 0; i < 10; ++i) {
    ops[i].name = absl::StrCat("n", i + 1);
    ops[i].op_type = "task";
    ops[i].measured_seconds = {{"P1", w[i][0]}, {"P2", w[i][1]}, {"P3", w[i][2]}};
  }
  std::vector<int> output_of(edges.size());
  for (size_t k = 0; k < edges.size(); ++k) {
    OpSpec& src = ops[edges[k].src - 1];
    output_of[k] = static_cast<int>(src.outputs.size());
    src.outputs.push_back(OutputTensor{1, edges[k].cost});
  }
  GraphBuilder b;
  for (OpSpec& op : ops) b.AddOp(std::move(op));
  for (size_t k = 0; k < edges.size(); ++k) b.AddEdge(edges[k].src - 1, output_of[k], edges[k].dst - 1);
  return Build(std::move(b));
}

Topology ThreeProcessors() { return Cluster({{"P1", 0}, {"P2", 0}, {"P3", 0}}); }

TEST(HandChecked, HeftOnTheTopcuogluDagGivesTheFigureSchedule) {
  const Graph g = TopcuogluDag();
  const Topology topo = ThreeProcessors();
  const CostModel costs = Costs(g, topo);
  absl::StatusOr<UnitIndex> units = UnitIndex::Build(costs);
  ASSERT_TRUE(units.ok());
  const std::vector<double> rank = UpwardRanks(costs, MeanOpTimes(costs), MeanTransferTimes(costs, *units));
  const double published[10] = {108.000, 77.000, 80.000, 80.000, 69.000, 63.333, 42.667, 35.667, 44.333, 14.667};
  for (int i = 0; i < 10; ++i) EXPECT_NEAR(rank[i], published[i], 1e-3) << "n" << i + 1;

  MemoryLedger ledger(costs, *units, MemoryModel::kAllocations);
  ListScheduleOptions options;
  options.insertion = true;
  options.priority = rank;
  absl::StatusOr<ListScheduleResult> s = ListSchedule(costs, *units, ledger, options, Budget{});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_DOUBLE_EQ(s->makespan, 80);  // the figure's schedule length
  // Fig. 4(a): n1, n3, n5, n7 on P3; n4, n6, n9, n10 on P2; n2, n8 on P1.
  EXPECT_THAT(ledger.ToPlacement().device, ElementsAre(2, 0, 2, 1, 2, 1, 2, 0, 1, 1));

  const PlacerResult r = RunAndCheck("heft", costs, Objective::kStepTime);
  EXPECT_THAT(r.placement.device, ElementsAre(2, 0, 2, 1, 2, 1, 2, 0, 1, 1));
  EXPECT_THAT(r.notes, ::testing::Contains(::testing::HasSubstr("HEFT schedule length 80")));
}

// HEFT prepared on the Topcuoglu DAG and three processors, for the tests that hand it candidates or a chooser.
struct PreparedTopcuoglu {
  PreparedTopcuoglu() : g(TopcuogluDag()), topo(ThreeProcessors()), costs(Costs(g, topo)) {
    problem.costs = &costs;
    heft = HeftWithCandidates::Prepare(problem, Budget{});
  }
  const Graph g;
  const Topology topo;
  const CostModel costs;
  PlacementProblem problem;
  absl::StatusOr<HeftWithCandidates> heft = absl::UnknownError("not prepared");
};

TEST(HandChecked, HeftWithCandidatesKeepsEachOperatorToItsAllowedDevices) {
  PreparedTopcuoglu t;
  absl::StatusOr<HeftWithCandidates>& heft = t.heft;
  ASSERT_TRUE(heft.ok()) << heft.status();
  // Every device allowed: exactly heft's answer.
  std::vector<uint8_t> all(10 * 3, 1);
  absl::StatusOr<PlacerResult> same = heft->Place(all, "guided", Budget{});
  ASSERT_TRUE(same.ok()) << same.status();
  EXPECT_THAT(same->placement.device, ElementsAre(2, 0, 2, 1, 2, 1, 2, 0, 1, 1));
  EXPECT_EQ(same->algorithm, "guided");
  // P3 forbidden to everything but n1; n10 may only go to P1.
  std::vector<uint8_t> narrowed(10 * 3, 1);
  for (int v = 1; v < 10; ++v) narrowed[v * 3 + 2] = 0;
  narrowed[9 * 3 + 1] = 0;
  absl::StatusOr<PlacerResult> r = heft->Place(narrowed, "guided", Budget{});
  ASSERT_TRUE(r.ok()) << r.status();
  for (int v = 1; v < 10; ++v) EXPECT_NE(r->placement.device[v], 2) << "n" << v + 1;
  EXPECT_EQ(r->placement.device[9], 0);
  EXPECT_THAT(r->notes, ::testing::Contains(::testing::HasSubstr("0 groups fell back")));
  // An operator with no device left uses every device, and the notes say so.
  std::vector<uint8_t> none = all;
  for (int d = 0; d < 3; ++d) none[4 * 3 + d] = 0;
  absl::StatusOr<PlacerResult> fallback = heft->Place(none, "guided", Budget{});
  ASSERT_TRUE(fallback.ok()) << fallback.status();
  EXPECT_THAT(fallback->notes, ::testing::Contains(::testing::HasSubstr("1 groups fell back")));
  // A span of the wrong size is refused, naming both sizes.
  absl::StatusOr<PlacerResult> bad = heft->Place(std::vector<uint8_t>(7, 1), "guided", Budget{});
  ASSERT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(bad.status().message()), ::testing::HasSubstr("7 operator-device candidates for 30 pairs"));
}

// A chooser decides each operator where HEFT would take the earliest finish: it is handed the finish times HEFT
// compares (n1: 14, 16, 9 on P1, P2, P3, the paper's table), taking the earliest gives the figure's schedule, and
// taking another device every time is obeyed.
TEST(HandChecked, HeftChooserSeesTheFinishTimesAndDecides) {
  PreparedTopcuoglu t;
  const CostModel& costs = t.costs;
  absl::StatusOr<HeftWithCandidates>& heft = t.heft;
  ASSERT_TRUE(heft.ok()) << heft.status();
  std::vector<double> first_finish;
  int calls = 0;
  DeviceChooser earliest = [&](int32_t, OpId op, absl::Span<const DeviceId> devices, absl::Span<const double> finish) {
    EXPECT_EQ(devices.size(), finish.size());
    if (op == 0) first_finish.assign(finish.begin(), finish.end());
    ++calls;
    return static_cast<size_t>(std::min_element(finish.begin(), finish.end()) - finish.begin());
  };
  absl::StatusOr<PlacerResult> same = heft->PlaceChosen(earliest, "chosen", Budget{});
  ASSERT_TRUE(same.ok()) << same.status();
  EXPECT_THAT(same->placement.device, ElementsAre(2, 0, 2, 1, 2, 1, 2, 0, 1, 1));
  EXPECT_THAT(first_finish, ElementsAre(14, 16, 9));
  EXPECT_EQ(calls, 10);
  DeviceChooser last = [](int32_t, OpId, absl::Span<const DeviceId> devices, absl::Span<const double>) {
    return devices.size() - 1;
  };
  absl::StatusOr<PlacerResult> p3 = heft->PlaceChosen(last, "chosen", Budget{});
  ASSERT_TRUE(p3.ok()) << p3.status();
  EXPECT_THAT(p3->placement.device, ::testing::Each(2));
  // Only the static-priority discipline asks a chooser.
  absl::StatusOr<UnitIndex> units = UnitIndex::Build(costs);
  ASSERT_TRUE(units.ok());
  MemoryLedger ledger(costs, *units, MemoryModel::kAllocations);
  ListScheduleOptions options;
  options.mode = ListScheduleOptions::Mode::kEarliestStart;
  options.choose = last;
  EXPECT_EQ(ListSchedule(costs, *units, ledger, options, Budget{}).status().code(), absl::StatusCode::kInvalidArgument);
}

// A chain of eight operators of one second each on four identical devices.
Graph Chain(const std::vector<double>& seconds) {
  GraphBuilder b;
  for (size_t i = 0; i < seconds.size(); ++i) {
    b.AddOp(Op(absl::StrCat("c", i), {{"gpu", seconds[i]}}, 0, 1000));
    if (i > 0) b.AddEdge(static_cast<OpId>(i - 1), 0, static_cast<OpId>(i));
  }
  return Build(std::move(b));
}

TEST(HandChecked, MTopoCutsTheOrderIntoChunksOfEqualWork) {
  const Topology four = Cluster({{"gpu", 0}, {"gpu", 0}, {"gpu", 0}, {"gpu", 0}});
  const Graph even = Chain({1, 1, 1, 1, 1, 1, 1, 1});
  const CostModel even_costs = Costs(even, four);
  EXPECT_THAT(RunAndCheck("m_topo", even_costs, Objective::kThroughput).placement.device,
              ElementsAre(0, 0, 1, 1, 2, 2, 3, 3));
  // Uneven work: 4 | 1 1 1 1 on two devices.
  const Topology two = Cluster({{"gpu", 0}, {"gpu", 0}});
  const Graph uneven = Chain({4, 1, 1, 1, 1});
  const CostModel uneven_costs = Costs(uneven, two);
  EXPECT_THAT(RunAndCheck("m_topo", uneven_costs, Objective::kThroughput).placement.device, ElementsAre(0, 1, 1, 1, 1));
  // A device twice as fast takes twice the work: "fast" runs each operator in 0.5 s.
  const Topology mixed = Cluster({{"fast", 0}, {"slow", 0}});
  GraphBuilder b;
  for (int i = 0; i < 6; ++i) {
    b.AddOp(Op(absl::StrCat("c", i), {{"fast", 0.5}, {"slow", 1.0}}));
    if (i > 0) b.AddEdge(i - 1, 0, i);
  }
  const Graph g = Build(std::move(b));
  const CostModel mixed_costs = Costs(g, mixed);
  EXPECT_THAT(RunAndCheck("m_topo", mixed_costs, Objective::kThroughput).placement.device,
              ElementsAre(0, 0, 0, 0, 1, 1));
}

TEST(HandChecked, MTopoEndsAChunkEarlyWhenMemoryRunsOut) {
  constexpr int64_t kGiB = int64_t{1} << 30;
  // Device 0 holds two of the 1 GiB operators only; the rest spreads over the other two devices.
  const Topology topo = Cluster({{"gpu", 2 * kGiB}, {"gpu", 8 * kGiB}, {"gpu", 8 * kGiB}});
  GraphBuilder b;
  for (int i = 0; i < 9; ++i) {
    b.AddOp(Op(absl::StrCat("c", i), {{"gpu", 1.0}}, kGiB));
    if (i > 0) b.AddEdge(i - 1, 0, i);
  }
  const Graph g = Build(std::move(b));
  const CostModel costs = Costs(g, topo);
  EXPECT_THAT(RunAndCheck("m_topo", costs, Objective::kThroughput).placement.device,
              ElementsAre(0, 0, 1, 1, 1, 1, 2, 2, 2));
}

TEST(HandChecked, SingleDevicePicksTheQuickestDeviceThatHoldsTheGraph) {
  constexpr int64_t kGiB = int64_t{1} << 30;
  // "fast" is quickest but holds 1 GiB; "medium" holds the 3 GiB graph; "slow" holds it too.
  const Topology topo = Cluster({{"slow", 16 * kGiB}, {"fast", 1 * kGiB}, {"medium", 4 * kGiB}});
  GraphBuilder b;
  for (int i = 0; i < 3; ++i) {
    b.AddOp(Op(absl::StrCat("l", i), {{"fast", 1.0}, {"medium", 2.0}, {"slow", 4.0}}, kGiB));
    if (i > 0) b.AddEdge(i - 1, 0, i);
  }
  const Graph g = Build(std::move(b));
  const CostModel costs = Costs(g, topo);
  for (Objective objective : {Objective::kThroughput, Objective::kStepTime}) {
    const PlacerResult r = RunAndCheck("single_device", costs, objective);
    EXPECT_THAT(r.placement.device, ElementsAre(2, 2, 2));
    EXPECT_DOUBLE_EQ(r.evaluation.value, 6.0);
  }
  // With room everywhere it takes the fast device.
  const Topology roomy_topology = WithMemory(topo, 0);
  const CostModel roomy = Costs(g, roomy_topology);
  EXPECT_THAT(RunAndCheck("single_device", roomy, Objective::kThroughput).placement.device, ElementsAre(1, 1, 1));
}

TEST(HandChecked, RoundRobinDealsUnitsInTurnAndSkipsFullDevices) {
  constexpr int64_t kGiB = int64_t{1} << 30;
  GraphBuilder b;
  for (int i = 0; i < 7; ++i) b.AddOp(Op(absl::StrCat("x", i), {{"gpu", 1.0}}, kGiB));
  const Graph g = Build(std::move(b));
  const Topology costs_topology = Cluster({{"gpu", 0}, {"gpu", 0}, {"gpu", 0}});
  const CostModel costs = Costs(g, costs_topology);
  EXPECT_THAT(RunAndCheck("round_robin", costs, Objective::kThroughput).placement.device,
              ElementsAre(0, 1, 2, 0, 1, 2, 0));
  // Device 1 holds one operator: the deal skips it afterwards.
  const Topology tight_topology = Cluster({{"gpu", 0}, {"gpu", kGiB}, {"gpu", 0}});
  const CostModel tight = Costs(g, tight_topology);
  EXPECT_THAT(RunAndCheck("round_robin", tight, Objective::kThroughput).placement.device,
              ElementsAre(0, 1, 2, 0, 2, 0, 2));
}

uint64_t Fnv1a(const std::string& text) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

TEST(HandChecked, HashSendsEachUnitWhereItsNameHashesAndKeepsGroupsTogether) {
  GraphBuilder b;
  for (int i = 0; i < 40; ++i) {
    OpSpec op = Op(absl::StrCat("op", i), {{"gpu", 1.0}});
    if (i % 4 == 0) op.colocation_group = "shared";
    b.AddOp(std::move(op));
  }
  const Graph g = Build(std::move(b));
  const Topology costs_topology = Cluster({{"gpu", 0}, {"gpu", 0}, {"gpu", 0}, {"gpu", 0}});
  const CostModel costs = Costs(g, costs_topology);
  const PlacerResult r = RunAndCheck("hash", costs, Objective::kStepTime);
  for (int i = 0; i < 40; ++i) {
    const std::string key = i % 4 == 0 ? "shared" : absl::StrCat("op", i);
    EXPECT_EQ(r.placement.device[i], static_cast<DeviceId>(Fnv1a(key) % 4)) << key;
  }
  std::vector<int> per_device(4, 0);
  for (DeviceId d : r.placement.device) ++per_device[d];
  for (int count : per_device) EXPECT_GT(count, 0);
}

TEST(HandChecked, CriticalPathKeepsTheLongChainOnOneDevice) {
  // A chain of four 10 s operators with 1 GB tensors, and twelve independent 1 s operators.
  GraphBuilder b;
  for (int i = 0; i < 4; ++i) {
    b.AddOp(Op(absl::StrCat("chain", i), {{"gpu", 10.0}}, 0, 1'000'000'000));
    if (i > 0) b.AddEdge(i - 1, 0, i);
  }
  for (int i = 0; i < 12; ++i) b.AddOp(Op(absl::StrCat("side", i), {{"gpu", 1.0}}));
  const Graph g = Build(std::move(b));
  const Topology costs_topology = Cluster({{"gpu", 0}, {"gpu", 0}, {"gpu", 0}});
  const CostModel costs = Costs(g, costs_topology);
  const PlacerResult r = RunAndCheck("critical_path", costs, Objective::kStepTime);
  for (int i = 1; i < 4; ++i) EXPECT_EQ(r.placement.device[i], r.placement.device[0]);
  EXPECT_NEAR(r.evaluation.value, 40.0, 1e-9);  // the side operators fit on the other devices
  EXPECT_THAT(r.notes, ::testing::Contains(::testing::HasSubstr("critical path of 4 operators")));
}

TEST(HandChecked, FavouriteChildrenFollowTheCostlyEdges) {
  // a -> {b, c}: the edge to b carries a far larger tensor, so b is a's favourite child.
  GraphBuilder b;
  OpSpec a = Op("a", {{"gpu", 1.0}});
  a.outputs = {OutputTensor{0, 5.0}, OutputTensor{0, 0.1}};
  b.AddOp(std::move(a));
  b.AddOp(Op("b", {{"gpu", 1.0}}));
  b.AddOp(Op("c", {{"gpu", 1.0}}));
  b.AddEdge(0, 0, 1);
  b.AddEdge(0, 1, 2);
  const Graph g = Build(std::move(b));
  const Topology costs_topology = Cluster({{"gpu", 0}, {"gpu", 0}});
  const CostModel costs = Costs(g, costs_topology);
  absl::StatusOr<UnitIndex> units = UnitIndex::Build(costs);
  ASSERT_TRUE(units.ok());
  const FavouriteChildren fc = SolveFavouriteChildren(costs, MeanTransferTimes(costs, *units), 10);
  ASSERT_TRUE(fc.solved) << fc.note;
  EXPECT_THAT(fc.child, ElementsAre(1, kNone, kNone));
  // The relaxation splits the one non-favourite slot: x_ab = 0.1 / 5.1, so w = 2 + 5 * x_ab.
  EXPECT_NEAR(fc.lp_makespan, 2.0 + 0.5 / 5.1, 1e-6);
  const PlacerResult r = RunAndCheck("m_sct", costs, Objective::kStepTime);
  EXPECT_EQ(r.placement.device[1], r.placement.device[0]);
  EXPECT_NE(r.placement.device[2], r.placement.device[0]);
  EXPECT_NEAR(r.evaluation.value, 2.1, 1e-9);
}

TEST(HandChecked, PartitionersSeparateTwoLooselyJoinedCliques) {
  // Two cliques of six operators with 100 MB tensors inside, joined by one 1 kB edge: two devices, one each.
  GraphBuilder b;
  for (int c = 0; c < 2; ++c) {
    for (int i = 0; i < 6; ++i) {
      OpSpec op = Op(absl::StrCat("k", c, "_", i), {{"gpu", 1.0}});
      op.outputs = {OutputTensor{100'000'000, -1}, OutputTensor{1000, -1}};
      b.AddOp(std::move(op));
    }
  }
  for (int c = 0; c < 2; ++c) {
    for (int i = 0; i < 6; ++i) {
      for (int j = i + 1; j < 6; ++j) b.AddEdge(c * 6 + i, 0, c * 6 + j);
    }
  }
  b.AddEdge(5, 1, 6);
  const Graph g = Build(std::move(b));
  const Topology costs_topology = Cluster({{"gpu", 0}, {"gpu", 0}});
  const CostModel costs = Costs(g, costs_topology);
  for (const std::string placer : {"scotch", "metis"}) {
    const PlacerResult r = RunAndCheck(placer, costs, Objective::kThroughput);
    for (int i = 1; i < 6; ++i) EXPECT_EQ(r.placement.device[i], r.placement.device[0]) << placer;
    for (int i = 7; i < 12; ++i) EXPECT_EQ(r.placement.device[i], r.placement.device[6]) << placer;
    EXPECT_NE(r.placement.device[0], r.placement.device[6]) << placer;
  }
}

TEST(HandChecked, PartitionRepairMovesWorkOffAFullDevice) {
  constexpr int64_t kGiB = int64_t{1} << 30;
  // Two independent chains of 1 GiB operators; device 1 holds only two of them, so a balanced partition
  // must be repaired onto device 0.
  GraphBuilder b;
  for (int c = 0; c < 2; ++c) {
    for (int i = 0; i < 4; ++i) {
      b.AddOp(Op(absl::StrCat("c", c, "_", i), {{"gpu", 1.0}}, kGiB, 1000));
      if (i > 0) b.AddEdge(c * 4 + i - 1, 0, c * 4 + i);
    }
  }
  const Graph g = Build(std::move(b));
  const Topology costs_topology = Cluster({{"gpu", 16 * kGiB}, {"gpu", 2 * kGiB}});
  const CostModel costs = Costs(g, costs_topology);
  for (const std::string placer : {"scotch", "metis"}) {
    const PlacerResult r = RunAndCheck(placer, costs, Objective::kThroughput);
    int on_small = 0;
    for (DeviceId d : r.placement.device) on_small += d == 1;
    EXPECT_LE(on_small, 2) << placer;
    if (placer == "metis") {
      EXPECT_THAT(r.notes, ::testing::Contains(::testing::HasSubstr("memory balanced as a second METIS constraint")));
    }
  }
}

}  // namespace
}  // namespace placement::heuristics::testing
