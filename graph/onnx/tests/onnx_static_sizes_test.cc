// Sizes that static shapes determine are resolved by evaluating the computations exporters write for them;
// sizes the data decides get a stated bound or the user's value; intent-clear type slips are warnings.
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "graph/onnx/onnx_import.h"
#include "graph/onnx/tests/test_models.h"

namespace placement {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using namespace onnx_testing;  // NOLINT: model-building helpers

onnx::AttributeProto& Int64Tensor(onnx::NodeProto& node, const std::string& name, std::vector<int64_t> values) {
  onnx::AttributeProto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::TENSOR);
  a->mutable_t()->set_data_type(onnx::TensorProto::INT64);
  a->mutable_t()->add_dims(static_cast<int64_t>(values.size()));
  for (int64_t v : values) a->mutable_t()->add_int64_data(v);
  return *a;
}

// The pads of a Swin window partition as torch exports them: pads [0, 0, 0, 3] for the last two axes are
// written as ConstantOfShape -> Concat -> Reshape [-1, 2] -> Slice with step -1 -> Transpose -> Reshape [-1]
// -> Cast, turning torch's (last axis first, begin/end pairs) into ONNX's (begins, then ends) order.
TEST(OnnxStaticSizes, PadsComputedFromShapesAreFolded) {
  onnx::ModelProto m = NewModel(14);
  AddInput(m, "x", {1, 5, 6});
  AddInt64s(m, "four", {4});
  AddInt64s(m, "torch_pads", {0, 3, 0, 0});  // last axis (0, 3), then the one before (0, 0)
  AddInt64s(m, "pairs", {-1, 2});
  AddInt64s(m, "flat", {-1});
  AddInt64s(m, "start", {-1});
  AddInt64s(m, "end", {-9223372036854775807LL - 1});
  AddInt64s(m, "axis0", {0});
  AddInt64s(m, "step", {-1});
  Int64Tensor(AddNode(m, "ConstantOfShape", {"four"}, {"zeros"}, "zeros"), "value", {0});
  SetInt(AddNode(m, "Concat", {"torch_pads", "zeros"}, {"all"}, "concat"), "axis", 0);  // 8 values, 4 axes
  AddNode(m, "Reshape", {"all", "pairs"}, {"by_axis"}, "by_axis");
  AddNode(m, "Slice", {"by_axis", "start", "end", "axis0", "step"}, {"reversed"}, "reverse");
  SetInts(AddNode(m, "Transpose", {"reversed"}, {"begins_ends"}, "transpose"), "perm", {1, 0});
  AddNode(m, "Reshape", {"begins_ends", "flat"}, {"onnx_pads"}, "onnx_pads");
  SetInt(AddNode(m, "Cast", {"onnx_pads"}, {"pads"}, "cast"), "to", onnx::TensorProto::INT64);
  // Only 3 axes: the leading zeros of the 4-axis form are sliced away as the exporter does.
  AddInt64s(m, "from", {1});
  AddInt64s(m, "to", {4});
  AddInt64s(m, "from2", {5});
  AddInt64s(m, "to2", {8});
  AddNode(m, "Slice", {"pads", "from", "to"}, {"begins"}, "begins");
  AddNode(m, "Slice", {"pads", "from2", "to2"}, {"ends"}, "ends");
  SetInt(AddNode(m, "Concat", {"begins", "ends"}, {"pads3"}, "pads3"), "axis", 0);
  AddNode(m, "Pad", {"x", "pads3"}, {"padded"}, "pad");
  AddOutput(m, "padded");
  OnnxImportOptions options;
  options.num_data_inputs = 1;
  absl::StatusOr<OnnxImportResult> r = Import(m, options);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(OutputBytes(r->problem.graph, "pad"), 1 * 5 * 9 * 4);  // the last axis grows by 3
  EXPECT_THAT(r->warnings, IsEmpty());
}

TEST(OnnxStaticSizes, RangeWhereModTileCumSumAndReductionsFold) {
  onnx::ModelProto m = NewModel(17);
  AddInput(m, "x", {2, 12});
  AddNode(m, "Shape", {"x"}, {"shape"}, "shape");
  AddInt64s(m, "zero", {0});
  AddInt64s(m, "one", {1});
  AddInt64s(m, "five", {5});
  AddNode(m, "Gather", {"shape", "one"}, {"n"}, "n");                               // [12]
  AddNode(m, "Mod", {"n", "five"}, {"rest"}, "rest");                               // [2]
  AddNode(m, "Equal", {"rest", "zero"}, {"divides"}, "divides");                    // [false]
  AddNode(m, "Where", {"divides", "n", "rest"}, {"pick"}, "pick");                  // [2]
  SetInt(AddNode(m, "CumSum", {"shape", "zero"}, {"cum"}, "cum"), "exclusive", 0);  // [2, 14]
  SetInt(AddNode(m, "ReduceMax", {"cum"}, {"top"}, "top"), "keepdims", 1);          // [14]
  AddNode(m, "Tile", {"pick", "top"}, {"tiled"}, "tile");                           // 14 x [2]
  AddNode(m, "Expand", {"x", "shape"}, {"expanded"}, "expand");
  AddNode(m, "ConstantOfShape", {"tiled"}, {"filled"}, "fill");  // rank 14, every axis 2: too big to fold
  AddOutput(m, "filled");
  AddOutput(m, "expanded");
  absl::StatusOr<OnnxImportResult> r = Import(m);
  ASSERT_TRUE(r.ok()) << r.status();
  // 12 mod 5 = 2 is not 0, so Where picks 2; the running sum of [2, 12] tops at 14: 14 axes of 2.
  EXPECT_EQ(OutputBytes(r->problem.graph, "fill"), (int64_t{1} << 14) * 4);
}

TEST(OnnxStaticSizes, DataDependentSizesAreBoundedWithAWarningOrGivenByName) {
  onnx::ModelProto m = NonZeroModel();  // [batch, 100] scores, batch 1
  OnnxImportOptions options;
  absl::StatusOr<OnnxImportResult> r = Import(m, options);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(OutputBytes(r->problem.graph, "nonzero"), 2 * 100 * 8);
  EXPECT_THAT(r->warnings, ElementsAre(HasSubstr("tensor 'hits' dimension 1 depends on the data (NonZero of 100 "
                                                 "elements: at most all of them): assumed 100; set it with --dim "
                                                 "'hits:1=VALUE'")));
  options.dims["hits:1"] = 7;
  r = Import(m, options);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(OutputBytes(r->problem.graph, "nonzero"), 2 * 7 * 8);
  EXPECT_THAT(r->warnings, IsEmpty());
}

TEST(OnnxStaticSizes, NonMaxSuppressionAndTopKTakeTheMostTheyCanKeep) {
  onnx::ModelProto m = NewModel(17);
  AddInput(m, "boxes", {1, 300, 4});
  AddInput(m, "scores", {1, 5, 300});
  AddInput(m, "k", {1}, onnx::TensorProto::INT64);
  AddInt64s(m, "max_out", {20});
  AddNode(m, "NonMaxSuppression", {"boxes", "scores", "max_out"}, {"kept"}, "nms");
  SetInt(AddNode(m, "TopK", {"scores", "k"}, {"values", "indices"}, "topk"), "axis", 2);
  AddOutput(m, "kept");
  AddOutput(m, "values");
  OnnxImportOptions options;
  options.num_data_inputs = 3;
  absl::StatusOr<OnnxImportResult> r = Import(m, options);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(OutputBytes(r->problem.graph, "nms"), 1 * 5 * 20 * 3 * 8);
  EXPECT_EQ(OutputBytes(r->problem.graph, "topk"), 1 * 5 * 300 * 4);
  EXPECT_THAT(r->warnings, Contains(HasSubstr("NonMaxSuppression keeps at most 1 x 5 x 20 boxes")));
}

TEST(OnnxStaticSizes, ElementwiseOpsOverIntegersAreWarnedNotRefused) {
  onnx::ModelProto m = NewModel(17);
  AddInput(m, "x", {"batch", 16}, onnx::TensorProto::INT64);
  AddNode(m, "Sqrt", {"x"}, {"root"}, "sqrt");  // the schema lists floating types only
  AddOutput(m, "root");
  absl::StatusOr<OnnxImportResult> r = Import(m);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(OutputBytes(r->problem.graph, "sqrt"), 16 * 8);
  EXPECT_THAT(r->warnings, ElementsAre(HasSubstr("1 node of op type Sqrt read input types the schema does not list; "
                                                 "imported as written (first: 'sqrt' (Sqrt)")));
}

TEST(OnnxStaticSizes, ABatchSizeThatBindsNothingIsSaid) {
  onnx::ModelProto m = NewModel(17);
  AddInput(m, "x", {1, 16});
  AddNode(m, "Relu", {"x"}, {"y"}, "relu");
  AddOutput(m, "y");
  OnnxImportOptions options;
  options.batch_size = 8;
  options.sequence_length = 64;
  absl::StatusOr<OnnxImportResult> r = Import(m, options);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(r->warnings, ElementsAre(HasSubstr("batch size 8 binds no dimension"),
                                       HasSubstr("sequence length 64 binds no dimension")));
  EXPECT_THAT(Import(m)->warnings, IsEmpty());
}

}  // namespace
}  // namespace placement
