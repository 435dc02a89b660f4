// pipeline_dp on hand-made cases: memory that no contiguous split satisfies (and by how much), CPUs taking
// what accelerators cannot, topologies outside the model, lattices too large to prove, backward-only colour
// classes, and training graphs from graph/training.
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "graph/tarnawski.h"
#include "graph/topology.h"
#include "graph/training.h"
#include "policy/exact/pipeline_dp.h"
#include "policy/exact/tests/brute_force.h"
#include "policy/exact/tests/contiguity.h"
#include "simulator/objectives.h"

namespace placement {
namespace {

using ::testing::HasSubstr;

// A Tarnawski input: nodes as (fpga latency, size, supported), a chain of edges through them in order, each
// with the given cost, and colour classes one per node.
std::string Chain(const std::vector<std::pair<double, int64_t>>& nodes, int64_t capacity, int k, int cpus,
                  double cost = 0.5, int unsupported = -1) {
  std::string text = absl::StrCat(R"({"maxSizePerFPGA": )", capacity, R"(, "maxFPGAs": )", k, R"(, "maxCPUs": )", cpus,
                                  R"(, "nodes": [)");
  for (size_t i = 0; i < nodes.size(); ++i) {
    absl::StrAppend(&text, i ? ", " : "", R"({"id": )", i, R"(, "supportedOnFpga": )",
                    static_cast<int>(i) == unsupported ? 0 : 1, R"(, "cpuLatency": )", nodes[i].first * 10,
                    R"(, "fpgaLatency": )", nodes[i].first, R"(, "isBackwardNode": 0, "colorClass": )", i,
                    R"(, "size": )", nodes[i].second, "}");
  }
  absl::StrAppend(&text, R"(], "edges": [)");
  for (size_t i = 0; i + 1 < nodes.size(); ++i) {
    absl::StrAppend(&text, i ? ", " : "", R"({"sourceId": )", i, R"(, "destId": )", i + 1, R"(, "cost": )", cost, "}");
  }
  return absl::StrCat(text, "]}");
}

struct Solved {
  Problem problem;
  absl::StatusOr<PipelineSolution> solution;
};

Solved Solve(const std::string& text, const PipelineOptions& options = {}) {
  Solved s;
  absl::StatusOr<Problem> p = ParseTarnawskiGraph(text);
  EXPECT_TRUE(p.ok()) << p.status();
  s.problem = *std::move(p);
  absl::StatusOr<CostModel> costs = CostModel::Create(s.problem.graph, *s.problem.topology);
  EXPECT_TRUE(costs.ok()) << costs.status();
  s.solution = SolveContiguousPipeline(*costs, Budget{}, options);
  return s;
}

TEST(PipelineDpMemory, TotalBytesBeyondEveryAccelerator) {
  Solved s = Solve(Chain({{1, 60}, {1, 60}, {1, 60}}, 80, 2, 0));
  EXPECT_EQ(s.solution.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.solution.status().message(),
              HasSubstr("needs 180 B but the 2 accelerators hold 160 B: 20 B missing"));
}

TEST(PipelineDpMemory, AColourClassLargerThanAnAccelerator) {
  Solved s = Solve(Chain({{1, 10}, {1, 100}}, 80, 3, 0));
  EXPECT_EQ(s.solution.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.solution.status().message(),
              HasSubstr("'color1' holds 100 B but an accelerator holds 80 B: 20 B missing"));
}

TEST(PipelineDpMemory, ContiguityAloneCanMakeItInfeasible) {
  // 18 bytes fit two 10-byte accelerators, but no two contiguous pieces of the chain do: the best split still
  // puts 12 bytes on one of them.
  Solved s = Solve(Chain({{1, 6}, {1, 6}, {1, 6}}, 10, 2, 0));
  EXPECT_EQ(s.solution.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.solution.status().message(), HasSubstr("12 B on an accelerator that holds 10 B: 2 B missing"));
}

TEST(PipelineDpMemory, ACpuTakesWhatAcceleratorsCannotHold) {
  Solved s = Solve(Chain({{1, 6}, {1, 6}, {1, 6}}, 10, 2, 1));
  ASSERT_TRUE(s.solution.ok()) << s.solution.status();
  EXPECT_EQ(s.solution->cpus_used, 1);
  EXPECT_TRUE(s.solution->proven_optimal);
  EXPECT_DOUBLE_EQ(s.solution->max_load, 10.0);  // the CPU runs one node at ten times the accelerator's time
}

TEST(PipelineDpMemory, AZeroTimeNodeThatHoldsBytesIsNotForcedOntoItsNeighbour) {
  // Node 0 costs no time, so the reductions would merge it into node 1; but then {0, 1} holds 100 bytes and
  // nothing fits. The unmerged model puts it alone on one accelerator.
  const std::string text = Chain({{0, 50}, {5, 50}, {5, 10}}, 60, 2, 0);
  Solved s = Solve(text);
  ASSERT_TRUE(s.solution.ok()) << s.solution.status();
  EXPECT_TRUE(s.solution->proven_optimal);
  EXPECT_DOUBLE_EQ(s.solution->max_load, 10.5);
  absl::StatusOr<CostModel> costs = CostModel::Create(s.problem.graph, *s.problem.topology);
  ASSERT_TRUE(costs.ok());
  EXPECT_DOUBLE_EQ(testing_internal::BruteForceContiguous(*costs).value, 10.5);
}

TEST(PipelineDpDevices, NodesOnlyACpuRunsGoToTheCpu) {
  Solved s = Solve(Chain({{1, 0}, {2, 0}, {1, 0}}, 100, 2, 1, 0.5, /*unsupported=*/1));
  ASSERT_TRUE(s.solution.ok()) << s.solution.status();
  const DeviceId d = s.solution->placement.device[s.problem.graph.FindOp("1")];
  EXPECT_EQ(s.problem.topology->device(d).type, DeviceType::kCpu);
  EXPECT_DOUBLE_EQ(s.solution->max_load, 20.0);
}

// A three-operator chain whose tensors' transfer times come from bytes (or are measured).
Graph SmallGraph(bool measured) {
  GraphBuilder b;
  for (int i = 0; i < 3; ++i) {
    OpSpec op;
    op.name = absl::StrCat("op", i);
    op.op_type = "test";
    op.measured_seconds = {{"gpu", 1.0}, {"gpu2", 1.0}};
    op.outputs.push_back(OutputTensor{1000, measured ? 0.25 : -1});
    b.AddOp(std::move(op));
  }
  b.AddEdge(0, 0, 1);
  b.AddEdge(1, 0, 2);
  absl::StatusOr<Graph> g = std::move(b).Build();
  EXPECT_TRUE(g.ok()) << g.status();
  return *std::move(g);
}

Topology TwoHosts() {
  HierarchySpec spec;
  spec.name = "2x2";
  spec.network_bandwidth = 1e3;
  spec.network_latency = 0.1;
  for (int h = 0; h < 2; ++h) {
    HostSpec host;
    host.name = absl::StrCat("host", h);
    host.intra_bandwidth = 1e6;
    host.intra_latency = 0.001;
    for (int i = 0; i < 2; ++i)
      host.devices.push_back(Device{absl::StrCat("gpu", i), "gpu", DeviceType::kAccelerator, 1, 1, 0});
    spec.hosts.push_back(std::move(host));
  }
  absl::StatusOr<Topology> t = BuildHierarchy(spec);
  EXPECT_TRUE(t.ok()) << t.status();
  return *std::move(t);
}

TEST(PipelineDpDevices, AHeterogeneousInterconnectIsOutsideTheModel) {
  const Graph g = SmallGraph(/*measured=*/false);
  const Topology t = TwoHosts();
  absl::StatusOr<CostModel> costs = CostModel::Create(g, t);
  ASSERT_TRUE(costs.ok()) << costs.status();
  absl::StatusOr<PipelineSolution> sol = SolveContiguousPipeline(*costs, Budget{});
  EXPECT_EQ(sol.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(sol.status().message(), HasSubstr("one interconnect figure for every pair of devices"));

  // Measured transfer times do not depend on the path: the same cluster is then fine.
  const Graph measured = SmallGraph(/*measured=*/true);
  absl::StatusOr<CostModel> measured_costs = CostModel::Create(measured, t);
  ASSERT_TRUE(measured_costs.ok()) << measured_costs.status();
  sol = SolveContiguousPipeline(*measured_costs, Budget{});
  ASSERT_TRUE(sol.ok()) << sol.status();
  EXPECT_DOUBLE_EQ(sol->max_load, 1.5);  // 3 units of work over 4 accelerators: one op and one transfer, at best
}

TEST(PipelineDpDevices, AcceleratorsMustBeIdentical) {
  const Graph g = SmallGraph(/*measured=*/true);
  absl::StatusOr<Topology> t = BuildSharedBus(
      "mixed",
      {Device{"a", "gpu", DeviceType::kAccelerator, 1, 1, 0}, Device{"b", "gpu2", DeviceType::kAccelerator, 1, 1, 0}},
      1, 0);
  ASSERT_TRUE(t.ok()) << t.status();
  absl::StatusOr<CostModel> costs = CostModel::Create(g, *t);
  ASSERT_TRUE(costs.ok()) << costs.status();
  absl::StatusOr<PipelineSolution> sol = SolveContiguousPipeline(*costs, Budget{});
  EXPECT_EQ(sol.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(sol.status().message(), HasSubstr("identical devices"));
}

TEST(PipelineDpDevices, PinnedOperatorsAreRefused) {
  GraphBuilder b;
  OpSpec op;
  op.name = "x";
  op.op_type = "test";
  op.measured_seconds = {{"gpu", 1.0}};
  op.pinned_device = "a";
  b.AddOp(std::move(op));
  absl::StatusOr<Graph> g = std::move(b).Build();
  ASSERT_TRUE(g.ok()) << g.status();
  absl::StatusOr<Topology> t = BuildSharedBus("bus", {Device{"a", "gpu", DeviceType::kAccelerator, 1, 1, 0}}, 1, 0);
  ASSERT_TRUE(t.ok()) << t.status();
  absl::StatusOr<CostModel> costs = CostModel::Create(*g, *t);
  ASSERT_TRUE(costs.ok()) << costs.status();
  EXPECT_EQ(SolveContiguousPipeline(*costs, Budget{}).status().code(), absl::StatusCode::kUnimplemented);
}

// Twelve parallel chains of six nodes between a source and a sink: 7^12 ideals, far past any limit.
std::string WideGraph() {
  const int chains = 12, length = 6;
  std::string nodes =
      R"({"id": 0, "supportedOnFpga": 1, "cpuLatency": 10, "fpgaLatency": 1, "isBackwardNode": 0, "size": 1})";
  std::string edges;
  const int sink = 1 + chains * length;
  for (int c = 0; c < chains; ++c) {
    for (int i = 0; i < length; ++i) {
      const int id = 1 + c * length + i;
      absl::StrAppend(&nodes, R"(, {"id": )", id, R"(, "supportedOnFpga": 1, "cpuLatency": )", 10 + c + i,
                      R"(, "fpgaLatency": )", 1 + 0.1 * (c + i), R"(, "isBackwardNode": 0, "size": 1})");
      absl::StrAppend(&edges, edges.empty() ? "" : ", ", R"({"sourceId": )", i == 0 ? 0 : id - 1, R"(, "destId": )", id,
                      R"(, "cost": 0.05})");
    }
    absl::StrAppend(&edges, R"(, {"sourceId": )", 1 + c * length + length - 1, R"(, "destId": )", sink,
                    R"(, "cost": 0.05})");
  }
  absl::StrAppend(&nodes, R"(, {"id": )", sink,
                  R"(, "supportedOnFpga": 1, "cpuLatency": 10, "fpgaLatency": 1, "isBackwardNode": 0, "size": 1})");
  return absl::StrCat(R"({"maxSizePerFPGA": 1000, "maxFPGAs": 4, "maxCPUs": 1, "nodes": [)", nodes, R"(], "edges": [)",
                      edges, "]}");
}

TEST(PipelineDpLimits, ALatticeTooLargeYieldsTheBestSplitAndABound) {
  PipelineOptions options;
  options.max_ideals = 5000;
  Solved s = Solve(WideGraph(), options);
  ASSERT_TRUE(s.solution.ok()) << s.solution.status();
  EXPECT_FALSE(s.solution->proven_optimal);
  EXPECT_GT(s.solution->lower_bound, 0);
  EXPECT_LE(s.solution->lower_bound, s.solution->max_load);
  EXPECT_THAT(s.solution->notes.front(), HasSubstr("more than 5000 ideals"));
  absl::StatusOr<CostModel> costs = CostModel::Create(s.problem.graph, *s.problem.topology);
  ASSERT_TRUE(costs.ok());
  absl::StatusOr<Evaluation> ev = Evaluate(*costs, s.solution->placement, Objective::kThroughput);
  ASSERT_TRUE(ev.ok()) << ev.status();
  EXPECT_DOUBLE_EQ(ev->value, s.solution->max_load);
  EXPECT_TRUE(testing_internal::IsContiguous(s.problem.graph, s.solution->placement));
}

TEST(PipelineDpLimits, AShortBudgetOnAWideGraphStopsInTime) {
  absl::StatusOr<Problem> p = ParseTarnawskiGraph(WideGraph());
  ASSERT_TRUE(p.ok()) << p.status();
  absl::StatusOr<CostModel> costs = CostModel::Create(p->graph, *p->topology);
  ASSERT_TRUE(costs.ok()) << costs.status();
  const absl::Time start = absl::Now();
  const absl::Duration budget = absl::Milliseconds(50);
  absl::StatusOr<PipelineSolution> sol = SolveContiguousPipeline(*costs, Budget::For(budget));
  EXPECT_LT(absl::Now() - start, 4 * budget + absl::Seconds(2));  // ends with its budget; generous for a loaded host
  if (sol.ok()) {
    EXPECT_FALSE(sol->proven_optimal);
  } else {
    EXPECT_EQ(sol.status().code(), absl::StatusCode::kDeadlineExceeded) << sol.status();
  }
}

TEST(PipelineDpTraining, BackwardNodesWithoutAForwardPartnerFollowTheMirroredOrder) {
  // Node 2 is backward and alone in its class: its unit is ordered by the mirror image of its backward edge
  // 3 -> 2 (before the unit of 3, which is node 1's), as in the publication. Units: {0} (work 1), {1, 3}
  // (work 3), {2} (work 2); tensors of 0 and 3 cost 0.5 each.
  const std::string text = R"({"maxSizePerFPGA": 1000, "maxFPGAs": 2, "maxCPUs": 0, "nodes": [
    {"id": 0, "supportedOnFpga": 1, "cpuLatency": 10, "fpgaLatency": 1, "isBackwardNode": 0, "colorClass": 0, "size": 1},
    {"id": 1, "supportedOnFpga": 1, "cpuLatency": 10, "fpgaLatency": 1, "isBackwardNode": 0, "colorClass": 1, "size": 1},
    {"id": 2, "supportedOnFpga": 1, "cpuLatency": 20, "fpgaLatency": 2, "isBackwardNode": 1, "colorClass": 7, "size": 1},
    {"id": 3, "supportedOnFpga": 1, "cpuLatency": 20, "fpgaLatency": 2, "isBackwardNode": 1, "colorClass": 1, "size": 1}],
    "edges": [{"sourceId": 0, "destId": 1, "cost": 0.5}, {"sourceId": 3, "destId": 2, "cost": 0.5}]})";
  Solved s = Solve(text);
  ASSERT_TRUE(s.solution.ok()) << s.solution.status();
  EXPECT_TRUE(s.solution->proven_optimal);
  // {0, 2} then {1, 3}: 3 + 0.5 + 0.5 on each accelerator.
  EXPECT_DOUBLE_EQ(s.solution->max_load, 4.0);
  const Graph& g = s.problem.graph;
  EXPECT_EQ(s.solution->placement.device[g.FindOp("2")], s.solution->placement.device[g.FindOp("0")]);
}

TEST(PipelineDpTraining, TrainingGraphsMatchTheOracle) {
  GraphBuilder b;
  const int n = 5;
  for (int i = 0; i < n; ++i) {
    OpSpec op;
    op.name = absl::StrCat("layer", i);
    op.op_type = "matmul";
    op.measured_seconds = {{"gpu", 1.0 + i}, {"cpu", 8.0 + 3 * i}};
    op.param_bytes = 10 * (i + 1);
    op.outputs.push_back(OutputTensor{200, -1});
    b.AddOp(std::move(op));
  }
  for (int i = 0; i + 1 < n; ++i) b.AddEdge(i, 0, i + 1);
  b.AddEdge(0, 0, 3);
  absl::StatusOr<Graph> forward = std::move(b).Build();
  ASSERT_TRUE(forward.ok()) << forward.status();
  absl::StatusOr<Graph> training = BuildTrainingGraph(*forward);
  ASSERT_TRUE(training.ok()) << training.status();
  std::vector<Device> devices;
  for (int i = 0; i < 3; ++i)
    devices.push_back(Device{absl::StrCat("gpu", i), "gpu", DeviceType::kAccelerator, 1, 1, 150});
  devices.push_back(Device{"cpu0", "cpu", DeviceType::kCpu, 1, 1, 0});
  absl::StatusOr<Topology> t = BuildSharedBus("bus", std::move(devices), 1000, 0.05);
  ASSERT_TRUE(t.ok()) << t.status();
  absl::StatusOr<CostModel> costs = CostModel::Create(*training, *t);
  ASSERT_TRUE(costs.ok()) << costs.status();
  absl::StatusOr<PipelineSolution> sol = SolveContiguousPipeline(*costs, Budget{});
  ASSERT_TRUE(sol.ok()) << sol.status();
  const testing_internal::OracleResult oracle = testing_internal::BruteForceContiguous(*costs);
  ASSERT_TRUE(oracle.feasible);
  EXPECT_NEAR(sol->max_load, oracle.value, 1e-9 * oracle.value);
  EXPECT_TRUE(sol->proven_optimal);
  EXPECT_TRUE(testing_internal::IsContiguous(*training, sol->placement));
}

}  // namespace
}  // namespace placement
