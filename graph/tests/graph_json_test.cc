#include "graph/graph_json.h"

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "graph/canonical.h"
#include "graph/tarnawski.h"
#include "graph/topology_json.h"
#include "graph/training.h"

namespace placement {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Every field the Graph holds, with values that differ from the defaults.
Graph EveryField() {
  GraphBuilder b;
  OpSpec a;
  a.name = "a";
  a.op_type = "Embedding";
  a.measured_seconds = {{"V100", 1.25e-3}, {"A100", 0.1 + 0.2}};  // not in name order; an inexact double
  a.flops = 3.5e9;
  a.bytes_accessed = 1e6 / 3;
  a.param_bytes = (int64_t{1} << 40) + 7;  // more than a double's 53 bits would keep exactly with a fraction
  a.temp_bytes = 4096;
  a.data_bytes = 602112;
  a.shared_weights = true;
  a.window = 25;
  a.channels_last = true;
  a.extra_kernels = {3, 1536};
  a.extra_kernels_back = {2, 1024};
  a.outputs = {OutputTensor{100, -1}, OutputTensor{200, 2.5e-6}};
  a.colocation_group = "embedding";
  a.pinned_device = "gpu1";
  b.AddOp(a);
  OpSpec c;
  c.name = "c \"quoted\" / ünïcode";
  c.outputs = {OutputTensor{0, -1}};
  c.is_backward = true;
  c.colocation_group = "embedding";
  b.AddOp(c);
  OpSpec z;
  z.name = "z";  // nothing but a name
  b.AddOp(z);
  b.AddEdge("a", 1, "c \"quoted\" / ünïcode");
  b.AddEdge("a", 0, "c \"quoted\" / ünïcode", 77);  // smaller than its output
  b.AddEdge("c \"quoted\" / ünïcode", 0, "z");
  absl::StatusOr<Graph> g = std::move(b).Build();
  EXPECT_TRUE(g.ok()) << g.status();
  return *std::move(g);
}

void ExpectSameGraph(const Graph& a, const Graph& b) {
  EXPECT_EQ(CanonicalSerialization(a), CanonicalSerialization(b));
  EXPECT_EQ(GraphHash(a), GraphHash(b));
  ASSERT_EQ(a.num_ops(), b.num_ops());
  for (OpId u = 0; u < a.num_ops(); ++u) {
    EXPECT_EQ(a.name(u), b.name(u));
    ASSERT_EQ(a.measured(u).size(), b.measured(u).size());
    for (size_t i = 0; i < a.measured(u).size(); ++i) {  // the same kinds in the same order
      EXPECT_EQ(a.device_kinds()[a.measured(u)[i].kind], b.device_kinds()[b.measured(u)[i].kind]);
      EXPECT_EQ(a.measured(u)[i].seconds, b.measured(u)[i].seconds);
    }
  }
  ASSERT_EQ(a.num_edges(), b.num_edges());
  for (EdgeId e = 0; e < a.num_edges(); ++e) {
    EXPECT_EQ(a.edge(e).src, b.edge(e).src);
    EXPECT_EQ(a.edge(e).src_output, b.edge(e).src_output);
    EXPECT_EQ(a.edge(e).dst, b.edge(e).dst);
    EXPECT_EQ(a.edge(e).bytes, b.edge(e).bytes);
  }
}

absl::Status ParseError(absl::string_view text) {
  absl::StatusOr<Problem> p = ParseGraphJson(text);
  EXPECT_FALSE(p.ok()) << text;
  return p.status();
}

TEST(GraphJson, RoundTripKeepsEveryFieldAndTheHash) {
  const Graph g = EveryField();
  for (bool pretty : {false, true}) {
    GraphJsonOptions options;
    options.pretty = pretty;
    const std::string text = GraphToJson(g, options);
    absl::StatusOr<Problem> back = ParseGraphJson(text);
    ASSERT_TRUE(back.ok()) << back.status() << "\n" << text;
    ExpectSameGraph(g, back->graph);
    EXPECT_FALSE(back->topology.has_value());
    EXPECT_EQ(back->time_unit, "s");
    EXPECT_EQ(GraphToJson(back->graph, options), text);  // writing is deterministic
  }
}

// The window changes what the cost model predicts, so it is part of the hash that keys cached answers; a graph
// without windows keeps the hash it had before operators carried them.
TEST(GraphJson, TheKernelWindowIsPartOfTheHash) {
  const Graph g = EveryField();
  absl::StatusOr<Graph> narrow = RebuildGraph(g, [](OpId, OpSpec& op) { op.window = op.window > 0 ? 9 : 0; });
  absl::StatusOr<Graph> none = RebuildGraph(g, [](OpId, OpSpec& op) { op.window = 0; });
  ASSERT_TRUE(narrow.ok() && none.ok());
  EXPECT_NE(GraphHash(g), GraphHash(*narrow));
  EXPECT_NE(GraphHash(*narrow), GraphHash(*none));
  EXPECT_THAT(GraphToJson(g), HasSubstr(R"("window":25)"));
  EXPECT_THAT(GraphToJson(*none), Not(HasSubstr("window")));
}

// Likewise the layout: a depthwise convolution on channels-last data is costed as another class.
TEST(GraphJson, TheLayoutIsPartOfTheHash) {
  const Graph g = EveryField();
  absl::StatusOr<Graph> contiguous = RebuildGraph(g, [](OpId, OpSpec& op) { op.channels_last = false; });
  ASSERT_TRUE(contiguous.ok());
  EXPECT_NE(GraphHash(g), GraphHash(*contiguous));
  EXPECT_THAT(GraphToJson(g), HasSubstr(R"("channels_last":true)"));
  EXPECT_THAT(GraphToJson(*contiguous), Not(HasSubstr("channels_last")));
}

// And the data an operator reads: under autocast it is cast to 16 bits and the cast is kept for the backward.
TEST(GraphJson, TheDataAnOperatorReadsIsPartOfTheHash) {
  const Graph g = EveryField();
  absl::StatusOr<Graph> none = RebuildGraph(g, [](OpId, OpSpec& op) { op.data_bytes = 0; });
  ASSERT_TRUE(none.ok());
  EXPECT_NE(GraphHash(g), GraphHash(*none));
  EXPECT_THAT(GraphToJson(g), HasSubstr(R"("data_bytes":602112)"));
  EXPECT_THAT(GraphToJson(*none), Not(HasSubstr("data_bytes")));
  EXPECT_THAT(ParseError(R"({"format": "placement.graph/v1", "operators": [{"name": "a", "data_bytes": -1}]})")
                  .message(),
              HasSubstr("data_bytes"));
}

TEST(GraphJson, WritesOnlyWhatDiffersFromTheDefaults) {
  const std::string text = GraphToJson(EveryField());
  EXPECT_THAT(text, HasSubstr(R"({"name":"z"})"));
  EXPECT_THAT(text, HasSubstr(R"("format":"placement.graph/v1")"));
  EXPECT_THAT(text, HasSubstr(R"({"src":"a","dst":"c \"quoted\" / ünïcode","bytes":77})"));
  EXPECT_THAT(text, HasSubstr(R"({"src":"a","src_output":1,"dst":"c \"quoted\" / ünïcode"})"));
}

TEST(GraphJson, ReadsUnitsAndShortForms) {
  absl::StatusOr<Problem> p = ParseGraphJson(R"({"format": "placement.graph/v1", "operators": [
      {"name": "a", "flops": "2.5 GFLOP", "bytes_accessed": "1 MiB", "param_bytes": "1.5 KiB", "temp_bytes": "1kB",
       "measured": {"H100": "12us", "V100": "2.5ms"}, "outputs": ["4 MiB", {"bytes": 8, "transfer_seconds": "3us"}]},
      {"name": "b", "flops": "1 TFLOPS", "outputs": [1e3]}],
    "edges": [{"src": "a", "src_output": 1, "dst": "b"}]})");
  ASSERT_TRUE(p.ok()) << p.status();
  const Graph& g = p->graph;
  const OpId a = g.FindOp("a");
  EXPECT_DOUBLE_EQ(g.flops(a), 2.5e9);
  EXPECT_DOUBLE_EQ(g.bytes_accessed(a), 1 << 20);
  EXPECT_EQ(g.param_bytes(a), 1536);
  EXPECT_EQ(g.temp_bytes(a), 1000);
  ASSERT_EQ(g.measured(a).size(), 2u);
  EXPECT_EQ(g.device_kinds()[g.measured(a)[0].kind], "H100");  // file order, not name order
  EXPECT_DOUBLE_EQ(g.measured(a)[0].seconds, 12e-6);
  EXPECT_DOUBLE_EQ(g.measured(a)[1].seconds, 2.5e-3);
  EXPECT_EQ(g.tensor(g.first_output(a)).bytes, 4 << 20);
  EXPECT_LT(g.tensor(g.first_output(a)).transfer_seconds, 0);
  EXPECT_DOUBLE_EQ(g.tensor(g.first_output(a) + 1).transfer_seconds, 3e-6);
  EXPECT_EQ(g.edge(0).bytes, 8);  // an edge without bytes takes its output's
  EXPECT_DOUBLE_EQ(g.flops(g.FindOp("b")), 1e12);
  EXPECT_EQ(g.tensor(g.first_output(g.FindOp("b"))).bytes, 1000);
}

TEST(GraphJson, TimesWithUnitsAreConvertedToTheFilesUnit) {
  absl::StatusOr<Problem> p = ParseGraphJson(R"({"format": "placement.graph/v1", "time_unit": "ms",
      "operators": [{"name": "a", "measured": {"cpu": "250us", "gpu": 0.5}}]})");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->time_unit, "ms");
  EXPECT_DOUBLE_EQ(p->graph.measured(0)[0].seconds, 0.25);
  EXPECT_DOUBLE_EQ(p->graph.measured(0)[1].seconds, 0.5);
  EXPECT_THAT(ParseError(R"({"format": "placement.graph/v1", "time_unit": "input",
      "operators": [{"name": "a", "measured": {"cpu": "250us"}}]})")
                  .message(),
              HasSubstr("operators[0] ('a').measured.cpu: a time with units needs time_unit s, ms, us or ns"));
}

TEST(GraphJson, CarriesItsTopology) {
  absl::StatusOr<Topology> topology = ParseTopologyShorthand("2x2xA100");
  ASSERT_TRUE(topology.ok()) << topology.status();
  GraphJsonOptions options;
  options.topology = &*topology;
  options.name = "with-cluster";
  options.time_unit = "us";
  const Graph g = EveryField();
  absl::StatusOr<Problem> back = ParseGraphJson(GraphToJson(g, options));
  ASSERT_TRUE(back.ok()) << back.status();
  ExpectSameGraph(g, back->graph);
  EXPECT_EQ(back->time_unit, "us");
  ASSERT_TRUE(back->topology.has_value());
  EXPECT_EQ(TopologyToJson(*back->topology), TopologyToJson(*topology));
  // ProblemToJson writes the same document (less the name).
  absl::StatusOr<Problem> again = ParseGraphJson(ProblemToJson(*back, /*pretty=*/true));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(TopologyToJson(*again->topology), TopologyToJson(*topology));

  absl::StatusOr<Problem> shorthand =
      ParseGraphJson(R"({"format": "placement.graph/v1", "topology": "4xV100", "operators": [{"name": "a"}]})");
  ASSERT_TRUE(shorthand.ok()) << shorthand.status();
  EXPECT_EQ(shorthand->topology->num_devices(), 4);
  EXPECT_THAT(ParseError(R"({"format": "placement.graph/v1", "topology": {"hosts": [{"devices": [{"preset": "V100",
      "bandwith": 1}]}]}, "operators": [{"name": "a"}]})")
                  .message(),
              HasSubstr("topology: unknown key 'bandwith'"));
  EXPECT_THAT(ParseError(R"({"format": "placement.graph/v1", "topology": 3, "operators": [{"name": "a"}]})").message(),
              HasSubstr("topology: expected an object or a shorthand string"));
}

TEST(GraphJson, ErrorsNameTheJsonPath) {
  const auto doc = [](absl::string_view ops, absl::string_view edges = "[]") {
    return absl::StrCat(R"({"format": "placement.graph/v1", "operators": )", ops, R"(, "edges": )", edges, "}");
  };
  EXPECT_THAT(ParseError("{not json").message(), HasSubstr("not valid JSON"));
  EXPECT_THAT(ParseError("[]").message(), HasSubstr("expected an object"));
  EXPECT_THAT(ParseError(R"({"operators": []})").message(),
              HasSubstr("format: expected \"placement.graph/v1\", got no 'format' key"));
  EXPECT_THAT(ParseError(R"({"format": "placement.graph/v2"})").message(), HasSubstr("got \"placement.graph/v2\""));
  EXPECT_THAT(ParseError(R"({"format": "placement.graph/v1", "nodes": []})").message(),
              HasSubstr("unknown key 'nodes' in the graph"));
  EXPECT_THAT(ParseError(doc("[]")).message(), HasSubstr("operators: expected a non-empty list"));
  EXPECT_THAT(ParseError(doc(R"([{"name": "a", "flop": 1}])")).message(),
              HasSubstr("unknown key 'flop' in operators[0] ('a')"));
  EXPECT_THAT(ParseError(doc(R"([{"op_type": "x"}])")).message(), HasSubstr("operators[0]: 'name' is required"));
  EXPECT_THAT(ParseError(doc(R"([{"name": ""}])")).message(), HasSubstr("operators[0].name: must not be empty"));
  EXPECT_THAT(ParseError(doc(R"([{"name": "a"}, {"name": "b", "param_bytes": -1}])")).message(),
              HasSubstr("operators[1] ('b').param_bytes: must not be negative"));
  EXPECT_THAT(ParseError(doc(R"([{"name": "a", "outputs": [{"bytes": "12 Gb"}]}])")).message(),
              HasSubstr("operators[0] ('a').outputs[0].bytes:"));
  EXPECT_THAT(ParseError(doc(R"([{"name": "a", "outputs": [{"bytes": 1, "size": 2}]}])")).message(),
              HasSubstr("unknown key 'size' in operators[0] ('a').outputs[0]"));
  EXPECT_THAT(ParseError(doc(R"([{"name": "a", "outputs": [{"transfer_seconds": 2}]}])")).message(),
              HasSubstr("operators[0] ('a').outputs[0]: 'bytes' is required"));
  EXPECT_THAT(ParseError(doc(R"([{"name": "a", "measured": {"V100": -1}}])")).message(),
              HasSubstr("operators[0] ('a').measured.V100: must not be negative"));
  EXPECT_THAT(ParseError(doc(R"([{"name": "a", "measured": [1]}])")).message(),
              HasSubstr("operators[0] ('a').measured: expected an object"));
  EXPECT_THAT(ParseError(doc(R"([{"name": "a", "is_backward": 1}])")).message(),
              HasSubstr("operators[0] ('a').is_backward: expected true or false"));
  EXPECT_THAT(ParseError(doc(R"([{"name": "a", "window": -9}])")).message(),
              HasSubstr("operators[0] ('a').window: expected a kernel window (9 for 3x3), got -9"));
  EXPECT_THAT(ParseError(doc(R"([{"name": "a", "window": "3x3"}])")).message(),
              HasSubstr("operators[0] ('a').window: expected a kernel window"));
  EXPECT_THAT(ParseError(doc(R"([{"name": "a", "channels_last": "yes"}])")).message(),
              HasSubstr("operators[0] ('a').channels_last: expected true or false, got \"yes\""));
  EXPECT_THAT(ParseError(doc(R"([{"name": "a", "extra_kernels": {"kernels": -1}}])")).message(),
              HasSubstr("operators[0] ('a').extra_kernels.kernels: expected a non-negative count of kernels"));
  EXPECT_THAT(ParseError(doc(R"([{"name": "a", "extra_kernels": {"kernels": 1, "launches": 2}}])")).message(),
              HasSubstr("launches"));
  EXPECT_THAT(ParseError(doc(R"([{"name": "a", "flops": "3 parsecs"}])")).message(),
              HasSubstr("operators[0] ('a').flops:"));
  EXPECT_THAT(ParseError(doc(R"([{"name": "a", "op_type": 3}])")).message(),
              HasSubstr("operators[0] ('a').op_type: expected a string"));
  EXPECT_THAT(ParseError(doc(R"([{"name": "a", "measured": {"V100": 1, "V100": 2}}])")).message(),
              HasSubstr("the key 'V100' appears twice"));
  const std::string two = R"([{"name": "a", "outputs": [1]}, {"name": "b"}])";
  EXPECT_THAT(ParseError(doc(two, R"([{"src": "a", "dst": "b", "weight": 1}])")).message(),
              HasSubstr("unknown key 'weight' in edges[0]"));
  EXPECT_THAT(ParseError(doc(two, R"([{"src": "a"}])")).message(), HasSubstr("edges[0]: 'dst' is required"));
  EXPECT_THAT(ParseError(doc(two, R"([{"src": "a", "dst": "b", "src_output": -1}])")).message(),
              HasSubstr("edges[0].src_output: expected an output index"));
  EXPECT_THAT(ParseError(doc(two, R"([{"src": "a", "dst": "b", "bytes": -5}])")).message(),
              HasSubstr("edges[0].bytes: must not be negative"));
  // What GraphBuilder finds comes through as it says it.
  EXPECT_THAT(ParseError(doc(two, R"([{"src": "a", "dst": "nope"}])")).message(),
              HasSubstr("edge 0 goes to unknown operator 'nope'"));
  EXPECT_THAT(ParseError(doc(two, R"([{"src": "a", "src_output": 1, "dst": "b"}])")).message(),
              HasSubstr("uses output 1 but 'a' has 1 output(s)"));
  EXPECT_THAT(ParseError(doc(R"([{"name": "a"}, {"name": "a"}])")).message(), HasSubstr("duplicate operator name 'a'"));
  EXPECT_THAT(ParseError(doc(R"([{"name": "a", "outputs": [1]}, {"name": "b", "outputs": [1]}])",
                             R"([{"src": "a", "dst": "b"}, {"src": "b", "dst": "a"}])"))
                  .message(),
              HasSubstr("cycle"));
}

TEST(GraphJson, RecognizesItsOwnFormatOnly) {
  EXPECT_TRUE(LooksLikeGraphJson(GraphToJson(EveryField())));
  EXPECT_TRUE(LooksLikeGraphJson(R"({"operators": [{"name": "a", "format": "x"}], "format": "placement.graph/v1"})"));
  EXPECT_FALSE(LooksLikeGraphJson(R"({"operators": [{"format": "placement.graph/v1"}]})"));
  EXPECT_FALSE(LooksLikeGraphJson(R"({"format": "placement.graph/v2"})"));
  EXPECT_FALSE(LooksLikeGraphJson(R"(["placement.graph/v1"])"));
  EXPECT_FALSE(LooksLikeGraphJson("{not json"));
  const std::string tarnawski = ReadFile(std::string(PLACEMENT_SOURCE_DIR) + "/examples/graphs/tiny_pipeline.json");
  ASSERT_FALSE(tarnawski.empty());
  EXPECT_TRUE(LooksLikeTarnawskiGraph(tarnawski));
  EXPECT_FALSE(LooksLikeGraphJson(tarnawski));
}

TEST(GraphJson, ExampleFileLoads) {
  const std::string text = ReadFile(std::string(PLACEMENT_SOURCE_DIR) + "/examples/graphs/mlp_training.json");
  ASSERT_FALSE(text.empty());
  EXPECT_TRUE(LooksLikeGraphJson(text));
  absl::StatusOr<Problem> p = ParseGraphJson(text);
  ASSERT_TRUE(p.ok()) << p.status();
  const Graph& g = p->graph;
  EXPECT_EQ(g.num_ops(), 11);
  EXPECT_EQ(g.num_edges(), 16);
  ASSERT_TRUE(p->topology.has_value());
  EXPECT_EQ(p->topology->num_devices(), 3);
  EXPECT_TRUE(g.is_backward(g.FindOp("fc1/update")));
  EXPECT_EQ(g.measured(g.FindOp("fc1")).size(), 1u);
  EXPECT_EQ(g.tensor(g.first_output(g.FindOp("data"))).bytes, 98 * 1024);
  EXPECT_DOUBLE_EQ(g.tensor(g.first_output(g.FindOp("data"))).transfer_seconds, 12e-6);
  absl::StatusOr<Problem> back = ParseGraphJson(ProblemToJson(*p));
  ASSERT_TRUE(back.ok()) << back.status();
  ExpectSameGraph(g, back->graph);
}

// Every ```json block of the format's documentation is a complete graph file that parses, one of them is the
// example file, and the documented training step is what BuildTrainingGraph makes of the documented forward graph.
TEST(GraphJson, DocumentationExamplesParse) {
  const std::string doc = ReadFile(std::string(PLACEMENT_SOURCE_DIR) + "/docs/graph-format.md");
  ASSERT_FALSE(doc.empty());
  absl::StatusOr<Problem> example =
      ParseGraphJson(ReadFile(std::string(PLACEMENT_SOURCE_DIR) + "/examples/graphs/mlp_training.json"));
  ASSERT_TRUE(example.ok()) << example.status();
  int blocks = 0;
  bool has_example = false;
  std::string linear_forward, linear_training;  // the documented training expansion
  for (size_t at = doc.find("```json\n"); at != std::string::npos; at = doc.find("```json\n", at)) {
    at += 8;
    const size_t end = doc.find("```", at);
    ASSERT_NE(end, std::string::npos);
    const std::string block = doc.substr(at, end - at);
    absl::StatusOr<Problem> p = ParseGraphJson(block);
    EXPECT_TRUE(p.ok()) << p.status() << "\n" << block;
    if (p.ok() && GraphHash(p->graph) == GraphHash(example->graph)) has_example = true;
    if (p.ok() && absl::StrContains(block, R"("name": "linear-forward")")) {
      absl::StatusOr<Graph> step = BuildTrainingGraph(p->graph);
      ASSERT_TRUE(step.ok()) << step.status();
      linear_forward = GraphHash(*step);
    }
    if (p.ok() && absl::StrContains(block, R"("name": "linear-training")")) linear_training = GraphHash(p->graph);
    ++blocks;
    at = end + 3;
  }
  EXPECT_GE(blocks, 2);
  EXPECT_TRUE(has_example) << "docs/graph-format.md should show examples/graphs/mlp_training.json";
  EXPECT_FALSE(linear_forward.empty());
  EXPECT_EQ(linear_forward, linear_training) << "the documented training step is not what BuildTrainingGraph makes";
}

}  // namespace
}  // namespace placement
