// Hand-computed schedules: every expected time and byte count below is worked out in the comment above it.
#include "simulator/simulator.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "simulator/tests/test_support.h"

namespace placement {
namespace {

using ::placement::testing::Build;
using ::placement::testing::Costs;
using ::placement::testing::Gpu;
using ::placement::testing::Matrix;
using ::placement::testing::Op;
using ::testing::HasSubstr;

using Kind = TimelineEntry::Kind;

SimulationResult SimulateWithTimeline(const CostModel& costs, std::vector<DeviceId> devices,
                                      SimulatorConfig config = {}) {
  config.record_timeline = true;
  absl::StatusOr<SimulationResult> r = Simulate(costs, Placement{std::move(devices)}, config);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? *std::move(r) : SimulationResult{};
}

const TimelineEntry* FindOp(const SimulationResult& r, OpId op) {
  for (const TimelineEntry& e : r.timeline) {
    if (e.kind == Kind::kOp && e.id == op) return &e;
  }
  ADD_FAILURE() << "operator " << op << " is not in the timeline";
  return nullptr;
}

std::vector<TimelineEntry> Transfers(const SimulationResult& r) {
  std::vector<TimelineEntry> out;
  for (const TimelineEntry& e : r.timeline) {
    if (e.kind == Kind::kTransfer) out.push_back(e);
  }
  return out;
}

TEST(Simulator, ChainSplitOverTwoDevicesWaitsForItsTransfer) {
  GraphBuilder b;
  const OpId a = b.AddOp(Op("a", 1.0, {1000}));
  const OpId c = b.AddOp(Op("b", 2.0));
  b.AddEdge(a, 0, c);
  const Graph g = Build(std::move(b));
  // 1000 bytes at 1000 bytes/s after 0.5 s of latency: 1.5 s on the wire.
  const Topology t = Matrix({Gpu("d0"), Gpu("d1")}, 1000, 0.5);
  const CostModel costs = Costs(g, t);

  const SimulationResult r = SimulateWithTimeline(costs, {0, 1});
  // a runs 0..1, its output travels 1..2.5, b runs 2.5..4.5.
  EXPECT_DOUBLE_EQ(r.makespan, 4.5);
  EXPECT_EQ(r.transfers, 1);
  EXPECT_EQ(r.bytes_moved, 1000);
  ASSERT_EQ(r.timeline.size(), 3u);
  EXPECT_EQ(r.timeline[1].kind, Kind::kTransfer);
  EXPECT_EQ(r.timeline[1].device, 0);
  EXPECT_EQ(r.timeline[1].peer, 1);
  EXPECT_DOUBLE_EQ(r.timeline[1].start, 1.0);
  EXPECT_DOUBLE_EQ(r.timeline[1].end, 2.5);
  EXPECT_DOUBLE_EQ(FindOp(r, c)->start, 2.5);
  EXPECT_DOUBLE_EQ(r.devices[0].busy, 1.0);
  EXPECT_DOUBLE_EQ(r.devices[1].busy, 2.0);
}

TEST(Simulator, FanOutSendsOneTensorOncePerDestinationDevice) {
  GraphBuilder b;
  const OpId a = b.AddOp(Op("a", 1.0, {1000}));
  const OpId x = b.AddOp(Op("x", 1.0));
  const OpId y = b.AddOp(Op("y", 1.0));
  const OpId z = b.AddOp(Op("z", 1.0));
  for (OpId reader : {x, y, z}) b.AddEdge(a, 0, reader);
  const Graph g = Build(std::move(b));
  const Topology t = Matrix({Gpu("d0"), Gpu("d1"), Gpu("d2")}, 1000);
  const CostModel costs = Costs(g, t);

  // x and y read a on d1, z on d2: two transfers, not three.
  const SimulationResult r = SimulateWithTimeline(costs, {0, 1, 1, 2});
  EXPECT_EQ(r.transfers, 2);
  EXPECT_EQ(r.bytes_moved, 2000);
  const std::vector<TimelineEntry> sent = Transfers(r);
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[0].peer, 1);
  EXPECT_EQ(sent[1].peer, 2);
  // Separate links: both copies travel 1..2; x and y share d1 (2..3, 3..4), z runs 2..3 on d2.
  EXPECT_DOUBLE_EQ(r.makespan, 4.0);
  // d1 holds one copy of a's 1000 bytes, from the transfer's start until y, its last reader, ends.
  EXPECT_EQ(r.devices[1].peak_memory, 1000);
  EXPECT_EQ(r.devices[2].peak_memory, 1000);
}

TEST(Simulator, TwoTransfersOnOneLinkSerialize) {
  GraphBuilder b;
  const OpId a = b.AddOp(Op("a", 1.0, {1000, 1000}));
  const OpId x = b.AddOp(Op("x", 1.0));
  const OpId y = b.AddOp(Op("y", 1.0));
  b.AddEdge(a, 0, x);
  b.AddEdge(a, 1, y);
  const Graph g = Build(std::move(b));
  absl::StatusOr<Topology> bus = BuildSharedBus("bus", {Gpu("d0"), Gpu("d1"), Gpu("d2")}, 1000, 0);
  ASSERT_TRUE(bus.ok()) << bus.status();
  const CostModel costs = Costs(g, *bus);

  // Both of a's outputs leave over d0's one bus: the first 1..2, the second queues behind it, 2..3.
  const SimulationResult r = SimulateWithTimeline(costs, {0, 1, 2});
  const std::vector<TimelineEntry> sent = Transfers(r);
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_DOUBLE_EQ(sent[0].start, 1.0);
  EXPECT_DOUBLE_EQ(sent[0].end, 2.0);
  EXPECT_DOUBLE_EQ(sent[1].start, 2.0);
  EXPECT_DOUBLE_EQ(sent[1].end, 3.0);
  EXPECT_DOUBLE_EQ(FindOp(r, y)->start, 3.0);
  EXPECT_DOUBLE_EQ(r.makespan, 4.0);

  // With a link per pair the two travel together and y finishes a second earlier.
  const Topology matrix = Matrix({Gpu("d0"), Gpu("d1"), Gpu("d2")}, 1000);
  const CostModel parallel = Costs(g, matrix);
  EXPECT_DOUBLE_EQ(SimulateWithTimeline(parallel, {0, 1, 2}).makespan, 3.0);
}

TEST(Simulator, DiamondMemoryPeak) {
  // a -> {b, c} -> d on one device, run a, b, c, d, one second each.
  GraphBuilder b;
  OpSpec a_spec = Op("a", 1.0, {100});
  a_spec.temp_bytes = 1500;
  a_spec.param_bytes = 5000;
  OpSpec b_spec = Op("b", 1.0, {10});
  b_spec.temp_bytes = 1000;
  OpSpec c_spec = Op("c", 1.0, {20});
  c_spec.temp_bytes = 2000;
  const OpId a = b.AddOp(a_spec);
  const OpId bb = b.AddOp(b_spec);
  const OpId c = b.AddOp(c_spec);
  const OpId d = b.AddOp(Op("d", 1.0, {1}));
  b.AddEdge(a, 0, bb);
  b.AddEdge(a, 0, c);
  b.AddEdge(bb, 0, d);
  b.AddEdge(c, 0, d);
  const Graph g = Build(std::move(b));
  const Topology t = Matrix({Gpu("d0")}, 1000);
  const CostModel costs = Costs(g, t);

  const SimulationResult r = SimulateWithTimeline(costs, {0, 0, 0, 0});
  EXPECT_DOUBLE_EQ(r.makespan, 4.0);
  // Parameters 5000 throughout, and then:
  //   [0,1) a: a.out 100 + a.temp 1500                               = 1600
  //   [1,2) b: a.out 100 + b.out 10 + b.temp 1000                    = 1110
  //   [2,3) c: a.out 100 (c still reads it) + b.out 10 + c.out 20 + c.temp 2000 = 2130
  //   [3,4) d: b.out 10 + c.out 20 + d.out 1                         =   31
  // Buffers live over half-open intervals, so a's scratch is gone when b's arrives at t = 1.
  EXPECT_EQ(r.devices[0].peak_memory, 5000 + 2130);
  // The recorded step function has those values, then the parameters alone once d's outputs are gone.
  std::vector<std::pair<double, int64_t>> samples;
  for (const MemorySample& m : r.memory.at(0)) samples.emplace_back(m.time, m.bytes);
  EXPECT_THAT(samples, ::testing::ElementsAre(std::pair{0.0, int64_t{6600}}, std::pair{1.0, int64_t{6110}},
                                              std::pair{2.0, int64_t{7130}}, std::pair{3.0, int64_t{5031}},
                                              std::pair{4.0, int64_t{5000}}));
  EXPECT_FALSE(r.devices[0].oom);
  EXPECT_TRUE(r.fits_memory);
}

TEST(Simulator, FlagsOutOfMemory) {
  GraphBuilder b;
  OpSpec big = Op("big", 1.0);
  big.param_bytes = 2000;
  OpSpec small = Op("small", 1.0);
  small.param_bytes = 500;
  b.AddOp(big);
  b.AddOp(small);
  const Graph g = Build(std::move(b));
  const Topology t = Matrix({Gpu("tight", 1000), Gpu("roomy", 1000)}, 1000);
  const CostModel costs = Costs(g, t);

  SimulationResult r = SimulateWithTimeline(costs, {0, 1});
  EXPECT_EQ(r.devices[0].peak_memory, 2000);
  EXPECT_EQ(r.devices[0].capacity, 1000);
  EXPECT_TRUE(r.devices[0].oom);
  EXPECT_FALSE(r.devices[1].oom);
  EXPECT_FALSE(r.fits_memory);

  r = SimulateWithTimeline(costs, {1, 0});
  EXPECT_FALSE(r.devices[0].oom);
  EXPECT_TRUE(r.devices[1].oom) << "2000 bytes of parameters fit neither 1000-byte device";
}

TEST(Simulator, EdgesInsideADeviceAreFree) {
  GraphBuilder b;
  const OpId x = b.AddOp(Op("x", 1.0, {int64_t{1} << 40}));
  const OpId y = b.AddOp(Op("y", 1.0, {int64_t{1} << 40}));
  const OpId z = b.AddOp(Op("z", 1.0));
  b.AddEdge(x, 0, y);
  b.AddEdge(y, 0, z);
  const Graph g = Build(std::move(b));
  // A terabyte would take over a year on this link, were it used.
  const Topology t = Matrix({Gpu("d0"), Gpu("d1")}, 1000, 1.0);
  const CostModel costs = Costs(g, t);

  const SimulationResult r = SimulateWithTimeline(costs, {1, 1, 1});
  EXPECT_DOUBLE_EQ(r.makespan, 3.0);
  EXPECT_EQ(r.transfers, 0);
  EXPECT_EQ(r.bytes_moved, 0);
  EXPECT_DOUBLE_EQ(r.devices[0].busy, 0.0);
  EXPECT_DOUBLE_EQ(r.devices[1].busy, 3.0);
}

TEST(Simulator, PlacetoPresetAddsGaps) {
  const SimulatorConfig placeto = SimulatorConfig::Placeto();
  EXPECT_DOUBLE_EQ(placeto.op_gap, 5.7e-6);
  EXPECT_DOUBLE_EQ(placeto.transfer_gap, 25e-6);
  absl::StatusOr<Topology> t = PlacetoTopology({Gpu("d0"), Gpu("d1")});
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->name(), "placeto");
  EXPECT_DOUBLE_EQ(t->path(0, 1).bandwidth, 7.6e9);
  EXPECT_DOUBLE_EQ(t->path(0, 1).latency, 0.0);

  // a (1 ms) sends two 7,600-byte outputs (1 us each on the bus) to p and q on d1; r follows a on d0.
  GraphBuilder b;
  const OpId a = b.AddOp(Op("a", 1e-3, {7600, 7600}));
  const OpId p = b.AddOp(Op("p", 1e-3));
  const OpId q = b.AddOp(Op("q", 1e-3));
  const OpId s = b.AddOp(Op("r", 1e-3));
  b.AddEdge(a, 0, p);
  b.AddEdge(a, 1, q);
  b.AddEdge(a, 0, s);
  const Graph g = Build(std::move(b));
  const CostModel costs = Costs(g, *t);

  const SimulationResult r = SimulateWithTimeline(costs, {0, 1, 1, 0}, placeto);
  const std::vector<TimelineEntry> sent = Transfers(r);
  ASSERT_EQ(sent.size(), 2u);
  constexpr double kTol = 1e-12;
  EXPECT_NEAR(sent[0].start, 1e-3, kTol);
  EXPECT_NEAR(sent[0].end, 1.001e-3, kTol);
  // The bus rests 25 us after the first transfer.
  EXPECT_NEAR(sent[1].start, 1.026e-3, kTol);
  EXPECT_NEAR(sent[1].end, 1.027e-3, kTol);
  // d0 rests 5.7 us after a before r.
  EXPECT_NEAR(FindOp(r, s)->start, 1.0057e-3, kTol);
  // p runs 1.001..2.001 ms; q, ready at 1.027 ms, waits for p and d1's 5.7 us rest.
  EXPECT_NEAR(FindOp(r, p)->start, 1.001e-3, kTol);
  EXPECT_NEAR(FindOp(r, q)->start, 2.0067e-3, kTol);
  EXPECT_NEAR(r.makespan, 3.0067e-3, kTol);
}

TEST(Simulator, UpwardRankRunsTheLongerBranchFirst) {
  // s -> z (a short branch ending at once) and s -> x -> y (x heads 10 s of work on d1). All on d0 but y.
  GraphBuilder b;
  const OpId s = b.AddOp(Op("s", 1.0));
  const OpId z = b.AddOp(Op("z", 1.0));
  const OpId x = b.AddOp(Op("x", 1.0));
  const OpId y = b.AddOp(Op("y", 10.0));
  b.AddEdge(s, 0, z);
  b.AddEdge(s, 0, x);
  b.AddEdge(x, 0, y);
  const Graph g = Build(std::move(b));
  const Topology t = Matrix({Gpu("d0"), Gpu("d1")}, 1000);  // empty tensors cross in no time
  const CostModel costs = Costs(g, t);
  const std::vector<DeviceId> devices = {0, 0, 0, 1};

  // Topological order takes z (the smaller OpId) first: z 1..2, x 2..3, y 3..13.
  SimulatorConfig config;
  SimulationResult r = SimulateWithTimeline(costs, devices, config);
  EXPECT_LT(FindOp(r, z)->start, FindOp(r, x)->start);
  EXPECT_DOUBLE_EQ(r.makespan, 13.0);

  // Upward rank: x's rank is 1 + 10 = 11, z's is 1, so x goes first: x 1..2, y 2..12, z 2..3.
  config.priority = QueuePriority::kUpwardRank;
  r = SimulateWithTimeline(costs, devices, config);
  EXPECT_DOUBLE_EQ(FindOp(r, x)->start, 1.0);
  EXPECT_DOUBLE_EQ(FindOp(r, z)->start, 2.0);
  EXPECT_DOUBLE_EQ(r.makespan, 12.0);
}

TEST(Simulator, RejectsInvalidPlacement) {
  GraphBuilder b;
  OpSpec first = Op("first", 1.0);
  first.colocation_group = "pair";
  OpSpec second = Op("second", 1.0);
  second.colocation_group = "pair";
  b.AddOp(first);
  b.AddOp(second);
  const Graph g = Build(std::move(b));
  const Topology t = Matrix({Gpu("d0"), Gpu("d1")}, 1000);
  const CostModel costs = Costs(g, t);

  absl::StatusOr<SimulationResult> r = Simulate(costs, Placement{{0}});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("graph has 2"));

  r = Simulate(costs, Placement{{0, 7}});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("second"));

  r = Simulate(costs, Placement{{0, 1}});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("pair"));

  SimulatorConfig config;
  config.op_gap = -1;
  r = Simulate(costs, Placement{{1, 1}}, config);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("op_gap"));

  EXPECT_TRUE(Simulate(costs, Placement{{1, 1}}).ok());
}

namespace host_stream {

// A chain of three operators on one GPU whose host thread takes `host` seconds to issue each.
SimulationResult ChainIssuedByTheHost(double kernel, double host) {
  GraphBuilder b;
  const OpId a = b.AddOp(Op("a", kernel));
  const OpId m = b.AddOp(Op("b", kernel));
  const OpId c = b.AddOp(Op("c", kernel));
  b.AddEdge(a, 0, m);
  b.AddEdge(m, 0, c);
  const Graph g = Build(std::move(b));
  Device gpu = Gpu("d0");
  gpu.host_op_overhead = host;
  const Topology t = Matrix({gpu}, 1000);
  const CostModel costs = Costs(g, t);
  return SimulateWithTimeline(costs, {0, 0, 0});
}

TEST(Simulator, ShortKernelsWaitForTheHostThatIssuesThem) {
  // Issued at 10, 20 and 30 us, each runs 1 us once issued: the step is the host's.
  const SimulationResult r = ChainIssuedByTheHost(1e-6, 10e-6);
  EXPECT_NEAR(r.makespan, 31e-6, 1e-12);
  EXPECT_NEAR(FindOp(r, 1)->start, 20e-6, 1e-12);
  EXPECT_NEAR(r.devices[0].busy, 3e-6, 1e-12);  // the device computes only while its kernels run
}

TEST(Simulator, LongKernelsHideTheHostsIssue) {
  // The host issues b at 0.2 s and c at 0.3 s, while a (0.1 .. 1.1 s) still runs: only the first issue shows.
  const SimulationResult r = ChainIssuedByTheHost(1.0, 0.1);
  EXPECT_NEAR(r.makespan, 3.1, 1e-12);
  EXPECT_NEAR(FindOp(r, 2)->start, 2.1, 1e-12);
}

TEST(Simulator, WithoutHostOverheadsNothingWaitsForTheHost) {
  const SimulationResult r = ChainIssuedByTheHost(1.0, 0);
  EXPECT_NEAR(r.makespan, 3.0, 1e-12);
}

// Two independent operators on two GPUs of one host, each issued in 10 us and running 1 us.
SimulationResult TwoGpusIssuedByTheHost(bool thread_per_device, int32_t second_host) {
  GraphBuilder b;
  b.AddOp(Op("a", 1e-6));
  b.AddOp(Op("b", 1e-6));
  const Graph g = Build(std::move(b));
  Device d0 = Gpu("d0"), d1 = Gpu("d1");
  d0.host_op_overhead = d1.host_op_overhead = 10e-6;
  d1.host = second_host;
  const Topology t = Matrix({d0, d1}, 1000);
  const CostModel costs = Costs(g, t);
  SimulatorConfig config;
  config.host_thread_per_device = thread_per_device;
  return SimulateWithTimeline(costs, {0, 1}, config);
}

TEST(Simulator, OneProcessIssuesForEveryGpuOfItsHostOneOperatorAfterAnother) {
  // One thread: a is issued at 10 us, b at 20 us.
  EXPECT_NEAR(TwoGpusIssuedByTheHost(false, 0).makespan, 21e-6, 1e-12);
  // A process per GPU (data-parallel replicas, pipeline stages), or GPUs of two hosts: each issues its own.
  EXPECT_NEAR(TwoGpusIssuedByTheHost(true, 0).makespan, 11e-6, 1e-12);
  EXPECT_NEAR(TwoGpusIssuedByTheHost(false, 1).makespan, 11e-6, 1e-12);
}

}  // namespace host_stream
}  // namespace
}  // namespace placement
