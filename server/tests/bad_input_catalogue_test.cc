// The bad-input catalogue: malformed requests and files a scheduler may pass on from its users (it grew out of
// the first handful of error tests, which it contains). Each is
// answered with the right gRPC status and a message naming the problem, and the server places a good request
// right after it (it neither crashed nor hung). One parameterized test per case, so a failure names the case.
#include <chrono>
#include <cmath>
#include <fstream>
#include <functional>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "graph/onnx/tests/test_models.h"
#include "server/tests/test_util.h"

namespace placement::server {
namespace {

namespace pb = ::placement::v1;
using ::testing::AllOf;
using testing::ChainGraph;
using testing::ContextWithin;
using ::testing::HasSubstr;
using testing::PlaceRequestFor;
using testing::StartReadyServer;
using testing::StubFor;
using testing::TempDir;
using testing::TestOptions;
using Code = grpc::StatusCode;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr int64_t kMaxMessageBytes = 4 << 20;

std::string Corpus(const std::string& name) {
  std::ifstream in(std::string(PLACEMENT_SOURCE_DIR) + "/tests/data/corpus/" + name, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// A request, sent as Place or (when `simulate` is set) as Simulate.
struct Call {
  pb::PlaceRequest place;
  bool simulate = false;
  pb::SimulateRequest simulate_request;
  std::chrono::milliseconds deadline{30'000};
};

struct Case {
  std::string name;
  std::function<Call()> make;
  Code code;
  std::vector<std::string> message;  // each must appear in the status message
};

Call Place(pb::PlaceRequest r) {
  Call c;
  c.place = std::move(r);
  return c;
}

// A three-operator chain on 2xA100, changed by `edit`.
Call Graph3(const std::function<void(pb::Graph&)>& edit) {
  pb::Graph g = ChainGraph(3);
  edit(g);
  return Place(PlaceRequestFor(g, "2xA100", "heft"));
}

Call OnTopology(const std::string& json) {
  pb::PlaceRequest r = PlaceRequestFor(ChainGraph(3), "", "heft");
  r.mutable_topology()->set_json(json);
  return Place(r);
}

Call Onnx(const std::string& bytes) {
  pb::PlaceRequest r;
  r.set_onnx(bytes);
  r.mutable_topology()->set_shorthand("2xA100");
  r.set_algorithm("heft");
  return Place(r);
}

Call GraphJson(const std::string& text) {
  pb::PlaceRequest r;
  r.set_graph_json(text);
  r.mutable_topology()->set_shorthand("2xA100");
  r.set_algorithm("heft");
  return Place(r);
}

Call Simulate(const std::vector<std::pair<std::string, std::string>>& assignment,
              const std::string& placement_json = "") {
  Call c;
  c.simulate = true;
  *c.simulate_request.mutable_graph() = ChainGraph(3);
  c.simulate_request.mutable_topology()->set_shorthand("2xA100");
  for (const auto& [op, device] : assignment) {
    pb::Assignment* a = c.simulate_request.add_assignment();
    a->set_op(op);
    a->set_device(device);
  }
  c.simulate_request.set_placement_json(placement_json);
  return c;
}

pb::Edge* AddEdge(pb::Graph& g, const std::string& src, const std::string& dst) {
  pb::Edge* e = g.add_edges();
  e->set_src(src);
  e->set_dst(dst);
  return e;
}

// An ONNX model: x -> Relu -> y, with `edit` applied.
std::string OnnxModel(const std::function<void(onnx::ModelProto&)>& edit) {
  onnx::ModelProto m = onnx_testing::NewModel();
  onnx_testing::AddInput(m, "x", {1, 16});
  onnx_testing::AddNode(m, "Relu", {"x"}, {"y"}, "relu");
  onnx_testing::AddOutput(m, "y");
  edit(m);
  return onnx_testing::Serialize(m);
}

// The graph message.
std::vector<Case> GraphMessageCases() {
  return {
      {"Cycle",
       [] { return Graph3([](pb::Graph& g) { AddEdge(g, "op2", "op0"); }); },
       Code::INVALID_ARGUMENT,
       {"graph: ", "cycle", "op0", "op2"}},
      {"DanglingEdgeTarget",
       [] { return Graph3([](pb::Graph& g) { AddEdge(g, "op1", "ghost"); }); },
       Code::INVALID_ARGUMENT,
       {"unknown operator 'ghost'"}},
      {"DanglingEdgeSource",
       [] { return Graph3([](pb::Graph& g) { AddEdge(g, "nowhere", "op2"); }); },
       Code::INVALID_ARGUMENT,
       {"unknown operator 'nowhere'"}},
      {"DuplicateEdge",
       [] { return Graph3([](pb::Graph& g) { AddEdge(g, "op0", "op1"); }); },
       Code::INVALID_ARGUMENT,
       {"duplicate edge", "op0", "op1"}},
      {"SelfEdge",
       [] { return Graph3([](pb::Graph& g) { AddEdge(g, "op1", "op1"); }); },
       Code::INVALID_ARGUMENT,
       {"'op1' has an edge to itself"}},
      {"EdgeWithEmptySource",
       [] { return Graph3([](pb::Graph& g) { AddEdge(g, "", "op1"); }); },
       Code::INVALID_ARGUMENT,
       {"empty src"}},
      {"EdgeFromMissingOutput",
       [] { return Graph3([](pb::Graph& g) { g.mutable_edges(0)->set_src_output(7); }); },
       Code::INVALID_ARGUMENT,
       {"op0", "output 7"}},
      {"DuplicateOperatorName",
       [] { return Graph3([](pb::Graph& g) { g.mutable_operators(2)->set_name("op1"); }); },
       Code::INVALID_ARGUMENT,
       {"duplicate operator name 'op1'"}},
      {"EmptyOperatorName",
       [] { return Graph3([](pb::Graph& g) { g.mutable_operators(2)->clear_name(); }); },
       Code::INVALID_ARGUMENT,
       {"empty name"}},
      {"NoOperators", [] { return Graph3([](pb::Graph& g) { g.Clear(); }); }, Code::INVALID_ARGUMENT, {"no operators"}},
  };
}

// The graph message: operators' figures that cannot be right.
std::vector<Case> OperatorFigureCases() {
  return {
      {"NegativeFlops",
       [] { return Graph3([](pb::Graph& g) { g.mutable_operators(1)->set_flops(-5); }); },
       Code::INVALID_ARGUMENT,
       {"operator 'op1'", "flops", "negative"}},
      {"NaNFlops",
       [] { return Graph3([](pb::Graph& g) { g.mutable_operators(1)->set_flops(kNaN); }); },
       Code::INVALID_ARGUMENT,
       {"operator 'op1'", "flops", "NaN"}},
      {"InfiniteBytesAccessed",
       [] { return Graph3([](pb::Graph& g) { g.mutable_operators(0)->set_bytes_accessed(kInf); }); },
       Code::INVALID_ARGUMENT,
       {"operator 'op0'", "infinite"}},
      {"NegativeParamBytes",
       [] { return Graph3([](pb::Graph& g) { g.mutable_operators(2)->set_param_bytes(-1); }); },
       Code::INVALID_ARGUMENT,
       {"operator 'op2'", "negative"}},
      {"NegativeOutputBytes",
       [] { return Graph3([](pb::Graph& g) { g.mutable_operators(0)->mutable_outputs(0)->set_bytes(-8); }); },
       Code::INVALID_ARGUMENT,
       {"operator 'op0'", "output 0 bytes is negative"}},
      {"InfiniteTransferTime",
       [] {
         return Graph3([](pb::Graph& g) { g.mutable_operators(0)->mutable_outputs(0)->set_transfer_seconds(kInf); });
       },
       Code::INVALID_ARGUMENT,
       {"operator 'op0'", "not finite"}},
      {"NaNMeasuredTime",
       [] {
         return Graph3([](pb::Graph& g) {
           pb::MeasuredTime* t = g.mutable_operators(1)->add_measured();
           t->set_device_kind("A100");
           t->set_seconds(kNaN);
         });
       },
       Code::INVALID_ARGUMENT,
       {"operator 'op1'", "NaN"}},
      {"MeasuredTimeWithoutDeviceKind",
       [] { return Graph3([](pb::Graph& g) { g.mutable_operators(1)->add_measured()->set_seconds(1); }); },
       Code::INVALID_ARGUMENT,
       {"operator 'op1'", "empty device kind"}},
      {"OperatorNoDeviceCanRun",
       [] {
         return Graph3([](pb::Graph& g) {
           pb::MeasuredTime* t = g.mutable_operators(1)->add_measured();
           t->set_device_kind("TPUv9");
           t->set_seconds(1);
         });
       },
       Code::INVALID_ARGUMENT,
       {"op1", "TPUv9"}},
      {"PinnedToUnknownDevice",
       [] { return Graph3([](pb::Graph& g) { g.mutable_operators(1)->set_pinned_device("gpu42"); }); },
       Code::INVALID_ARGUMENT,
       {"op1", "gpu42"}},
  };
}

// The cluster.
std::vector<Case> ClusterCases() {
  return {
      {"ZeroDevices",
       [] { return Place(PlaceRequestFor(ChainGraph(3), "0xA100", "heft")); },
       Code::INVALID_ARGUMENT,
       {"topology.shorthand", "0xA100"}},
      {"EmptyShorthand",
       [] { return Place(PlaceRequestFor(ChainGraph(3), "", "heft")); },
       Code::INVALID_ARGUMENT,
       {"topology.shorthand", "empty topology"}},
      {"UnknownDevicePreset",
       [] { return Place(PlaceRequestFor(ChainGraph(3), "4xZ9000", "heft")); },
       Code::INVALID_ARGUMENT,
       {"topology.shorthand", "Z9000", "A100"}},
      {"AbsurdDeviceCount",
       [] { return Place(PlaceRequestFor(ChainGraph(3), "4000000000xA100", "heft")); },
       Code::INVALID_ARGUMENT,
       {"topology.shorthand", "4000000000"}},
      {"OverTheDeviceLimit",
       [] { return Place(PlaceRequestFor(ChainGraph(3), "2x40xA100", "heft")); },
       Code::RESOURCE_EXHAUSTED,
       {"80 devices", "--max_devices"}},
      {"TopologyWithNoDevices",
       [] { return OnTopology(R"({"devices": [], "links": {"bandwidth": [], "latency": []}})"); },
       Code::INVALID_ARGUMENT,
       {"topology.json", "non-empty list of devices"}},
      {"TopologyNotJson",
       [] { return OnTopology("{\"devices\": [ oops"); },
       Code::INVALID_ARGUMENT,
       {"topology.json", "not valid JSON"}},
      {"TopologyUnknownKey",
       [] { return OnTopology(R"({"devices": [{"name": "g", "preset": "A100"}], "colour": 1})"); },
       Code::INVALID_ARGUMENT,
       {"topology.json", "colour"}},
      {"TopologyDuplicateDevice",
       [] {
         return OnTopology(R"({"devices": [{"name": "g", "preset": "A100"}, {"name": "g", "preset": "A100"}],
                             "links": {"bandwidth": [[null, "1GB/s"], ["1GB/s", null]],
                                       "latency": [[null, "1us"], ["1us", null]]}})");
       },
       Code::INVALID_ARGUMENT,
       {"duplicate device name 'g'"}},
      {"TopologyNaNBandwidth",
       [] {
         return OnTopology(R"({"devices": [{"name": "a", "preset": "A100"}, {"name": "b", "preset": "A100"}],
                             "links": {"bandwidth": [[null, "nanGB/s"], ["1GB/s", null]],
                                       "latency": [[null, "1us"], ["1us", null]]}})");
       },
       Code::INVALID_ARGUMENT,
       {"topology.json", "nan"}},
      {"TopologyNegativeMemory",
       [] { return OnTopology(R"({"devices": [{"name": "a", "preset": "A100", "memory": -5}]})"); },
       Code::INVALID_ARGUMENT,
       {"topology.json", "memory"}},
      {"DeviceWithNoMemory",
       [] { return OnTopology(R"({"devices": [{"name": "tiny", "preset": "A100", "memory": "1B"}]})"); },
       Code::FAILED_PRECONDITION,
       {"memory"}},
      {"MemoryThatCannotFit",
       [] {
         pb::Graph g = ChainGraph(3);
         g.mutable_operators(1)->set_param_bytes(int64_t{200} << 30);
         return Place(PlaceRequestFor(g, "4xA100", "heft"));
       },
       Code::FAILED_PRECONDITION,
       {"memory"}},
  };
}

// Limits.
std::vector<Case> LimitCases() {
  return {
      {"OverTheOperatorLimit",
       [] { return Place(PlaceRequestFor(ChainGraph(6000), "2xA100", "heft")); },
       Code::RESOURCE_EXHAUSTED,
       {"6000 operators", "5000", "--max_operators"}},
      {"OverTheEdgeLimit",
       [] {
         pb::Graph g = ChainGraph(60);
         for (int i = 0; i + 2 < 60; ++i) AddEdge(g, absl::StrCat("op", i), absl::StrCat("op", i + 2));
         return Place(PlaceRequestFor(g, "2xA100", "heft"));
       },
       Code::RESOURCE_EXHAUSTED,
       {"117 edges", "--max_edges"}},
      {"TrainingExpansionOverTheLimit",
       [] {
         pb::Graph g = ChainGraph(3000);
         g.clear_edges();  // under the edge limit; the expansion passes the operator limit
         pb::PlaceRequest r = PlaceRequestFor(g, "2xA100", "heft");
         r.mutable_options()->set_training(true);
         return Place(r);
       },
       Code::RESOURCE_EXHAUSTED,
       {"training graph", "--max_operators"}},
      {"MessageOverTheSizeLimit",
       [] { return Onnx(std::string(kMaxMessageBytes + 1024, 'x')); },
       Code::RESOURCE_EXHAUSTED,
       {"larger than max"}},
  };
}

// ONNX files.
std::vector<Case> OnnxFileCases() {
  return {
      {"NonOnnxBytes",
       [] { return Onnx("\x08\x07 this is not a model \xff\xff\xff"); },
       Code::INVALID_ARGUMENT,
       {"onnx: "}},
      {"EmptyOnnx", [] { return Onnx(""); }, Code::INVALID_ARGUMENT, {"onnx: "}},
      {"BytesOfNoFormat",
       [] { return Onnx(std::string("\x5f\x3a\x10 binary \xff\xfe", 14)); },
       Code::INVALID_ARGUMENT,
       {"onnx: ", "not ONNX, JSON or a Tarnawski graph", "starting 5f 3a 10"}},
      {"TruncatedOnnx",
       [] {
         const std::string model = Corpus("resnet50.onnx");
         return Onnx(model.substr(0, model.size() / 2));
       },
       Code::INVALID_ARGUMENT,
       {"onnx: "}},
      {"OnnxWrongElementType",
       [] {
         return Onnx(OnnxModel([](onnx::ModelProto& m) {
           onnx_testing::AddInitializer(m, "w", {16, 16}, /*elem_type=*/99);
           onnx_testing::AddNode(m, "MatMul", {"y", "w"}, {"p"}, "mm");
         }));
       },
       Code::INVALID_ARGUMENT,
       {"onnx: ", "'w'", "data_type 99"}},
      {"OnnxInputWithoutElementType",
       [] {
         return Onnx(OnnxModel([](onnx::ModelProto& m) {
           m.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->set_elem_type(0);
         }));
       },
       Code::INVALID_ARGUMENT,
       {"onnx: ", "'x'"}},
      {"OnnxUnknownOperator",
       [] {
         return Onnx(OnnxModel([](onnx::ModelProto& m) { onnx_testing::AddNode(m, "Frobnicate", {"y"}, {"f"}, "f"); }));
       },
       Code::INVALID_ARGUMENT,
       {"onnx: ", "Frobnicate"}},
      {"OnnxNegativeDimension",
       [] {
         onnx::ModelProto m = onnx_testing::NewModel();
         onnx_testing::AddInput(m, "x", {1, -3});
         onnx_testing::AddNode(m, "Relu", {"x"}, {"y"}, "relu");
         return Onnx(onnx_testing::Serialize(m));
       },
       Code::INVALID_ARGUMENT,
       {"onnx: ", "negative dimension -3"}},
      {"OnnxNegativeBatch",
       [] {
         Call c = Onnx(Corpus("resnet50.onnx"));
         c.place.mutable_options()->set_batch_size(-4);
         return c;
       },
       Code::INVALID_ARGUMENT,
       {"batch_size (-4)", "must not be negative"}},
  };
}

// ONNX files: functions, loops and shapes that cannot be imported.
std::vector<Case> OnnxStructureCases() {
  return {
      {"OnnxFunctionCallingItself",
       [] {
         return Onnx(OnnxModel([](onnx::ModelProto& m) {
           onnx_testing::AddSelfCallingFunction(m);
           onnx_testing::AddNode(m, "Loopy", {"y"}, {"z"}, "call").set_domain("custom");
         }));
       },
       Code::INVALID_ARGUMENT,
       {"onnx: ", "a function calls itself"}},
      {"OnnxFunctionsInliningPastTheOperatorLimit",
       [] {
         return Onnx(OnnxModel([](onnx::ModelProto& m) {
           onnx_testing::AddDoublingFunctions(m, 40);  // 2^40 nodes once inlined
           onnx_testing::AddNode(m, "F39", {"y"}, {"z"}, "top").set_domain("custom");
         }));
       },
       Code::RESOURCE_EXHAUSTED,
       {"onnx: ", "max_nodes"}},
      {"OnnxLoopBodyReadingNothingDefined",
       [] {
         return Onnx(OnnxModel([](onnx::ModelProto& m) {
           onnx_testing::AddInt64s(m, "two", {2}).clear_dims();
           onnx::GraphProto& body =
               onnx_testing::AddGraph(onnx_testing::AddNode(m, "Loop", {"two", "", "y"}, {"z"}, "loop"), "body");
           onnx_testing::AddInput(body, "i", {}, onnx::TensorProto::INT64);
           onnx_testing::AddInput(body, "c", {}, onnx::TensorProto::BOOL);
           onnx_testing::AddInput(body, "v", {1, 16});
           onnx_testing::AddNode(body, "Identity", {"c"}, {"c2"});
           onnx_testing::AddNode(body, "Add", {"v", "ghost"}, {"v2"});
           onnx_testing::AddOutput(body, "c2");
           onnx_testing::AddOutput(body, "v2");
         }));
       },
       Code::INVALID_ARGUMENT,
       {"onnx: ", "'ghost'"}},
      {"OnnxNegativeDim",
       [] {
         Call c = Onnx(OnnxModel([](onnx::ModelProto&) {}));
         (*c.place.mutable_options()->mutable_dims())["x:0"] = -1;
         return c;
       },
       Code::INVALID_ARGUMENT,
       {"options.dims['x:0'] is negative"}},
  };
}

// JSON and Tarnawski files.
std::vector<Case> JsonAndTarnawskiFileCases() {
  return {
      {"JsonOfNeitherFormat",
       [] { return GraphJson(R"({"hello": "world"})"); },
       Code::INVALID_ARGUMENT,
       {"graph_json", "neither"}},
      {"GraphJsonTruncated",
       [] { return GraphJson(R"({"format": "placement.graph/v1", "operators": [{"name": )"); },
       Code::INVALID_ARGUMENT,
       {"graph_json: "}},
      {"GraphJsonCycle",
       [] {
         return GraphJson(R"({"format": "placement.graph/v1",
          "operators": [{"name": "a", "flops": 1, "outputs": [{"bytes": 8}]},
                        {"name": "b", "flops": 1, "outputs": [{"bytes": 8}]}],
          "edges": [{"src": "a", "dst": "b"}, {"src": "b", "dst": "a"}]})");
       },
       Code::INVALID_ARGUMENT,
       {"graph_json: ", "cycle"}},
      {"TarnawskiNegativeCost",
       [] {
         return GraphJson(R"({"maxFPGAs": 2, "maxCPUs": 0, "maxSizePerFPGA": 100,
          "nodes": [{"id": 1, "supportedOnFpga": 1, "cpuLatency": 1, "fpgaLatency": -3, "isBackwardNode": 0,
                     "colorClass": 1, "size": 1}], "edges": []})");
       },
       Code::INVALID_ARGUMENT,
       {"graph_json: ", "fpgaLatency"}},
  };
}

// The request's options: what must be there, names that must be known.
std::vector<Case> RequiredFieldAndNameCases() {
  return {
      {"NoGraph",
       [] {
         pb::PlaceRequest r;
         r.mutable_topology()->set_shorthand("2xA100");
         return Place(r);
       },
       Code::INVALID_ARGUMENT,
       {"no graph"}},
      {"NoTopology",
       [] {
         pb::PlaceRequest r = PlaceRequestFor(ChainGraph(3), "", "heft");
         r.clear_topology();
         return Place(r);
       },
       Code::INVALID_ARGUMENT,
       {"topology: none given"}},
      {"UnknownAlgorithm",
       [] { return Place(PlaceRequestFor(ChainGraph(3), "2xA100", "telepathy")); },
       Code::INVALID_ARGUMENT,
       {"telepathy", "heft", "auto"}},
      {"UnknownObjective",
       [] {
         pb::PlaceRequest r = PlaceRequestFor(ChainGraph(3), "2xA100", "heft");
         r.set_objective(static_cast<pb::Objective>(42));
         return Place(r);
       },
       Code::INVALID_ARGUMENT,
       {"objective", "42"}},
      {"NegativeBudget",
       [] {
         pb::PlaceRequest r = PlaceRequestFor(ChainGraph(3), "2xA100", "heft");
         r.set_budget_ms(-1);
         return Place(r);
       },
       Code::INVALID_ARGUMENT,
       {"budget_ms", "negative"}},
  };
}

// The request's options: values that do not go together.
std::vector<Case> OptionCombinationCases() {
  return {
      {"BatchOnAFixedCostGraph",
       [] {
         pb::PlaceRequest r = PlaceRequestFor(ChainGraph(3), "2xA100", "heft");
         r.mutable_options()->set_batch_size(8);
         return Place(r);
       },
       Code::INVALID_ARGUMENT,
       {"batch_size", "ONNX"}},
      {"UnknownOptimizer",
       [] {
         pb::PlaceRequest r = PlaceRequestFor(ChainGraph(3), "2xA100", "heft");
         r.mutable_options()->set_training(true);
         r.mutable_options()->set_optimizer("rmsprop-deluxe");
         return Place(r);
       },
       Code::INVALID_ARGUMENT,
       {"options.optimizer", "rmsprop-deluxe"}},
      {"UnknownSimulatorPreset",
       [] {
         pb::PlaceRequest r = PlaceRequestFor(ChainGraph(3), "2xA100", "heft");
         r.mutable_simulator()->set_preset("quantum");
         return Place(r);
       },
       Code::INVALID_ARGUMENT,
       {"simulator.preset", "quantum"}},
      {"UnknownQueuePriority",
       [] {
         pb::PlaceRequest r = PlaceRequestFor(ChainGraph(3), "2xA100", "heft");
         r.mutable_simulator()->set_priority("whenever");
         return Place(r);
       },
       Code::INVALID_ARGUMENT,
       {"simulator.priority", "whenever"}},
      {"UnknownCostModel",
       [] {
         pb::PlaceRequest r = PlaceRequestFor(ChainGraph(3), "2xA100", "heft");
         r.set_cost_model("roofline");
         return Place(r);
       },
       Code::INVALID_ARGUMENT,
       {"cost_model", "roofline", "tarnawski"}},
      {"TarnawskiCostModelWithThroughput",
       [] {
         pb::PlaceRequest r = PlaceRequestFor(ChainGraph(3), "2xA100", "auto");
         r.set_objective(pb::OBJECTIVE_THROUGHPUT);
         r.set_cost_model("tarnawski");
         return Place(r);
       },
       Code::INVALID_ARGUMENT,
       {"cost_model", "latency"}},
      {"PlacerOfAnotherCostModel",
       [] {
         pb::PlaceRequest r = PlaceRequestFor(ChainGraph(3), "2xA100", "heft");
         r.set_objective(pb::OBJECTIVE_LATENCY);
         r.set_cost_model("tarnawski");
         return Place(r);
       },
       Code::INVALID_ARGUMENT,
       {"'heft'", "tarnawski"}},
      {"DeadlineAlreadyTooShort",
       [] {
         Call c = Place(PlaceRequestFor(ChainGraph(3), "2xA100", "heft"));
         c.deadline = std::chrono::milliseconds(1);
         return c;
       },
       Code::DEADLINE_EXCEEDED,
       {}},
  };
}

// Placements to score.
std::vector<Case> PlacementCases() {
  return {
      {"PlacementNamesUnknownOperator",
       [] {
         return Simulate({{"op0", "gpu0"}, {"op1", "gpu0"}, {"op9", "gpu1"}});
       },
       Code::INVALID_ARGUMENT,
       {"no operator named 'op9'"}},
      {"PlacementNamesUnknownDevice",
       [] {
         return Simulate({{"op0", "gpu0"}, {"op1", "gpu7"}, {"op2", "gpu1"}});
       },
       Code::INVALID_ARGUMENT,
       {"op1", "no device named 'gpu7'"}},
      {"PlacementMissesAnOperator",
       [] {
         return Simulate({{"op0", "gpu0"}, {"op1", "gpu0"}});
       },
       Code::INVALID_ARGUMENT,
       {"op2"}},
      {"PlacementAssignsTwice",
       [] {
         return Simulate({{"op0", "gpu0"}, {"op1", "gpu0"}, {"op2", "gpu1"}, {"op1", "gpu1"}});
       },
       Code::INVALID_ARGUMENT,
       {"op1", "twice"}},
      {"PlacementJsonGarbage",
       [] { return Simulate({}, "{\"assignment\": [1, 2"); },
       Code::INVALID_ARGUMENT,
       {"not valid JSON"}},
      {"NoPlacement", [] { return Simulate({}); }, Code::INVALID_ARGUMENT, {"no placement"}},
      {"SplitWhoseBlocksFeedEachOther",
       [] {
         // op0 -> op1 and op2 -> op3 only; gpu0 = {op0, op3} and gpu1 = {op1, op2} feed each other.
         Call c = Simulate({});
         pb::Graph g = ChainGraph(4);
         g.clear_edges();
         AddEdge(g, "op0", "op1");
         AddEdge(g, "op2", "op3");
         *c.simulate_request.mutable_graph() = g;
         c.simulate_request.set_objective(pb::OBJECTIVE_LATENCY);
         c.simulate_request.set_cost_model("tarnawski");
         for (const auto& [op, device] : std::vector<std::pair<std::string, std::string>>{
                  {"op0", "gpu0"}, {"op1", "gpu1"}, {"op2", "gpu1"}, {"op3", "gpu0"}}) {
           pb::Assignment* a = c.simulate_request.add_assignment();
           a->set_op(op);
           a->set_device(device);
         }
         return c;
       },
       Code::INVALID_ARGUMENT,
       {"'gpu0'", "'gpu1'", "cycle"}},
  };
}

const std::vector<Case>& Catalogue() {
  static const std::vector<Case>* cases = [] {
    auto* all = new std::vector<Case>;
    for (auto* group :
         {GraphMessageCases, OperatorFigureCases, ClusterCases, LimitCases, OnnxFileCases, OnnxStructureCases,
          JsonAndTarnawskiFileCases, RequiredFieldAndNameCases, OptionCombinationCases, PlacementCases}) {
      for (Case& c : group()) all->push_back(std::move(c));
    }
    return all;
  }();
  return *cases;
}

// gtest prints a failing case's parameter: its name, not its bytes.
void PrintTo(const Case& c, std::ostream* out) { *out << c.name; }

class BadInput : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    ServerOptions options = TestOptions(dir_.path());
    options.limits.max_operators = 5000;
    options.limits.max_edges = 100;
    options.limits.max_devices = 64;
    options.limits.max_message_bytes = kMaxMessageBytes;
    server_ = StartReadyServer(options);
    ASSERT_NE(server_, nullptr);
  }

  grpc::Status Send(const Call& call) {
    auto context = ContextWithin(call.deadline);
    auto stub = StubFor(server_->port());
    if (call.simulate) {
      pb::SimulateResponse response;
      return stub->Simulate(context.get(), call.simulate_request, &response);
    }
    pb::PlaceResponse response;
    return stub->Place(context.get(), call.place, &response);
  }

  TempDir dir_;
  std::unique_ptr<PlacementServer> server_;
};

TEST_P(BadInput, AnsweredWithTheRightCodeAndServingOn) {
  const Case& c = GetParam();
  const grpc::Status s = Send(c.make());
  EXPECT_EQ(s.error_code(), c.code) << s.error_message();
  for (const std::string& part : c.message) EXPECT_THAT(s.error_message(), HasSubstr(part));

  // Serving on: a good request is placed right after.
  const grpc::Status good = Send(Place(PlaceRequestFor(ChainGraph(4), "2xA100", "heft")));
  EXPECT_TRUE(good.ok()) << good.error_message();
}

INSTANTIATE_TEST_SUITE_P(Catalogue, BadInput, ::testing::ValuesIn(Catalogue()),
                         [](const ::testing::TestParamInfo<Case>& info) { return info.param.name; });

// Not errors: an absurd budget is capped at --max_budget_ms with a warning, and a deadline a century away is
// honoured like any other (the budget, not the deadline, ends the placer).
TEST_F(BadInput, AbsurdBudgetAndDeadlineAreCapped) {
  Call call = Place(PlaceRequestFor(ChainGraph(4), "2xA100", "heft"));
  call.place.set_budget_ms(std::numeric_limits<int64_t>::max());
  call.deadline = std::chrono::hours(24 * 365 * 100);
  auto context = ContextWithin(call.deadline);
  pb::PlaceResponse response;
  const grpc::Status s = StubFor(server_->port())->Place(context.get(), call.place, &response);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_THAT(response.warnings(), ::testing::Contains(AllOf(HasSubstr("capped"), HasSubstr("--max_budget_ms"))));
}

TEST(BadInputCatalogue, HasAtLeastFortyCases) { EXPECT_GE(Catalogue().size(), 40u); }

}  // namespace
}  // namespace placement::server
