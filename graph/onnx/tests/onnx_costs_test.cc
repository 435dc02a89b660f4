// Small graphs built in code with costs worked out by hand: the cost table, weights, edges, names, the
// binding of symbolic dimensions and the evaluation of shape computations.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "graph/onnx/onnx_import.h"
#include "graph/onnx/tests/test_models.h"
#include "graph/op_class.h"

namespace placement {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using namespace onnx_testing;  // NOLINT: model-building helpers

absl::StatusOr<OnnxImportResult> ImportModel(const onnx::ModelProto& model, OnnxImportOptions options = {}) {
  return ImportOnnxBytes(Serialize(model), options);
}

// Imports or ends the test: later lookups on an empty graph would be meaningless.
#define ASSERT_IMPORTS(result, ...)                                        \
  absl::StatusOr<OnnxImportResult> result##_or = ImportModel(__VA_ARGS__); \
  ASSERT_TRUE(result##_or.ok()) << result##_or.status();                   \
  OnnxImportResult& result = *result##_or

TEST(OnnxCosts, ConvCountsMacsPerOutputElement) {
  onnx::ModelProto m = NewModel();
  AddInput(m, "x", {1, 3, 8, 8});
  AddInitializer(m, "w", {4, 3, 3, 3});
  AddInitializer(m, "b", {4});
  SetInts(AddNode(m, "Conv", {"x", "w", "b"}, {"y"}, "conv"), "pads", {1, 1, 1, 1});
  // Depthwise: groups = channels, each output reads one input channel.
  AddInitializer(m, "dw", {4, 1, 3, 3});
  SetInt(AddNode(m, "Conv", {"y", "dw"}, {"z"}, "depthwise"), "group", 4);
  ASSERT_IMPORTS(r, m);
  const Graph& g = r.problem.graph;
  OpId conv = g.FindOp("conv");
  EXPECT_DOUBLE_EQ(g.flops(conv), 2.0 * (4 * 8 * 8) * (3 * 3 * 3) + 4 * 8 * 8);
  EXPECT_EQ(g.param_bytes(conv), (4 * 27 + 4) * 4);
  EXPECT_EQ(g.data_bytes(conv), 3 * 8 * 8 * 4);  // the graph's input, which no edge brings
  EXPECT_EQ(g.data_bytes(g.FindOp("depthwise")), 0);  // reads conv's output
  EXPECT_DOUBLE_EQ(g.bytes_accessed(conv), (3 * 64 + 4 * 27 + 4 + 4 * 64) * 4.0);
  EXPECT_EQ(g.tensor(g.first_output(conv)).bytes, 4 * 64 * 4);
  OpId dw = g.FindOp("depthwise");
  EXPECT_DOUBLE_EQ(g.flops(dw), 2.0 * (4 * 6 * 6) * 9);
  EXPECT_DOUBLE_EQ(r.macs, (4 * 64) * 27.0 + (4 * 36) * 9.0);
  // The kernel windows, kh x kw, from the weights' shapes: what tells a 5x5 depthwise convolution from a 3x3 one.
  EXPECT_EQ(g.window(conv), 9);
  EXPECT_EQ(g.window(dw), 9);
}

TEST(OnnxCosts, AConvolutionCarriesItsKernelWindow) {
  onnx::ModelProto m = NewModel();
  AddInput(m, "x", {1, 8, 16, 16});
  AddInitializer(m, "w5", {8, 1, 5, 5});
  onnx::NodeProto& dw = AddNode(m, "Conv", {"x", "w5"}, {"y"}, "dw5x5");
  SetInt(dw, "group", 8);
  SetInts(dw, "pads", {2, 2, 2, 2});
  AddInitializer(m, "w7x1", {8, 8, 7, 1});
  SetInts(AddNode(m, "Conv", {"y", "w7x1"}, {"z"}, "conv7x1"), "pads", {3, 0, 3, 0});
  AddNode(m, "Relu", {"z"}, {"r"}, "relu");
  ASSERT_IMPORTS(r, m);
  const Graph& g = r.problem.graph;
  EXPECT_EQ(g.window(g.FindOp("dw5x5")), 25);
  EXPECT_EQ(g.window(g.FindOp("conv7x1")), 7);
  EXPECT_EQ(g.window(g.FindOp("relu")), 0);
}

TEST(OnnxCosts, GemmMatMulAndEinsum) {
  onnx::ModelProto m = NewModel();
  AddInput(m, "a", {2, 5});
  AddInitializer(m, "w", {7, 5});
  SetInt(AddNode(m, "Gemm", {"a", "w"}, {"g"}, "gemm"), "transB", 1);
  // Batched MatMul with broadcasting: [3,1,4,5] x [2,5,6] -> [3,2,4,6].
  AddInput(m, "p", {3, 1, 4, 5});
  AddInput(m, "q", {2, 5, 6});
  AddNode(m, "MatMul", {"p", "q"}, {"pq"}, "matmul");
  AddInput(m, "e1", {2, 3, 4});
  AddInput(m, "e2", {2, 4, 5});
  SetString(AddNode(m, "Einsum", {"e1", "e2"}, {"e"}, "einsum"), "equation", "bij,bjk->bik");
  OnnxImportOptions options;
  options.num_data_inputs = 5;  // all inputs static: say which are data
  ASSERT_IMPORTS(r, m, options);
  const Graph& g = r.problem.graph;
  EXPECT_DOUBLE_EQ(g.flops(g.FindOp("gemm")), 2.0 * 2 * 7 * 5);
  EXPECT_DOUBLE_EQ(g.flops(g.FindOp("matmul")), 2.0 * (3 * 2 * 4 * 6) * 5);
  EXPECT_EQ(g.tensor(g.first_output(g.FindOp("matmul"))).bytes, 3 * 2 * 4 * 6 * 4);
  EXPECT_DOUBLE_EQ(g.flops(g.FindOp("einsum")), 2.0 * 2 * 3 * 4 * 5);
  EXPECT_DOUBLE_EQ(r.macs, 70 + 720 + 120);
}

TEST(OnnxCosts, ElementwisePoolingReductionsAndShapeOps) {
  onnx::ModelProto m = NewModel();
  AddInput(m, "x", {"batch", 4, 6, 6});
  AddNode(m, "Sigmoid", {"x"}, {"s"}, "sigmoid");
  onnx::NodeProto& pool = AddNode(m, "MaxPool", {"s"}, {"p"}, "pool");
  SetInts(pool, "kernel_shape", {3, 3});
  SetInts(pool, "strides", {3, 3});
  AddNode(m, "GlobalAveragePool", {"s"}, {"gap"}, "gap");
  AddInt64s(m, "axes", {1});
  AddNode(m, "ReduceSum", {"s", "axes"}, {"sum"}, "reduce");
  AddInt64s(m, "shape", {0, -1});
  AddNode(m, "Reshape", {"s", "shape"}, {"flat"}, "reshape");
  AddNode(m, "Shape", {"flat"}, {"shape_of"}, "shape");
  AddNode(m, "Softmax", {"flat"}, {"soft"}, "softmax");
  OnnxImportOptions options;
  options.batch_size = 2;
  ASSERT_IMPORTS(r, m, options);
  const Graph& g = r.problem.graph;
  const double n = 2 * 4 * 6 * 6;
  EXPECT_DOUBLE_EQ(g.flops(g.FindOp("sigmoid")), 4 * n);
  EXPECT_DOUBLE_EQ(g.bytes_accessed(g.FindOp("sigmoid")), 2 * 4 * n);
  EXPECT_DOUBLE_EQ(g.flops(g.FindOp("pool")), 2 * 4 * 2 * 2 * 9.0);
  EXPECT_DOUBLE_EQ(g.flops(g.FindOp("gap")), n);
  EXPECT_DOUBLE_EQ(g.flops(g.FindOp("reduce")), n);
  EXPECT_DOUBLE_EQ(g.flops(g.FindOp("reshape")), 0);
  EXPECT_DOUBLE_EQ(g.bytes_accessed(g.FindOp("reshape")), 4 * n);  // the output only: a view
  EXPECT_EQ(g.tensor(g.first_output(g.FindOp("reshape"))).bytes, 4 * n);
  EXPECT_DOUBLE_EQ(g.flops(g.FindOp("shape")), 0);
  EXPECT_EQ(g.tensor(g.first_output(g.FindOp("shape"))).bytes, 2 * 8);  // two int64s
  EXPECT_DOUBLE_EQ(g.flops(g.FindOp("softmax")), 5 * n);
  EXPECT_THAT(r.warnings, ::testing::IsEmpty());
}

TEST(OnnxCosts, RecurrentCostPerStep) {
  onnx::ModelProto m = NewModel();
  AddInput(m, "x", {"seq", "batch", 8});
  AddInput(m, "w", {1, 4 * 16, 8});
  AddInput(m, "r", {1, 4 * 16, 16});
  SetInt(AddNode(m, "LSTM", {"x", "w", "r"}, {"y", "y_h", "y_c"}, "lstm"), "hidden_size", 16);
  OnnxImportOptions options;
  options.batch_size = 3;
  options.sequence_length = 5;
  ASSERT_IMPORTS(r, m, options);
  const Graph& g = r.problem.graph;
  OpId lstm = g.FindOp("lstm");
  EXPECT_DOUBLE_EQ(r.macs, 5 * 3 * 4 * 16 * (8 + 16.0));
  EXPECT_DOUBLE_EQ(g.flops(lstm), 5 * 3 * (2 * 4 * 16 * (8 + 16.0) + 36 * 16));
  EXPECT_EQ(g.param_bytes(lstm), (4 * 16 * 8 + 4 * 16 * 16) * 4);  // static inputs beside a dynamic one
  EXPECT_EQ(g.num_outputs(lstm), 3);
  EXPECT_EQ(g.tensor(g.first_output(lstm)).bytes, 5 * 1 * 3 * 16 * 4);
}

TEST(OnnxCosts, ElementTypesSetTensorBytes) {
  onnx::ModelProto m = NewModel();
  AddInput(m, "h", {"batch", 10}, onnx::TensorProto::FLOAT16);
  AddNode(m, "Relu", {"h"}, {"r"}, "half");
  AddInput(m, "i", {"batch", 10}, onnx::TensorProto::INT64);
  AddNode(m, "Neg", {"i"}, {"n"}, "long");
  AddInput(m, "b", {"batch", 10}, onnx::TensorProto::BFLOAT16);
  AddNode(m, "Identity", {"b"}, {"bf"}, "brain");
  ASSERT_IMPORTS(r, m);
  const Graph& g = r.problem.graph;
  EXPECT_EQ(g.tensor(g.first_output(g.FindOp("half"))).bytes, 20);
  EXPECT_EQ(g.tensor(g.first_output(g.FindOp("long"))).bytes, 80);
  EXPECT_EQ(g.tensor(g.first_output(g.FindOp("brain"))).bytes, 20);
}

TEST(OnnxCosts, UnknownOpsGetTheDefaultCostAndAWarning) {
  onnx::ModelProto m = NewModel();
  onnx::OperatorSetIdProto* custom = m.add_opset_import();
  custom->set_domain("com.example");
  custom->set_version(1);
  AddInput(m, "x", {"batch", 8});
  std::string previous = "x";
  for (int i = 0; i < 3; ++i) {
    std::string out = "foo" + std::to_string(i);
    AddNode(m, "Foo", {previous}, {out}).set_domain("com.example");
    // Declared shapes stand in for the inference a custom op has no schema for.
    onnx::ValueInfoProto* info = m.mutable_graph()->add_value_info();
    info->set_name(out);
    info->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
    info->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_param("batch");
    info->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(8);
    previous = out;
  }
  AddNode(m, "Shrink", {previous}, {"shrunk"}, "shrink");
  OnnxImportOptions options;
  options.batch_size = 4;
  ASSERT_IMPORTS(r, m, options);
  EXPECT_THAT(r.warnings, ElementsAre(HasSubstr("1 node of op type Shrink uses the default cost"),
                                      HasSubstr("3 nodes of op type com.example.Foo use the default cost")));
  const Graph& g = r.problem.graph;
  OpId foo = g.FindOp("Foo_0");
  ASSERT_NE(foo, kNone);
  EXPECT_DOUBLE_EQ(g.flops(foo), 32);
  EXPECT_DOUBLE_EQ(g.bytes_accessed(foo), 2 * 32 * 4);
  EXPECT_DOUBLE_EQ(g.flops(g.FindOp("shrink")), 4 * 8);

  // Without declared shapes, the custom op's output cannot be sized.
  m.mutable_graph()->clear_value_info();
  absl::StatusOr<OnnxImportResult> bad = ImportModel(m, options);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("tensor 'foo0' (output 0 of node #0 (Foo))"));
  options.allow_unresolved_dims = true;
  ASSERT_IMPORTS(lenient, m, options);
  EXPECT_THAT(lenient.warnings, ::testing::Contains(HasSubstr("unknown dimensions count as 1")));
}

TEST(OnnxCosts, SharedWeightCountsOnceOnItsFirstReader) {
  onnx::ModelProto m = NewModel();
  AddInput(m, "x", {"batch", 16});
  AddInitializer(m, "w", {16, 16});
  AddNode(m, "MatMul", {"x", "w"}, {"h1"}, "first");
  AddNode(m, "MatMul", {"h1", "w"}, {"h2"}, "second");
  AddNode(m, "Add", {"h2", "h2"}, {"twice"}, "add");  // reads one tensor twice: one edge
  ASSERT_IMPORTS(r, m);
  const Graph& g = r.problem.graph;
  EXPECT_EQ(g.param_bytes(g.FindOp("first")), 16 * 16 * 4);
  EXPECT_EQ(g.param_bytes(g.FindOp("second")), 0);
  EXPECT_FALSE(g.shared_weights(g.FindOp("first")));
  EXPECT_TRUE(g.shared_weights(g.FindOp("second")));  // the weights' gradient runs through it too
  EXPECT_EQ(g.total_param_bytes(), 16 * 16 * 4);
  EXPECT_EQ(g.in_degree(g.FindOp("add")), 1);
  EXPECT_EQ(g.num_edges(), 2);
}

TEST(OnnxCosts, WeightInputRules) {
  // Fully static and no initializers: an input is a weight when only parameter slots read it.
  onnx::ModelProto m = NewModel();
  AddInput(m, "x", {1, 3, 4, 4});
  AddInput(m, "w", {2, 3, 1, 1});
  AddInput(m, "table", {100, 4});
  AddInput(m, "ids", {1, 5}, onnx::TensorProto::INT64);
  AddNode(m, "Conv", {"x", "w"}, {"y"}, "conv");
  AddNode(m, "Gather", {"table", "ids"}, {"emb"}, "embed");
  ASSERT_IMPORTS(r, m);
  const Graph& g = r.problem.graph;
  EXPECT_EQ(g.param_bytes(g.FindOp("conv")), 2 * 3 * 4);
  EXPECT_EQ(g.param_bytes(g.FindOp("embed")), 100 * 4 * 4);
  EXPECT_DOUBLE_EQ(g.bytes_accessed(g.FindOp("embed")), 5 * 8 + 2 * 5 * 4 * 4);  // the picked rows only

  // The caller's count of data inputs overrides: here only x is data.
  OnnxImportOptions options;
  options.num_data_inputs = 1;
  ASSERT_IMPORTS(counted, m, options);
  EXPECT_EQ(counted.problem.graph.total_param_bytes(), (2 * 3 + 100 * 4) * 4 + 5 * 8);
  options.num_data_inputs = 9;
  EXPECT_THAT(std::string(ImportModel(m, options).status().message()), HasSubstr("num_data_inputs is 9"));
}

TEST(OnnxCosts, NamesAreUniqueAndGenerated) {
  onnx::ModelProto m = NewModel();
  AddInput(m, "x", {"batch", 4});
  AddNode(m, "Relu", {"x"}, {"a"}, "same");
  AddNode(m, "Relu", {"a"}, {"b"}, "same");
  AddNode(m, "Relu", {"b"}, {"c"}, "");
  ASSERT_IMPORTS(r, m);
  const Graph& g = r.problem.graph;
  EXPECT_EQ(g.name(0), "same");
  EXPECT_EQ(g.name(1), "Relu_1");
  EXPECT_EQ(g.name(2), "Relu_2");
  EXPECT_EQ(g.op_type(2), "Relu");
}

TEST(OnnxCosts, SymbolicDimensionsBindByRuleOrByName) {
  onnx::ModelProto m = NewModel();
  AddInput(m, "x", {Dim(), "seq_len", "height"});
  AddNode(m, "Relu", {"x"}, {"y"}, "relu");
  absl::StatusOr<OnnxImportResult> unbound = ImportModel(m);
  ASSERT_FALSE(unbound.ok());
  EXPECT_THAT(std::string(unbound.status().message()), HasSubstr("graph input 'x' dimension 2 is the symbol 'height'"));
  OnnxImportOptions options;
  options.batch_size = 3;
  options.sequence_length = 7;
  options.dims["height"] = 5;
  ASSERT_IMPORTS(r, m, options);
  EXPECT_EQ(r.problem.graph.tensor(0).bytes, 3 * 7 * 5 * 4);
  options.dims["seq_len"] = 2;  // the map wins over the rule
  ASSERT_IMPORTS(named, m, options);
  EXPECT_EQ(named.problem.graph.tensor(0).bytes, 3 * 2 * 5 * 4);
}

TEST(OnnxCosts, ShapeComputationsAreEvaluated) {
  // x [batch, seq, 8] -> Reshape to [batch, seq, 2, seq_dim / ...] with the target computed from Shape, as
  // exporters write multi-head attention: heads = 2, head size = 8 / 2.
  onnx::ModelProto m = NewModel();
  AddInput(m, "x", {"batch", "seq", 8});
  AddNode(m, "Shape", {"x"}, {"shape"}, "shape");
  AddInt64s(m, "i0", {0});
  AddInt64s(m, "i1", {1});
  AddInt64s(m, "i2", {2});
  AddNode(m, "Gather", {"shape", "i0"}, {"b"}, "gather_b");
  AddNode(m, "Gather", {"shape", "i1"}, {"s"}, "gather_s");
  AddNode(m, "Gather", {"shape", "i2"}, {"d"}, "gather_d");
  AddInt64s(m, "heads", {2});
  AddNode(m, "Div", {"d", "heads"}, {"head_size"}, "div");
  SetInt(AddNode(m, "Concat", {"b", "s", "heads", "head_size"}, {"target"}, "concat"), "axis", 0);
  AddNode(m, "Reshape", {"x", "target"}, {"split"}, "reshape");
  SetInts(AddNode(m, "Transpose", {"split"}, {"t"}, "transpose"), "perm", {0, 2, 1, 3});
  OnnxImportOptions options;
  options.batch_size = 2;
  options.sequence_length = 3;
  ASSERT_IMPORTS(r, m, options);
  const Graph& g = r.problem.graph;
  EXPECT_EQ(g.tensor(g.first_output(g.FindOp("reshape"))).bytes, 2 * 3 * 8 * 4);
  EXPECT_EQ(g.tensor(g.first_output(g.FindOp("transpose"))).bytes, 2 * 3 * 8 * 4);
}

TEST(OnnxCosts, ShapeArithmeticIsImportedAsConstants) {
  // x [batch, 8] split in two halves as exporters write torch.chunk: the half computed from Shape with Gather,
  // Add, Div and Mul on int64 scalars, then two Slices of the activation.
  onnx::ModelProto m = NewModel();
  AddInput(m, "x", {"batch", 8});
  AddNode(m, "Shape", {"x"}, {"shape"}, "shape");
  AddInt64s(m, "axis", {1});
  AddInt64s(m, "one", {1});
  AddInt64s(m, "two", {2});
  AddInt64s(m, "zero", {0});
  AddNode(m, "Gather", {"shape", "axis"}, {"width"}, "gather");
  AddNode(m, "Add", {"width", "one"}, {"rounded_up"}, "add");
  AddNode(m, "Div", {"rounded_up", "two"}, {"half"}, "div");
  AddNode(m, "Mul", {"half", "two"}, {"end"}, "mul");
  AddNode(m, "Slice", {"x", "zero", "half", "axis"}, {"left"}, "slice_left");
  AddNode(m, "Slice", {"x", "half", "end", "axis"}, {"right"}, "slice_right");
  AddNode(m, "Add", {"left", "right"}, {"y"}, "sum");
  OnnxImportOptions options;
  options.batch_size = 4;
  ASSERT_IMPORTS(r, m, options);
  const Graph& g = r.problem.graph;
  // Computed when imported: constants of the graph, views in the cost model (no kernel, no launch overhead).
  for (const char* folded : {"shape", "gather", "add", "div", "mul"}) {
    EXPECT_EQ(g.op_type(g.FindOp(folded)), "Constant") << folded;
    EXPECT_EQ(ClassOf(g, g.FindOp(folded)), OpClass::kView) << folded;
  }
  // What reads the activation runs every step.
  EXPECT_EQ(g.op_type(g.FindOp("slice_left")), "Slice");
  EXPECT_EQ(g.op_type(g.FindOp("sum")), "Add");
  EXPECT_EQ(g.tensor(g.first_output(g.FindOp("slice_right"))).bytes, 4 * 4 * 4);
  EXPECT_EQ(ClassOf(g, g.FindOp("sum")), OpClass::kElementwise);
}

}  // namespace
}  // namespace placement
