// Scaled-dot-product attention recognized on import (graph/onnx/attention_fusion.h): the exporters' spelling of
// torch's fused attention becomes the one operator PyTorch runs, an attention a model writes out stays as written,
// and both exports of BERT-base (../shared/bench/gpu_h100) import the same attentions.
#include <algorithm>
#include <cstdint>
#include <map>
#include <string>

#include <gtest/gtest.h>

#include "graph/onnx/onnx_import.h"
#include "graph/onnx/tests/gpu_h100_exports.h"
#include "graph/onnx/tests/test_models.h"
#include "graph/saved_tensors.h"

namespace placement {
namespace {

using namespace onnx_testing;  // NOLINT: model-building helpers

// Two sequences of 256 tokens, 4 heads of 8: the scores (2 x 4 x 256 x 256 floats, 2 MiB) are 32 times any
// activation of the layer, so whether a graph holds them is plain in its tensors.
constexpr int64_t kBatch = 2, kSeq = 256, kHeads = 4, kHeadDim = 8, kWidth = kHeads * kHeadDim;
constexpr int64_t kScoreBytes = kBatch * kHeads * kSeq * kSeq * 4;

struct Spelling {
  bool scale_both = true;  // torch's SDPA export: q and k^T each times sqrt(scale)
  bool nan_guard = true;   // Where(IsNaN(p), 0, p), as torch 2.x writes it after the Softmax
  bool dropout = false;
};

// x [batch, seq, width] -> one self-attention with an additive mask -> output projection.
onnx::ModelProto AttentionModel(const Spelling& s) {
  onnx::ModelProto model = NewModel(14);
  AddInput(model, "x", {kBatch, kSeq, kWidth});
  AddInput(model, "mask", {kBatch, 1, kSeq, kSeq});
  for (const char* w : {"wq", "wk", "wv", "wo"}) AddInitializer(model, w, {kWidth, kWidth});
  AddInt64s(model, "heads_shape", {kBatch, kSeq, kHeads, kHeadDim});
  AddInt64s(model, "width_shape", {kBatch, kSeq, kWidth});
  AddInitializer(model, "sqrt_scale", {});
  AddInitializer(model, "zero", {});
  const std::pair<const char*, std::vector<int64_t>> projections[] = {
      {"q", {0, 2, 1, 3}}, {"k", {0, 2, 3, 1}}, {"v", {0, 2, 1, 3}}};
  for (const auto& [name, perm] : projections) {
    const std::string p(name);
    AddNode(model, "MatMul", {"x", "w" + p}, {p + "_flat"});
    AddNode(model, "Reshape", {p + "_flat", "heads_shape"}, {p + "_split"});
    SetInts(AddNode(model, "Transpose", {p + "_split"}, {p + "_heads"}), "perm", perm);
  }
  AddNode(model, "Mul", {"q_heads", "sqrt_scale"}, {"q_scaled"});
  if (s.scale_both) AddNode(model, "Mul", {"k_heads", "sqrt_scale"}, {"k_scaled"});
  AddNode(model, "MatMul", {"q_scaled", s.scale_both ? "k_scaled" : "k_heads"}, {"scores"});
  AddNode(model, "Add", {"scores", "mask"}, {"masked"});
  SetInt(AddNode(model, "Softmax", {"masked"}, {"p"}), "axis", -1);
  std::string probabilities = "p";
  if (s.nan_guard) {
    AddNode(model, "IsNaN", {"p"}, {"p_nan"});
    AddNode(model, "Where", {"p_nan", "zero", "p"}, {"p_guarded"});
    probabilities = "p_guarded";
  }
  if (s.dropout) {
    AddNode(model, "Dropout", {probabilities}, {"p_dropped"});
    probabilities = "p_dropped";
  }
  AddNode(model, "MatMul", {probabilities, "v_heads"}, {"attended"}, "attention_output");
  SetInts(AddNode(model, "Transpose", {"attended"}, {"attended_t"}), "perm", {0, 2, 1, 3});
  AddNode(model, "Reshape", {"attended_t", "width_shape"}, {"merged"});
  AddNode(model, "MatMul", {"merged", "wo"}, {"y"});
  AddOutput(model, "y");
  return model;
}

std::map<std::string, int> OpTypeCounts(const Graph& g) {
  std::map<std::string, int> counts;
  for (OpId u = 0; u < g.num_ops(); ++u) ++counts[std::string(g.op_type(u))];
  return counts;
}

int64_t LargestTensor(const Graph& g) {
  int64_t largest = 0;
  for (TensorId t = 0; t < g.num_tensors(); ++t) largest = std::max(largest, g.tensor(t).bytes);
  return largest;
}

Graph Imported(const onnx::ModelProto& model) {
  absl::StatusOr<OnnxImportResult> result = Import(model);
  EXPECT_TRUE(result.ok()) << result.status();
  return result.ok() ? std::move(result->problem.graph) : Graph();
}

TEST(OnnxAttentionFusion, TorchsExportedScaledDotProductAttentionIsOneOperator) {
  for (const Spelling& spelling : {Spelling{}, Spelling{.nan_guard = false}, Spelling{.dropout = true}}) {
    SCOPED_TRACE(::testing::Message() << "nan guard " << spelling.nan_guard << ", dropout " << spelling.dropout);
    const Graph g = Imported(AttentionModel(spelling));
    std::map<std::string, int> types = OpTypeCounts(g);
    EXPECT_EQ(types["ScaledDotProductAttention"], 1);
    for (const char* gone : {"Softmax", "IsNaN", "Where", "Dropout", "Mul", "Add"}) EXPECT_EQ(types[gone], 0) << gone;
    EXPECT_EQ(types["MatMul"], 4);  // the four projections
    const OpId attention = g.FindOp("attention_output");
    ASSERT_NE(attention, kNone) << "the fused operator keeps the name of the export's last MatMul";
    EXPECT_EQ(g.op_type(attention), "ScaledDotProductAttention");
    const double scores = static_cast<double>(kBatch * kHeads * kSeq * kSeq);
    EXPECT_DOUBLE_EQ(g.flops(attention), 2 * scores * (kHeadDim + kHeadDim) + 5 * scores);
    EXPECT_LT(LargestTensor(g), kScoreBytes / 16) << "no tensor holds the scores or the probabilities";
  }
}

TEST(OnnxAttentionFusion, AnAttentionWrittenOutInTheForwardStaysAsWritten) {
  const Graph g = Imported(AttentionModel(Spelling{.scale_both = false}));
  std::map<std::string, int> types = OpTypeCounts(g);
  EXPECT_EQ(types["ScaledDotProductAttention"], 0);
  EXPECT_EQ(types["Softmax"], 1);
  EXPECT_EQ(types["MatMul"], 6);
  EXPECT_EQ(LargestTensor(g), kScoreBytes);
}

TEST(OnnxAttentionFusion, TrainingKeepsQKVAndTheOutputNotTheProbabilities) {
  const Graph fused_graph = Imported(AttentionModel(Spelling{.dropout = true}));
  const Graph written_out = Imported(AttentionModel(Spelling{.scale_both = false, .dropout = true}));
  const int64_t activation = kBatch * kSeq * kWidth * 4;
  // q, k^T and v (the Transposes' outputs) and the attention's output, then the merged heads the output
  // projection keeps: five activations of the layer.
  EXPECT_EQ(PlanSavedTensors(fused_graph).TotalBytes(fused_graph), 5 * activation);
  // Written out, the probabilities are kept (by the MatMul with v), with dropout's mask.
  EXPECT_GE(PlanSavedTensors(written_out).TotalBytes(written_out), kScoreBytes);
}

TEST(OnnxAttentionFusion, BothExportsOfBertBaseRunTwelveFusedAttentions) {
  SKIP_WITHOUT_GPU_H100_EXPORTS();
  GpuH100Exports exports;
  double total_flops[2] = {0, 0};
  int k = 0;
  for (const char* file : {"bert_base_legacy.onnx", "bert_base_dynamo.onnx"}) {
    SCOPED_TRACE(file);
    absl::StatusOr<OnnxImportResult> result = ImportOnnxFile(exports.Path(file).string(), {});
    ASSERT_TRUE(result.ok()) << result.status();
    const Graph& g = result->problem.graph;
    std::map<std::string, int> types = OpTypeCounts(g);
    EXPECT_EQ(types["ScaledDotProductAttention"], 12);
    EXPECT_EQ(types["Softmax"], 0);
    for (OpId u = 0; u < g.num_ops(); ++u) total_flops[k] += g.flops(u);
    ++k;
  }
  EXPECT_NEAR(total_flops[0] / total_flops[1], 1.0, 0.01);
}

TEST(OnnxAttentionFusion, SwinsWindowedAttentionStaysAsWritten) {
  SKIP_WITHOUT_GPU_H100_EXPORTS();
  GpuH100Exports exports;
  for (const char* file : {"swin_s_legacy.onnx", "swin_s_dynamo.onnx"}) {
    SCOPED_TRACE(file);
    absl::StatusOr<OnnxImportResult> result = ImportOnnxFile(exports.Path(file).string(), {});
    ASSERT_TRUE(result.ok()) << result.status();
    std::map<std::string, int> types = OpTypeCounts(result->problem.graph);
    EXPECT_EQ(types["ScaledDotProductAttention"], 0);
    EXPECT_EQ(types["Softmax"], 24);
  }
}

}  // namespace
}  // namespace placement
