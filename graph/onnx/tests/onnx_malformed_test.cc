// A catalogue of broken inputs: each is written to a temporary folder and imported from there, and must give
// an error that says what is wrong (never a crash, never a success).
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "graph/onnx/onnx_import.h"
#include "graph/onnx/tests/test_models.h"

namespace placement {
namespace {

using ::testing::HasSubstr;
using namespace onnx_testing;  // NOLINT: model-building helpers

const std::string kCorpus = std::string(PLACEMENT_SOURCE_DIR) + "/tests/data/corpus";

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// x [batch, 4] -> Relu -> y: the valid model most cases break one thing of.
onnx::ModelProto Valid() {
  onnx::ModelProto m = NewModel();
  AddInput(m, "x", {"batch", 4});
  AddNode(m, "Relu", {"x"}, {"y"}, "relu");
  AddOutput(m, "y");
  return m;
}

struct BadCase {
  std::string name;
  std::function<std::string()> bytes;
  std::string error;  // a part of the message
  absl::StatusCode code = absl::StatusCode::kInvalidArgument;
};

std::string Model(const std::function<void(onnx::ModelProto&)>& edit) {
  onnx::ModelProto m = Valid();
  edit(m);
  return Serialize(m);
}

// Files that are not a model at all.
std::vector<BadCase> FileCases() {
  return {
      {"empty_file", [] { return std::string(); }, "the file is empty"},
      {"random_bytes",
       [] {
         std::mt19937 rng(7);
         std::string s(4096, '\0');
         for (char& c : s) c = static_cast<char>(rng());
         return s;
       },
       "not a valid ONNX model"},
      {"json_file", [] { return std::string(R"({"nodes": [{"name": "a", "op": "MatMul"}]})"); },
       "not a valid ONNX model"},
      {"truncated_file",
       [] {
         std::string full = ReadFile(kCorpus + "/resnet50.onnx");
         return full.substr(0, full.size() / 2);
       },
       "not a valid ONNX model"},
  };
}

// Graphs that are not well formed, and versions this importer does not read.
std::vector<BadCase> GraphCases() {
  return {
      {"no_nodes", [] { return Model([](onnx::ModelProto& m) { m.mutable_graph()->clear_node(); }); }, "has no nodes"},
      {"cycle",
       [] {
         return Model([](onnx::ModelProto& m) {
           m.mutable_graph()->mutable_node(0)->set_input(0, "z");
           AddNode(m, "Relu", {"y"}, {"z"}, "back");
         });
       },
       "the graph has a cycle: 'back' (Relu) -> 'relu' (Relu) -> 'back' (Relu)"},
      {"unknown_tensor",
       [] { return Model([](onnx::ModelProto& m) {
              AddNode(m, "Add", {"y", "ghost"}, {"s"}, "add");
            }); },
       "node 'add' (Add) input 1 'ghost' is not a graph input, an initializer or a node output"},
      {"inconsistent_matmul",
       [] {
         return Model([](onnx::ModelProto& m) {
           AddInitializer(m, "w", {5, 3});
           AddNode(m, "MatMul", {"y", "w"}, {"p"}, "mm");
         });
       },
       "node 'mm' (MatMul): shape inference failed: [ShapeInferenceError] Incompatible dimensions for matrix "
       "multiplication (inputs: 'y' [1,4], 'w' [5,3])"},
      {"negative_dim",
       [] {
         onnx::ModelProto m = NewModel();
         AddInput(m, "x", {1, -3});
         AddNode(m, "Relu", {"x"}, {"y"}, "relu");
         return Serialize(m);
       },
       "graph input 'x' has a negative dimension -3 at index 1"},
      {"duplicate_output", [] { return Model([](onnx::ModelProto& m) { AddNode(m, "Relu", {"x"}, {"y"}, "again"); }); },
       "tensor 'y' is an output of node 'again' (Relu) and also of node 'relu' (Relu)"},
      {"output_shadows_input",
       [] { return Model([](onnx::ModelProto& m) { AddNode(m, "Relu", {"y"}, {"x"}, "shadow"); }); },
       "tensor 'x' is an output of node 'shadow' (Relu) and also of a graph input"},
      {"ir_version_too_new", [] { return Model([](onnx::ModelProto& m) { m.set_ir_version(99); }); },
       "unsupported ONNX IR version 99"},
      {"ir_version_missing", [] { return Model([](onnx::ModelProto& m) { m.clear_ir_version(); }); },
       "ir_version is missing"},
      {"opset_too_new", [] { return Model([](onnx::ModelProto& m) { m.mutable_opset_import(0)->set_version(99); }); },
       "unsupported opset version 99 for domain 'ai.onnx'"},
      {"no_default_opset",
       [] { return Model([](onnx::ModelProto& m) { m.mutable_opset_import(0)->set_domain("com.example"); }); },
       "no entry for the default domain"},
  };
}

// Shapes and sizes that cannot be right.
std::vector<BadCase> ShapeCases() {
  return {
      {"overflowing_dims",
       [] {
         onnx::ModelProto m = NewModel();
         AddInput(m, "x", {int64_t{1} << 40, int64_t{1} << 40});
         AddNode(m, "Relu", {"x"}, {"y"}, "relu");
         return Serialize(m);
       },
       "overflows 64 bits"},
      {"overflowing_bytes",
       [] {
         onnx::ModelProto m = NewModel();
         AddInput(m, "x", {int64_t{1} << 31, int64_t{1} << 31});  // 2^62 elements of 4 bytes
         AddNode(m, "Relu", {"x"}, {"y"}, "relu");
         return Serialize(m);
       },
       "its size overflows 64 bits"},
      {"raw_data_size_mismatch",
       [] {
         return Model([](onnx::ModelProto& m) {
           AddInitializer(m, "w", {4, 4}).set_raw_data(std::string(10, '\0'));
           AddNode(m, "MatMul", {"y", "w"}, {"p"}, "mm");
         });
       },
       "initializer 'w' has 10 bytes of raw_data but FLOAT shape [4,4] needs 64"},
      {"unknown_op_type",
       [] { return Model([](onnx::ModelProto& m) { AddNode(m, "Frobnicate", {"y"}, {"f"}, "f"); }); },
       "node 'f' (Frobnicate): op type 'Frobnicate' does not exist in opset 14"},
      {"wrong_input_count", [] { return Model([](onnx::ModelProto& m) { AddNode(m, "Conv", {"y"}, {"c"}, "conv"); }); },
       "node 'conv' (Conv) is invalid: Node (conv) has input size 1 not in range [min=2, max=3]"},
      {"unbound_symbol",
       [] {
         onnx::ModelProto m = NewModel();
         AddInput(m, "x", {"batch", "width"});
         AddNode(m, "Relu", {"x"}, {"y"}, "relu");
         return Serialize(m);
       },
       "graph input 'x' dimension 1 is the symbol 'width'"},
      {"graph_output_not_produced", [] { return Model([](onnx::ModelProto& m) { AddOutput(m, "nowhere"); }); },
       "graph output 'nowhere' is produced by no node"},
      {"unlisted_domain",
       [] { return Model([](onnx::ModelProto& m) { AddNode(m, "Foo", {"y"}, {"f"}, "foo").set_domain("com.x"); }); },
       "node 'foo' (Foo) uses domain 'com.x', which the model's opset_import does not list"},
      // Found by fuzzing: ONNX's own inference crashed on these (tests/fuzz/corpus/onnx_import/regression_*).
      {"conv_kernel_rank_differs_from_input",
       [] {
         onnx::ModelProto m = NewModel();
         AddInput(m, "img", {1, 8});
         AddInitializer(m, "k", {4, 3, 3, 3});
         AddNode(m, "Conv", {"img", "k"}, {"c"}, "conv");
         return Serialize(m);
       },
       "node 'conv' (Conv): input 'img' has rank 2 but weight 'k' has rank 4"},
      {"pool_kernel_shape_of_wrong_length",
       [] {
         onnx::ModelProto m = NewModel();
         AddInput(m, "img", {1, 3, 8});
         SetInts(AddNode(m, "MaxPool", {"img"}, {"p"}, "pool"), "kernel_shape", {2, 2});
         return Serialize(m);
       },
       "node 'pool' (MaxPool): attribute 'kernel_shape' has 2 values; an input of rank 3 needs 1"},
  };
}

// Control flow and functions that cannot be inlined.
std::vector<BadCase> ControlFlowCases() {
  return {
      {"control_flow",
       [] {
         return Model([](onnx::ModelProto& m) {
           AddInput(m, "cond", {}, onnx::TensorProto::BOOL);
           onnx::NodeProto& branch = AddNode(m, "If", {"cond"}, {"out"}, "choose");
           for (const char* name : {"then_branch", "else_branch"}) {
             onnx::AttributeProto* a = branch.add_attribute();
             a->set_name(name);
             a->set_type(onnx::AttributeProto::GRAPH);
             a->mutable_g()->set_name(name);
           }
         });
       },
       "If 'choose': its then_branch has 0 outputs for its 1"},
      // Control flow, functions and the newer opsets.
      {"loop_body_reads_nothing_defined",
       [] {
         return Model([](onnx::ModelProto& m) {
           AddInt64s(m, "two", {2}).clear_dims();
           onnx::GraphProto& body = AddGraph(AddNode(m, "Loop", {"two", "", "y"}, {"z"}, "loop"), "body");
           AddInput(body, "i", {}, onnx::TensorProto::INT64);
           AddInput(body, "c", {}, onnx::TensorProto::BOOL);
           AddInput(body, "v", {1, 4});
           AddNode(body, "Identity", {"c"}, {"c2"});
           AddNode(body, "Add", {"v", "ghost"}, {"v2"}, "add");
           AddOutput(body, "c2");
           AddOutput(body, "v2");
         });
       },
       "'ghost' is not a graph input, an initializer or a node output"},
      {"if_without_condition",
       [] {
         return Model([](onnx::ModelProto& m) {
           onnx::NodeProto& branch = AddNode(m, "If", {}, {"z"}, "choose");
           for (const char* name : {"then_branch", "else_branch"}) {
             onnx::GraphProto& g = AddGraph(branch, name);
             AddNode(g, "Identity", {"y"}, {std::string(name) + "_out"});
             AddOutput(g, std::string(name) + "_out");
           }
         });
       },
       "If 'choose' needs exactly one input, its condition"},
      {"scan_without_scan_inputs",
       [] {
         return Model([](onnx::ModelProto& m) {
           onnx::GraphProto& body = AddGraph(AddNode(m, "Scan", {"y"}, {"z"}, "scan"), "body");
           AddInput(body, "s", {1, 4});
           AddNode(body, "Identity", {"s"}, {"s2"});
           AddOutput(body, "s2");
         });
       },
       "Scan 'scan' is malformed"},
      {"function_calls_itself",
       [] {
         return Model([](onnx::ModelProto& m) {
           AddSelfCallingFunction(m);
           AddNode(m, "Loopy", {"y"}, {"z"}, "call").set_domain("custom");
         });
       },
       "a function calls itself: custom.Loopy -> custom.Loopy"},
      {"function_reads_undefined",
       [] {
         return Model([](onnx::ModelProto& m) {
           AddSelfCallingFunction(m);  // then made to read a name it neither takes nor makes
           onnx::NodeProto* add = m.mutable_functions(0)->mutable_node(0);
           add->set_op_type("Add");
           add->clear_domain();
           add->add_input("outside");
           AddNode(m, "Loopy", {"y"}, {"z"}, "call").set_domain("custom");
         });
       },
       "reads 'outside', which is neither an input of the function nor made in its body"},
  };
}

// Operators given what they cannot take.
std::vector<BadCase> OperatorCases() {
  return {
      {"sequence_op_on_a_tensor",
       [] {
         return Model([](onnx::ModelProto& m) {
           AddInt64s(m, "zero", {0}).clear_dims();
           AddNode(m, "SequenceAt", {"y", "zero"}, {"z"}, "at");
         });
       },
       "node 'at' (SequenceAt): input 'y' is not a sequence the importer could follow"},
      {"sequence_insert_without_its_tensor",  // found by fuzzing: read past the node's inputs
       [] {
         return Model([](onnx::ModelProto& m) {
           AddNode(m, "SequenceEmpty", {}, {"s"}, "empty");
           AddNode(m, "SequenceInsert", {"s"}, {"s2"}, "insert");
         });
       },
       "node 'insert' (SequenceInsert): input 1 is missing"},
      {"binary_op_with_an_empty_slot",
       [] {
         return Model([](onnx::ModelProto& m) {
           AddInt64s(m, "k", {2});
           AddNode(m, "Add", {"k", ""}, {"z"}, "add");
         });
       },
       "node 'add' (Add)"},
      {"split18_outputs_disagree",
       [] {
         onnx::ModelProto m = NewModel(18);
         AddInput(m, "x", {"batch", 6});
         SetInt(AddNode(m, "Split", {"x"}, {"a", "b"}, "split"), "num_outputs", 3);
         return Serialize(m);
       },
       "node 'split' (Split): num_outputs 3 differs from the 2 outputs"},
      {"pad18_axis_out_of_range",
       [] {
         onnx::ModelProto m = NewModel(18);
         AddInput(m, "x", {"batch", 6});
         AddInt64s(m, "pads", {1, 1});
         AddInt64s(m, "axes", {5});
         AddNode(m, "Pad", {"x", "pads", "", "axes"}, {"p"}, "pad");
         return Serialize(m);
       },
       "node 'pad' (Pad): axis 5 is out of range or repeated"},
      {"opset_past_21", [] { return Model([](onnx::ModelProto& m) { m.mutable_opset_import(0)->set_version(22); }); },
       "knows versions 1 to 21"},
  };
}

std::vector<BadCase> Catalogue() {
  std::vector<BadCase> all;
  for (auto* group : {FileCases, GraphCases, ShapeCases, ControlFlowCases, OperatorCases}) {
    for (BadCase& c : group()) all.push_back(std::move(c));
  }
  return all;
}

TEST(OnnxMalformed, EveryCaseFailsWithAMessageThatNamesTheProblem) {
  TempDir dir;
  std::vector<BadCase> cases = Catalogue();
  ASSERT_GE(cases.size(), 10u);
  for (const BadCase& c : cases) {
    SCOPED_TRACE(c.name);
    std::string path = dir.Write(c.name + ".onnx", c.bytes());
    absl::StatusOr<OnnxImportResult> result = ImportOnnxFile(path, {});
    ASSERT_FALSE(result.ok());
    EXPECT_EQ(result.status().code(), c.code) << result.status();
    EXPECT_THAT(std::string(result.status().message()), HasSubstr(c.error));
    EXPECT_THAT(std::string(result.status().message()), HasSubstr(path));  // file errors say which file
    // The same bytes from memory fail the same way.
    if (!c.bytes().empty()) {
      absl::StatusOr<OnnxImportResult> from_bytes = ImportOnnxBytes(c.bytes(), {});
      ASSERT_FALSE(from_bytes.ok());
      EXPECT_THAT(std::string(from_bytes.status().message()), HasSubstr(c.error));
    }
  }
}

TEST(OnnxMalformed, ControlFlowWithoutItsSubgraphsIsRejectedNamingTheNode) {
  const std::map<std::string, std::string> expected = {{"If", "If 'my_If' has no then_branch graph"},
                                                       {"Loop", "Loop 'my_Loop' is malformed"},
                                                       {"Scan", "Scan 'my_Scan' is malformed"}};
  for (const auto& [op, message] : expected) {
    onnx::ModelProto m = Valid();
    onnx::NodeProto& node = AddNode(m, op, {"y"}, {"out"}, "my_" + op);
    onnx::AttributeProto* body = node.add_attribute();
    body->set_name("body");
    body->set_type(onnx::AttributeProto::GRAPH);
    body->mutable_g()->set_name("body");
    absl::StatusOr<OnnxImportResult> result = ImportOnnxBytes(Serialize(m), {});
    ASSERT_FALSE(result.ok()) << op;
    EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(result.status().message()), HasSubstr(message));
  }
}

TEST(OnnxMalformed, EveryTruncationFailsCleanly) {
  // Cutting a real model at any point either fails with a status or, where the cut falls between complete
  // fields, parses as a smaller model; it never crashes.
  std::string full = ReadFile(kCorpus + "/mobilenet_v3_large.onnx");
  ASSERT_FALSE(full.empty());
  for (size_t cut = 0; cut < full.size(); cut += 97) {
    absl::StatusOr<OnnxImportResult> result = ImportOnnxBytes(full.substr(0, cut), {});
    if (!result.ok()) {
      EXPECT_FALSE(result.status().message().empty());
    }
  }
}

TEST(OnnxMalformed, MissingFileIsNotFound) {
  absl::StatusOr<OnnxImportResult> result = ImportOnnxFile("/nonexistent/model.onnx", {});
  EXPECT_EQ(result.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(result.status().message()), HasSubstr("/nonexistent/model.onnx"));
}

TEST(OnnxMalformed, BadOptionsAreRefused) {
  OnnxImportOptions options;
  options.batch_size = 0;
  EXPECT_THAT(std::string(ImportOnnxBytes(Serialize(Valid()), options).status().message()),
              HasSubstr("batch_size must be"));
  options = {};
  options.dims["batch"] = -2;
  EXPECT_THAT(std::string(ImportOnnxBytes(Serialize(Valid()), options).status().message()), HasSubstr("dims['batch']"));
}

TEST(OnnxMalformed, SniffingTellsOnnxFromOtherFormats) {
  EXPECT_TRUE(LooksLikeOnnx(ReadFile(kCorpus + "/resnet50.onnx")));
  EXPECT_TRUE(LooksLikeOnnx(ReadFile(kCorpus + "/resnet50.onnx").substr(0, 16)));
  EXPECT_TRUE(LooksLikeOnnx(Serialize(Valid())));
  EXPECT_FALSE(LooksLikeOnnx(""));
  EXPECT_FALSE(LooksLikeOnnx(R"({"nodes": []})"));
  EXPECT_FALSE(LooksLikeOnnx("  [1, 2]"));
  EXPECT_FALSE(LooksLikeOnnx("\x08"));
  EXPECT_FALSE(LooksLikeOnnx(std::string("\x08\x00", 2)));  // ir_version 0
}

}  // namespace
}  // namespace placement
