// The layout pass: which operators work on channels-last data, as eager PyTorch lays it out after a permute.
#include <gtest/gtest.h>

#include "graph/onnx/onnx_import.h"
#include "graph/onnx/tests/test_models.h"
#include "graph/op_class.h"

namespace placement {
namespace {

using namespace onnx_testing;  // NOLINT: model-building helpers

// ConvNeXt's block as torchvision exports it: a 7x7 depthwise convolution, a permute to NHWC for LayerNorm and
// the Linear layers, a permute back, a per-channel scale and the residual add; then the next block's convolution.
onnx::ModelProto ConvNextBlock() {
  onnx::ModelProto m = NewModel(17);
  AddInput(m, "x", {8, 96, 56, 56});
  AddInitializer(m, "stem_w", {96, 96, 1, 1});
  AddNode(m, "Conv", {"x", "stem_w"}, {"c0"}, "stem");
  SetInts(AddNode(m, "Transpose", {"c0"}, {"t0"}, "to_nhwc0"), "perm", {0, 2, 3, 1});
  AddInitializer(m, "ln_scale", {96});
  AddNode(m, "LayerNormalization", {"t0", "ln_scale"}, {"n0"}, "norm0");
  SetInts(AddNode(m, "Transpose", {"n0"}, {"x1"}, "to_nchw0"), "perm", {0, 3, 1, 2});
  AddInitializer(m, "dw_w", {96, 1, 7, 7});
  onnx::NodeProto& dw = AddNode(m, "Conv", {"x1", "dw_w"}, {"d1"}, "dwconv");
  SetInt(dw, "group", 96);
  SetInts(dw, "pads", {3, 3, 3, 3});
  SetInts(AddNode(m, "Transpose", {"d1"}, {"t1"}, "to_nhwc1"), "perm", {0, 2, 3, 1});
  AddNode(m, "LayerNormalization", {"t1", "ln_scale"}, {"n1"}, "norm1");
  AddInitializer(m, "fc_w", {96, 96});
  AddNode(m, "MatMul", {"n1", "fc_w"}, {"f1"}, "linear");
  SetInts(AddNode(m, "Transpose", {"f1"}, {"b1"}, "to_nchw1"), "perm", {0, 3, 1, 2});
  AddInitializer(m, "gamma", {96, 1, 1});
  AddNode(m, "Mul", {"gamma", "b1"}, {"s1"}, "layer_scale");
  AddNode(m, "Add", {"s1", "x1"}, {"x2"}, "residual");
  onnx::NodeProto& next = AddNode(m, "Conv", {"x2", "dw_w"}, {"d2"}, "next_dwconv");
  SetInt(next, "group", 96);
  SetInts(next, "pads", {3, 3, 3, 3});
  AddInt64s(m, "flat", {8, -1});
  AddNode(m, "Reshape", {"d2", "flat"}, {"r2"}, "flatten");
  // The same depthwise convolution on the contiguous input.
  onnx::NodeProto& plain = AddNode(m, "Conv", {"x", "dw_w"}, {"d0"}, "plain_dwconv");
  SetInt(plain, "group", 96);
  SetInts(plain, "pads", {3, 3, 3, 3});
  AddOutput(m, "r2");
  AddOutput(m, "d0");
  return m;
}

TEST(OnnxLayout, APermuteBackToNchwLeavesChannelsLastDataForTheNextLayers) {
  absl::StatusOr<OnnxImportResult> r = Import(ConvNextBlock());
  ASSERT_TRUE(r.ok()) << r.status();
  const Graph& g = r->problem.graph;
  for (const char* name : {"to_nchw0", "dwconv", "to_nchw1", "layer_scale", "residual", "next_dwconv"}) {
    ASSERT_NE(g.FindOp(name), kNone) << name;
    EXPECT_TRUE(g.channels_last(g.FindOp(name))) << name;
  }
  // NCHW input, NHWC tensors (contiguous as their shapes say), a MatMul's and a Reshape's outputs.
  for (const char* name : {"stem", "to_nhwc0", "norm0", "to_nhwc1", "norm1", "linear", "flatten", "plain_dwconv"}) {
    ASSERT_NE(g.FindOp(name), kNone) << name;
    EXPECT_FALSE(g.channels_last(g.FindOp(name))) << name;
  }
  EXPECT_EQ(ClassOf(g, g.FindOp("dwconv")), OpClass::kChannelsLastThinConv);
  EXPECT_EQ(ClassOf(g, g.FindOp("next_dwconv")), OpClass::kChannelsLastThinConv);
  EXPECT_EQ(ClassOf(g, g.FindOp("plain_dwconv")), OpClass::kWideThinConv);
  EXPECT_EQ(ClassOf(g, g.FindOp("stem")), OpClass::kConv);
}

// Other permutes (attention's [0,2,1,3], a transpose of a 3-D tensor) make no channels-last data.
TEST(OnnxLayout, OnlyTheNhwcToNchwPermuteOfAFourDimensionalTensorCounts) {
  onnx::ModelProto m = NewModel(17);
  AddInput(m, "q", {8, 197, 12, 64});
  SetInts(AddNode(m, "Transpose", {"q"}, {"h"}, "heads"), "perm", {0, 2, 1, 3});
  AddNode(m, "Relu", {"h"}, {"a"}, "act");
  AddInput(m, "s", {8, 197, 768});
  SetInts(AddNode(m, "Transpose", {"s"}, {"st"}, "transpose3d"), "perm", {0, 2, 1});
  AddOutput(m, "a");
  AddOutput(m, "st");
  absl::StatusOr<OnnxImportResult> r = Import(m);
  ASSERT_TRUE(r.ok()) << r.status();
  const Graph& g = r->problem.graph;
  for (OpId op = 0; op < g.num_ops(); ++op) EXPECT_FALSE(g.channels_last(op)) << g.name(op);
}

}  // namespace
}  // namespace placement
