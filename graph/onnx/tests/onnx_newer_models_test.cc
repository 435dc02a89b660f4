// What current exporters write: model-local functions (IR 8 to 10: attribute defaults, overloads), opsets 18
// to 21 with the operators that changed after the linked library's opset 17, the newer element types.
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <google/protobuf/unknown_field_set.h>

#include "graph/onnx/onnx_import.h"
#include "graph/onnx/tests/test_models.h"

namespace placement {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using namespace onnx_testing;  // NOLINT: model-building helpers

// custom.Block(x) = LeakyRelu(MatMul(x, w), alpha = the caller's `alpha`), the way a newer exporter writes a
// module as a function; `w` is a second function input.
onnx::FunctionProto& AddBlockFunction(onnx::ModelProto& m) {
  onnx::FunctionProto* f = m.add_functions();
  f->set_name("Block");
  f->set_domain("custom");
  f->add_input("x");
  f->add_input("w");
  f->add_output("y");
  f->add_attribute("alpha");
  onnx::NodeProto* mm = f->add_node();
  mm->set_op_type("MatMul");
  mm->add_input("x");
  mm->add_input("w");
  mm->add_output("h");
  mm->set_name("proj");
  onnx::NodeProto* act = f->add_node();
  act->set_op_type("LeakyRelu");
  act->add_input("h");
  act->add_output("y");
  act->set_name("act");
  onnx::AttributeProto* ref = act->add_attribute();
  ref->set_name("alpha");
  ref->set_type(onnx::AttributeProto::FLOAT);
  ref->set_ref_attr_name("alpha");
  onnx::OperatorSetIdProto* opset = f->add_opset_import();
  opset->set_domain("");
  opset->set_version(18);
  onnx::OperatorSetIdProto* custom = m.add_opset_import();
  custom->set_domain("custom");
  custom->set_version(1);
  return *f;
}

onnx::ModelProto TwoBlocks() {
  onnx::ModelProto m = NewModel(18);
  m.set_ir_version(10);
  AddBlockFunction(m);
  AddInput(m, "x", {"batch", 8});
  AddInitializer(m, "w1", {8, 8});
  AddInitializer(m, "w2", {8, 8});
  onnx::NodeProto& first = AddNode(m, "Block", {"x", "w1"}, {"h1"}, "/layers.0");
  first.set_domain("custom");
  SetFloat(first, "alpha", 0.2f);
  AddNode(m, "Block", {"h1", "w2"}, {"h2"}, "/layers.1").set_domain("custom");
  AddOutput(m, "h2");
  return m;
}

TEST(OnnxFunctions, CallsAreInlinedUnderTheCallersName) {
  absl::StatusOr<OnnxImportResult> r = Import(TwoBlocks());
  ASSERT_TRUE(r.ok()) << r.status();
  const Graph& g = r->problem.graph;
  ASSERT_EQ(g.num_ops(), 4);
  for (const char* name : {"/layers.0/proj", "/layers.0/act", "/layers.1/proj", "/layers.1/act"}) {
    EXPECT_NE(g.FindOp(name), kNone) << name;
  }
  EXPECT_EQ(g.op_type(g.FindOp("/layers.1/proj")), "MatMul");
  EXPECT_DOUBLE_EQ(g.flops(g.FindOp("/layers.0/proj")), 2.0 * 8 * 8);
  // The weights are counted where the inlined MatMuls first read them; the second block reads the first's output.
  EXPECT_EQ(g.param_bytes(g.FindOp("/layers.1/proj")), 8 * 8 * 4);
  bool chained = false;
  for (EdgeId e : g.in_edges(g.FindOp("/layers.1/proj")))
    chained = chained || g.edge(e).src == g.FindOp("/layers.0/act");
  EXPECT_TRUE(chained);
}

TEST(OnnxFunctions, AttributeDefaultsAndOverloadsOfNewerIrVersions) {
  onnx::ModelProto m = TwoBlocks();
  // IR 9: the function gives alpha a default; IR 10: a second overload of Block, called by the second node.
  onnx::AttributeProto alpha;
  alpha.set_name("alpha");
  alpha.set_type(onnx::AttributeProto::FLOAT);
  alpha.set_f(0.5f);
  m.mutable_functions(0)->mutable_unknown_fields()->AddLengthDelimited(11, alpha.SerializeAsString());
  onnx::FunctionProto& wide = *m.add_functions();
  wide = m.functions(0);
  wide.mutable_unknown_fields()->AddLengthDelimited(13, "wide");
  wide.mutable_node(1)->set_op_type("Relu");
  wide.mutable_node(1)->clear_attribute();
  m.mutable_graph()->mutable_node(1)->mutable_unknown_fields()->AddLengthDelimited(8, "wide");
  absl::StatusOr<OnnxImportResult> r = Import(m);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->problem.graph.op_type(r->problem.graph.FindOp("/layers.0/act")), "LeakyRelu");
  EXPECT_EQ(r->problem.graph.op_type(r->problem.graph.FindOp("/layers.1/act")), "Relu");
}

TEST(OnnxFunctions, RecursionAndBlowUpAreRefused) {
  onnx::ModelProto m = TwoBlocks();
  // Block's MatMul calls Block.
  onnx::NodeProto* call = m.mutable_functions(0)->mutable_node(0);
  call->set_op_type("Block");
  call->set_domain("custom");
  absl::StatusOr<OnnxImportResult> r = Import(m);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("a function calls itself: custom.Block -> custom.Block"));

  // Forty functions, each calling the one below twice: 2^40 nodes once inlined.
  onnx::ModelProto big = NewModel(18);
  AddInput(big, "x", {4});
  AddDoublingFunctions(big, 40);
  AddNode(big, "F39", {"x"}, {"y"}, "top").set_domain("custom");
  AddOutput(big, "y");
  OnnxImportOptions options;
  options.max_nodes = 100000;
  r = Import(big, options);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("more than 100000 (max_nodes)"));
  // Counted, not attempted: the default limit refuses it as fast.
  r = Import(big);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted);
}

TEST(OnnxNewerOpsets, Opset18OperatorsTakeTheirAxesAsInputs) {
  onnx::ModelProto m = NewModel(18);
  AddInput(m, "x", {2, 6, 8});
  AddInt64s(m, "axes", {-1});
  AddNode(m, "ReduceMean", {"x", "axes"}, {"mean"}, "mean");  // keepdims: [2, 6, 1]
  AddInt64s(m, "pads", {1, 3});
  AddInt64s(m, "pad_axes", {1});
  AddNode(m, "Pad", {"x", "pads", "", "pad_axes"}, {"padded"}, "pad");                    // [2, 10, 8]
  onnx::NodeProto& split = AddNode(m, "Split", {"padded"}, {"s0", "s1", "s2"}, "split");  // 10 -> 4, 4, 2
  SetInt(split, "num_outputs", 3);
  SetInt(split, "axis", 1);
  AddInitializer(m, "scale", {2});
  AddInitializer(m, "bias", {2});
  SetInt(AddNode(m, "GroupNormalization", {"x", "scale", "bias"}, {"gn"}, "gn"), "num_groups", 2);
  AddOutput(m, "mean");
  AddOutput(m, "s2");
  AddOutput(m, "gn");
  OnnxImportOptions options;
  options.num_data_inputs = 1;
  absl::StatusOr<OnnxImportResult> r = Import(m, options);
  ASSERT_TRUE(r.ok()) << r.status();
  const Graph& g = r->problem.graph;
  EXPECT_EQ(OutputBytes(g, "mean"), 2 * 6 * 1 * 4);
  EXPECT_EQ(OutputBytes(g, "pad"), 2 * 10 * 8 * 4);
  EXPECT_EQ(OutputBytes(g, "split", 0), 2 * 4 * 8 * 4);
  EXPECT_EQ(OutputBytes(g, "split", 2), 2 * 2 * 8 * 4);
  EXPECT_EQ(OutputBytes(g, "gn"), 2 * 6 * 8 * 4);
  EXPECT_THAT(r->warnings, IsEmpty());
}

TEST(OnnxNewerOpsets, ResizeAndPoolingOfOpsets18And19) {
  onnx::ModelProto m = NewModel(19);
  AddInput(m, "img", {1, 3, 16, 16});
  AddInt64s(m, "sizes", {32, 24});
  onnx::NodeProto& resize = AddNode(m, "Resize", {"img", "", "", "sizes"}, {"big"}, "resize");
  SetInts(resize, "axes", {2, 3});
  SetString(resize, "keep_aspect_ratio_policy", "not_larger");  // scale min(2, 1.5): [1, 3, 24, 24]
  onnx::NodeProto& pool = AddNode(m, "AveragePool", {"big"}, {"pooled"}, "pool");
  SetInts(pool, "kernel_shape", {3, 3});
  SetInts(pool, "dilations", {2, 2});  // a 5x5 window: 24 -> 20
  AddOutput(m, "pooled");
  absl::StatusOr<OnnxImportResult> r = Import(m);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(OutputBytes(r->problem.graph, "resize"), 3 * 24 * 24 * 4);
  EXPECT_EQ(OutputBytes(r->problem.graph, "pool"), 3 * 20 * 20 * 4);
}

TEST(OnnxNewerOpsets, NewElementTypesHaveTheirSizes) {
  onnx::ModelProto m = NewModel(21);
  m.set_ir_version(10);
  AddInput(m, "x", {64});
  SetInt(AddNode(m, "Cast", {"x"}, {"f8"}, "to_float8"), "to", 17);  // FLOAT8E4M3FN: a byte each
  SetInt(AddNode(m, "Cast", {"x"}, {"i4"}, "to_int4"), "to", 22);    // INT4: two a byte
  AddNode(m, "Gelu", {"x"}, {"g"}, "gelu");                          // opset 20
  AddOutput(m, "f8");
  AddOutput(m, "i4");
  AddOutput(m, "g");
  absl::StatusOr<OnnxImportResult> r = Import(m);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(OutputBytes(r->problem.graph, "to_float8"), 64);
  EXPECT_EQ(OutputBytes(r->problem.graph, "to_int4"), 32);
  EXPECT_EQ(OutputBytes(r->problem.graph, "gelu"), 64 * 4);
}

TEST(OnnxNewerOpsets, OpsetsPastTheKnownOnesAreRefused) {
  onnx::ModelProto m = NewModel(22);
  AddInput(m, "x", {4});
  AddNode(m, "Relu", {"x"}, {"y"});
  absl::StatusOr<OnnxImportResult> r = Import(m);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("knows versions 1 to 21"));
  m.mutable_opset_import(0)->set_version(21);
  m.set_ir_version(11);
  r = Import(m);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("reads IR versions 3 to 10"));
}

}  // namespace
}  // namespace placement
