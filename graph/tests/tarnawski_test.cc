#include "graph/tarnawski.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "graph/placement_json.h"

namespace placement {
namespace {

using ::testing::HasSubstr;

constexpr char kSmall[] = R"({"maxSizePerFPGA": 100.0, "maxFPGAs": 2, "maxCPUs": 1,
  "nodes": [
    {"id": 1, "supportedOnFpga": 1, "cpuLatency": 10.0, "fpgaLatency": 1.0, "isBackwardNode": 0, "colorClass": 1, "size": 30.0},
    {"id": 2, "supportedOnFpga": 1, "cpuLatency": 20.0, "fpgaLatency": 2.0, "isBackwardNode": 0, "colorClass": 2, "size": 40.0},
    {"id": 3, "supportedOnFpga": 0, "cpuLatency": 5.0, "fpgaLatency": 0.0, "isBackwardNode": true, "colorClass": 2, "size": 0.0}],
  "edges": [
    {"sourceId": 1, "destId": 2, "cost": 0.5, "size": 64},
    {"sourceId": 1, "destId": 3, "cost": 0.5, "size": 64},
    {"sourceId": 2, "destId": 3, "cost": 0.25, "size": 32}]})";

TEST(Tarnawski, ImportsNodesEdgesAndDevices) {
  absl::StatusOr<Problem> p = ParseTarnawskiGraph(kSmall);
  ASSERT_TRUE(p.ok()) << p.status();
  const Graph& g = p->graph;
  ASSERT_TRUE(p->topology.has_value());
  const Topology& t = *p->topology;
  EXPECT_EQ(p->time_unit, "input");
  EXPECT_EQ(g.num_ops(), 3);
  EXPECT_EQ(g.num_edges(), 3);
  ASSERT_EQ(t.num_devices(), 3);
  EXPECT_EQ(t.device(0).name, "acc0");
  EXPECT_EQ(t.device(0).memory_bytes, 100);
  EXPECT_EQ(t.device(2).name, "cpu0");
  EXPECT_EQ(t.device(2).type, DeviceType::kCpu);
  EXPECT_EQ(t.device(2).memory_bytes, 0);
  const OpId n1 = g.FindOp("1"), n3 = g.FindOp("3");
  EXPECT_EQ(g.param_bytes(n1), 30);
  EXPECT_EQ(g.tensor(g.first_output(n1)).transfer_seconds, 0.5);
  EXPECT_EQ(g.tensor(g.first_output(n1)).bytes, 64);
  EXPECT_TRUE(g.is_backward(n3));
  EXPECT_EQ(g.measured(n3).size(), 1u);  // not supported on the accelerator: CPU only
  EXPECT_EQ(g.colocation_group(n3), g.colocation_group(g.FindOp("2")));
}

TEST(Tarnawski, ErrorsNameTheBadField) {
  EXPECT_THAT(ParseTarnawskiGraph("not json").status().message(), HasSubstr("not valid JSON"));
  EXPECT_THAT(ParseTarnawskiGraph(R"({"maxFPGAs": 2, "maxCPUs": 0, "nodes": [], "edges": []})").status().message(),
              HasSubstr("missing field 'maxSizePerFPGA'"));
  EXPECT_THAT(ParseTarnawskiGraph(R"({"maxSizePerFPGA": 1, "maxFPGAs": 0, "maxCPUs": 0, "nodes": [], "edges": []})")
                  .status()
                  .message(),
              HasSubstr("maxFPGAs must be at least 1"));
  EXPECT_THAT(ParseTarnawskiGraph(R"({"maxSizePerFPGA": 1, "maxFPGAs": 1, "maxCPUs": 0, "nodes": [], "edges": []})")
                  .status()
                  .message(),
              HasSubstr("no operators"));
  EXPECT_THAT(ParseTarnawskiGraph(R"({"maxSizePerFPGA": 1, "maxFPGAs": 1, "maxCPUs": 0, "nodes": [
      {"id": 1, "supportedOnFpga": 1, "cpuLatency": -1, "fpgaLatency": 1, "size": 0}], "edges": []})")
                  .status()
                  .message(),
              HasSubstr("nodes[0] (id 1): field 'cpuLatency' must be a finite non-negative number"));
  EXPECT_THAT(ParseTarnawskiGraph(R"({"maxSizePerFPGA": 1, "maxFPGAs": 1, "maxCPUs": 0, "nodes": [
      {"id": 1, "supportedOnFpga": 1, "cpuLatency": 1, "fpgaLatency": 1, "size": 0}],
      "edges": [{"sourceId": 1, "destId": 9, "cost": 1}]})")
                  .status()
                  .message(),
              HasSubstr("unknown operator '9'"));
  EXPECT_THAT(ParseTarnawskiGraph(R"({"maxSizePerFPGA": 1, "maxFPGAs": 1, "maxCPUs": 0, "nodes": [
      {"id": 1, "supportedOnFpga": 1, "cpuLatency": 1, "fpgaLatency": 1, "size": 0},
      {"id": 1, "supportedOnFpga": 1, "cpuLatency": 1, "fpgaLatency": 1, "size": 0}], "edges": []})")
                  .status()
                  .message(),
              HasSubstr("duplicate operator name '1'"));
  EXPECT_THAT(ParseTarnawskiGraph(R"({"maxSizePerFPGA": 1, "maxFPGAs": 1, "maxCPUs": 0, "nodes": [
      {"id": 1, "supportedOnFpga": 1, "cpuLatency": 1, "fpgaLatency": 1, "size": 0},
      {"id": 2, "supportedOnFpga": 1, "cpuLatency": 1, "fpgaLatency": 1, "size": 0},
      {"id": 3, "supportedOnFpga": 1, "cpuLatency": 1, "fpgaLatency": 1, "size": 0}],
      "edges": [{"sourceId": 1, "destId": 2, "cost": 1}, {"sourceId": 1, "destId": 3, "cost": 2}]})")
                  .status()
                  .message(),
              HasSubstr("node 1 has out-edges with different costs"));
  EXPECT_THAT(ParseTarnawskiGraph(R"({"maxSizePerFPGA": 1, "maxFPGAs": 1, "maxCPUs": 0, "nodes": [
      {"id": 1, "supportedOnFpga": 1, "cpuLatency": 1, "fpgaLatency": 1, "size": 0},
      {"id": 2, "supportedOnFpga": 1, "cpuLatency": 1, "fpgaLatency": 1, "size": 0}],
      "edges": [{"sourceId": 1, "destId": 2, "cost": 1}, {"sourceId": 2, "destId": 1, "cost": 1}]})")
                  .status()
                  .message(),
              HasSubstr("cycle"));
  // Found by fuzzing: byte counts past int64 overflowed their conversion.
  EXPECT_THAT(ParseTarnawskiGraph(R"({"maxSizePerFPGA": 1, "maxFPGAs": 1, "maxCPUs": 0, "nodes": [
      {"id": 1, "supportedOnFpga": 1, "cpuLatency": 1, "fpgaLatency": 1, "size": 0},
      {"id": 2, "supportedOnFpga": 1, "cpuLatency": 1, "fpgaLatency": 1, "size": 0}],
      "edges": [{"sourceId": 1, "destId": 2, "cost": 1, "size": 1e79}]})")
                  .status()
                  .message(),
              HasSubstr("edges[0]: field 'size' is too large for a byte count"));
  EXPECT_THAT(ParseTarnawskiGraph(R"({"maxSizePerFPGA": 1, "maxFPGAs": 1, "maxCPUs": 0, "nodes": [
      {"id": 1, "supportedOnFpga": 1, "cpuLatency": 1, "fpgaLatency": 1, "size": 1e300}], "edges": []})")
                  .status()
                  .message(),
              HasSubstr("nodes[0] (id 1): field 'size' is too large for a byte count"));
}

TEST(Tarnawski, SplitPlacesUnlistedNodesWithTheirColourClass) {
  absl::StatusOr<Problem> p = ParseTarnawskiGraph(kSmall);
  ASSERT_TRUE(p.ok());
  absl::StatusOr<Placement> split = ParseTarnawskiSplit(
      R"({"fpgas": [{"nodes": [1]}, {"nodes": [2]}], "cpus": [{"nodes": []}]})", p->graph, *p->topology);
  ASSERT_TRUE(split.ok()) << split.status();
  EXPECT_EQ(split->device[p->graph.FindOp("1")], 0);
  EXPECT_EQ(split->device[p->graph.FindOp("2")], 1);
  EXPECT_EQ(split->device[p->graph.FindOp("3")], 1);  // colour class 2 follows node 2
}

TEST(Tarnawski, SplitErrors) {
  absl::StatusOr<Problem> p = ParseTarnawskiGraph(kSmall);
  ASSERT_TRUE(p.ok());
  EXPECT_THAT(ParseTarnawskiSplit(R"({"fpgas": [{"nodes": [1]}]})", p->graph, *p->topology).status().message(),
              HasSubstr("does not place node 2"));
  EXPECT_THAT(ParseTarnawskiSplit(R"({"fpgas": [{"nodes": [1, 2, 42]}]})", p->graph, *p->topology).status().message(),
              HasSubstr("node 42 is not in the graph"));
  EXPECT_THAT(
      ParseTarnawskiSplit(R"({"fpgas": [{"nodes": []}, {"nodes": []}, {"nodes": [1, 2]}]})", p->graph, *p->topology)
          .status()
          .message(),
      HasSubstr("needs device 'acc2'"));
  EXPECT_THAT(ParseTarnawskiSplit(R"({"fpgas": [{"nodes": [1, 2]}, {"nodes": [1]}]})", p->graph, *p->topology)
                  .status()
                  .message(),
              HasSubstr("node 1 is listed on two devices"));
}

TEST(PlacementJson, ReadsOurAssignmentAsObjectOrList) {
  absl::StatusOr<Problem> p = ParseTarnawskiGraph(kSmall);
  ASSERT_TRUE(p.ok());
  absl::StatusOr<Placement> a =
      ParsePlacementJson(R"({"assignment": {"1": "acc0", "2": "acc1", "3": "cpu0"}})", p->graph, *p->topology);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->device[p->graph.FindOp("3")], 2);
  absl::StatusOr<Placement> b = ParsePlacementJson(
      R"({"assignment": [{"op": "1", "device": "acc1"}, {"op": "2", "device": "acc1"}, {"op": "3", "device": "cpu0"}]})",
      p->graph, *p->topology);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->device[p->graph.FindOp("1")], 1);
  EXPECT_THAT(ParsePlacementJson(R"({"assignment": {"1": "acc0"}})", p->graph, *p->topology).status().message(),
              HasSubstr("does not assign operator '2'"));
  EXPECT_THAT(ParsePlacementJson(R"({"assignment": {"1": "gpu9", "2": "acc0", "3": "acc0"}})", p->graph, *p->topology)
                  .status()
                  .message(),
              HasSubstr("device 'gpu9' is not in the topology"));
  EXPECT_THAT(ParsePlacementJson(R"([1, 2])", p->graph, *p->topology).status().message(), HasSubstr("'assignment'"));
}

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(Tarnawski, EverySharedInputAndExpertSplitImports) {
  const std::filesystem::path root = std::filesystem::path(PLACEMENT_SHARED_DIR) / "bench" / "tarnawski";
  if (!std::filesystem::exists(root)) GTEST_SKIP() << "shared benchmark inputs not found at " << root << "; skipping";
  int graphs = 0;
  for (const char* dir : {"throughput-inputs/LayerGraphs", "throughput-inputs/OperatorGraphs"}) {
    for (const auto& entry : std::filesystem::directory_iterator(root / dir)) {
      absl::StatusOr<Problem> p = ParseTarnawskiGraph(ReadFile(entry.path()));
      ASSERT_TRUE(p.ok()) << entry.path() << ": " << p.status();
      EXPECT_GT(p->graph.num_ops(), 10);
      ++graphs;
    }
  }
  EXPECT_EQ(graphs, 9);
  for (const auto& entry : std::filesystem::directory_iterator(root / "human-experts")) {
    std::string model = entry.path().filename().string();
    model = model.substr(0, model.find("_expert.json"));
    absl::StatusOr<Problem> p =
        ParseTarnawskiGraph(ReadFile(root / "throughput-inputs/LayerGraphs" / (model + ".json")));
    ASSERT_TRUE(p.ok()) << model;
    absl::StatusOr<Placement> split = ParseTarnawskiSplit(ReadFile(entry.path()), p->graph, *p->topology);
    EXPECT_TRUE(split.ok()) << entry.path() << ": " << split.status();
  }
}

}  // namespace
}  // namespace placement
