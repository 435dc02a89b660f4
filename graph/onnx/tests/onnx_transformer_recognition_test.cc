// Transformer recognition in ONNX exports (graph/onnx/transformer_recognition.h): transformers' BertModel as
// torch 2.11 exported it both ways (../shared/bench/gpu_h100), tiny GPT-2 and Llama models in transformers'
// module names exported by TorchScript (graph/onnx/tests/data, made by scripts/export_hf_style_models.py), and
// models that are no Hugging Face transformer, which import with no transformer rather than an error.
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "graph/onnx/onnx_import.h"
#include "graph/onnx/tests/gpu_h100_exports.h"
#include "graph/onnx/tests/test_models.h"
#include "graph/transformer_spec.h"
#include "tests/support/shared_inputs.h"

namespace placement {
namespace {

namespace fs = std::filesystem;
using namespace onnx_testing;  // NOLINT: model-building helpers

const fs::path kTestData = fs::path(PLACEMENT_SOURCE_DIR) / "graph" / "onnx" / "tests" / "data";
const fs::path kCorpus = fs::path(PLACEMENT_SOURCE_DIR) / "tests" / "data" / "corpus";

std::string Describe(const TransformerSpec& s) {
  return absl::StrCat(s.model_type, " family ", static_cast<int>(s.family), " layers ", s.layers, " hidden ", s.hidden,
                      " heads ", s.heads, "/", s.kv_heads, " head_dim ", s.head_dim, " ffn ", s.ffn, " mlp ",
                      static_cast<int>(s.mlp), " norm ", static_cast<int>(s.norm), " ", s.activation, " vocab ",
                      s.vocab, " positions ", s.max_positions, " token_types ", s.token_types, " tied ",
                      s.tied_embeddings, " biases ", s.attention_bias, s.attention_output_bias, s.mlp_bias);
}

// Every field a config.json sets, so that an export and its config describe the same model.
void ExpectSameSpec(const TransformerSpec& got, const TransformerSpec& want) {
  EXPECT_EQ(Describe(got), Describe(want));
  EXPECT_EQ(got.experts, want.experts);
  EXPECT_EQ(got.encoder_layers, want.encoder_layers);
  EXPECT_EQ(got.parallel_residual, want.parallel_residual);
  EXPECT_EQ(got.relative_attention_buckets, want.relative_attention_buckets);
}

TransformerSpec FromConfig(const std::string& json) {
  absl::StatusOr<TransformerSpec> spec = ParseHfConfig(json, "config.json");
  EXPECT_TRUE(spec.ok()) << spec.status();
  return spec.ok() ? *spec : TransformerSpec{};
}

std::optional<TransformerSpec> Recognized(const fs::path& path, const OnnxImportOptions& options = {}) {
  absl::StatusOr<OnnxImportResult> result = ImportOnnxFile(path.string(), options);
  EXPECT_TRUE(result.ok()) << result.status();
  return result.ok() ? result->transformer : std::nullopt;
}

// BertConfig()'s defaults: what transformers' BertModel(BertConfig()) in that folder was made from.
constexpr char kBertBaseConfig[] = R"({"model_type": "bert", "num_hidden_layers": 12, "hidden_size": 768,
  "num_attention_heads": 12, "intermediate_size": 3072, "vocab_size": 30522, "max_position_embeddings": 512,
  "type_vocab_size": 2, "hidden_act": "gelu"})";

TEST(OnnxTransformerRecognition, BertBaseFromBothExportersIsItsConfig) {
  SKIP_WITHOUT_GPU_H100_EXPORTS();
  GpuH100Exports exports;
  ASSERT_GT(exports.models(), 0);
  std::optional<TransformerSpec> legacy = Recognized(exports.Path("bert_base_legacy.onnx"));
  std::optional<TransformerSpec> dynamo = Recognized(exports.Path("bert_base_dynamo.onnx"));
  ASSERT_TRUE(legacy.has_value());
  ASSERT_TRUE(dynamo.has_value());
  EXPECT_EQ(legacy->model_type, "bert");
  EXPECT_EQ(legacy->family, TransformerFamily::kEncoder);
  EXPECT_EQ(legacy->layers, 12);
  EXPECT_EQ(legacy->hidden, 768);
  EXPECT_EQ(legacy->heads, 12);
  EXPECT_EQ(legacy->ffn, 3072);
  EXPECT_EQ(legacy->vocab, 30522);
  EXPECT_EQ(legacy->max_positions, 512);
  ExpectSameSpec(*legacy, FromConfig(kBertBaseConfig));
  ExpectSameSpec(*dynamo, *legacy);
}

TEST(OnnxTransformerRecognition, VisionExportsAreNoTransformer) {
  SKIP_WITHOUT_GPU_H100_EXPORTS();
  GpuH100Exports exports;
  // swin_s computes windowed self-attention (Softmax over [.., heads, q, k]) but names no transformers family.
  for (const char* file :
       {"swin_s_legacy.onnx", "swin_s_dynamo.onnx", "convnext_base_dynamo.onnx", "efficientnet_v2_s_legacy.onnx"}) {
    SCOPED_TRACE(file);
    std::optional<TransformerSpec> spec = Recognized(exports.Path(file));
    EXPECT_FALSE(spec.has_value()) << Describe(*spec);
  }
}

TEST(OnnxTransformerRecognition, TinyGpt2IsItsConfig) {
  OnnxImportOptions options;
  options.sequence_length = 32;  // its 32 positions hold no longer sequence
  std::optional<TransformerSpec> spec = Recognized(kTestData / "tiny_gpt2.onnx", options);
  ASSERT_TRUE(spec.has_value());
  EXPECT_EQ(spec->model_type, "gpt2");
  EXPECT_EQ(spec->heads, 4);
  EXPECT_EQ(spec->kv_heads, 4);
  EXPECT_EQ(spec->mlp, MlpKind::kPlain);
  EXPECT_EQ(spec->activation, "gelu_new");
  // The exporter folded the tied head into its own transposed copy of wte; its bytes say it is wte's.
  EXPECT_TRUE(spec->tied_embeddings);
  ExpectSameSpec(*spec, FromConfig(R"({"model_type": "gpt2", "n_layer": 2, "n_embd": 64, "n_head": 4,
      "n_inner": 128, "vocab_size": 128, "n_positions": 32})"));
}

TEST(OnnxTransformerRecognition, TinyLlamaIsItsConfigWithGroupedQueryAttention) {
  std::optional<TransformerSpec> spec = Recognized(kTestData / "tiny_llama.onnx");
  ASSERT_TRUE(spec.has_value());
  EXPECT_EQ(spec->model_type, "llama");
  EXPECT_EQ(spec->heads, 4);
  EXPECT_EQ(spec->kv_heads, 2);
  EXPECT_EQ(spec->head_dim, 16);
  EXPECT_EQ(spec->mlp, MlpKind::kGated);
  EXPECT_EQ(spec->norm, NormKind::kRmsNorm);
  EXPECT_FALSE(spec->tied_embeddings);
  ExpectSameSpec(*spec, FromConfig(R"({"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 64,
      "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 96, "vocab_size": 128})"));
}

TEST(OnnxTransformerRecognition, CorpusModelsAreNoTransformer) {
  // transformer_encoder and transformer_decoder are nn.Transformer stacks: attention, but no transformers names.
  for (const auto& entry : fs::directory_iterator(kCorpus)) {
    if (entry.path().extension() != ".onnx") continue;
    SCOPED_TRACE(entry.path().filename().string());
    std::optional<TransformerSpec> spec = Recognized(entry.path());
    EXPECT_FALSE(spec.has_value()) << Describe(*spec);
  }
}

// One Llama layer whose scores fold batch and heads together ([batch * heads, q, k], as some exporters write
// them), the weights named as initializers by the model's own paths, and no head.
onnx::ModelProto OneLayerWithFoldedScores() {
  onnx::ModelProto m = NewModel(17);
  AddInput(m, "ids", {1, 8}, onnx::TensorProto::INT64);
  AddInitializer(m, "model.embed_tokens.weight", {50, 16});
  AddInitializer(m, "model.layers.0.input_layernorm.weight", {16});
  for (const char* w : {"wq", "wk", "wv", "wo"}) AddInitializer(m, w, {16, 16});
  AddInitializer(m, "wgate", {16, 32});
  AddInitializer(m, "wup", {16, 32});
  AddInitializer(m, "wdown", {32, 16});
  AddInt64s(m, "split_heads", {1, 8, 2, 8});
  AddInt64s(m, "fold_heads", {2, 8, 8});
  AddInt64s(m, "merge_heads", {1, 8, 16});
  AddNode(m, "Gather", {"model.embed_tokens.weight", "ids"}, {"x"});
  AddNode(m, "Mul", {"x", "model.layers.0.input_layernorm.weight"}, {"xn"});
  for (const std::string p : {"q", "k", "v"}) {
    AddNode(m, "MatMul", {"xn", "w" + p}, {p});
    AddNode(m, "Reshape", {p, "split_heads"}, {p + "4"});
    SetInts(AddNode(m, "Transpose", {p + "4"}, {p + "t"}), "perm", {0, 2, 1, 3});
    AddNode(m, "Reshape", {p + "t", "fold_heads"}, {p + "3"});
  }
  SetInts(AddNode(m, "Transpose", {"k3"}, {"kT"}), "perm", {0, 2, 1});
  AddNode(m, "MatMul", {"q3", "kT"}, {"scores"});
  AddNode(m, "Softmax", {"scores"}, {"probs"});
  AddNode(m, "MatMul", {"probs", "v3"}, {"a3"});
  AddNode(m, "Reshape", {"a3", "split_heads"}, {"a4"});
  SetInts(AddNode(m, "Transpose", {"a4"}, {"at"}), "perm", {0, 2, 1, 3});
  AddNode(m, "Reshape", {"at", "merge_heads"}, {"a"});
  AddNode(m, "MatMul", {"a", "wo"}, {"o"});
  AddNode(m, "Add", {"x", "o"}, {"h"});
  AddNode(m, "MatMul", {"h", "wgate"}, {"gate"});
  AddNode(m, "Sigmoid", {"gate"}, {"gate_sigmoid"});
  AddNode(m, "Mul", {"gate", "gate_sigmoid"}, {"gate_silu"});
  AddNode(m, "MatMul", {"h", "wup"}, {"up"});
  AddNode(m, "Mul", {"gate_silu", "up"}, {"gated"});
  AddNode(m, "MatMul", {"gated", "wdown"}, {"down"});
  AddNode(m, "Add", {"h", "down"}, {"y"});
  AddOutput(m, "y");
  return m;
}

TEST(OnnxTransformerRecognition, HeadsFromTheReshapeWhenScoresFoldBatchAndHeads) {
  absl::StatusOr<OnnxImportResult> result = Import(OneLayerWithFoldedScores());
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_TRUE(result->transformer.has_value());
  TransformerSpec want = FromConfig(R"({"model_type": "llama", "num_hidden_layers": 1, "hidden_size": 16,
      "num_attention_heads": 2, "intermediate_size": 32, "vocab_size": 50})");
  want.tied_embeddings = true;  // no head: no separate output layer
  ExpectSameSpec(*result->transformer, want);
}

// A BERT's names on a graph that computes no attention: the names alone do not make a transformer.
TEST(OnnxTransformerRecognition, FamilyNamesWithoutAttentionAreNoTransformer) {
  onnx::ModelProto m = NewModel(17);
  AddInput(m, "ids", {"batch", "seq"}, onnx::TensorProto::INT64);
  AddInitializer(m, "bert.embeddings.word_embeddings.weight", {100, 16});
  AddInitializer(m, "bert.embeddings.position_embeddings.weight", {32, 16});
  AddInitializer(m, "bert.encoder.layer.0.intermediate.dense.weight", {16, 64});
  AddNode(m, "Gather", {"bert.embeddings.word_embeddings.weight", "ids"}, {"x"});
  AddNode(m, "MatMul", {"x", "bert.encoder.layer.0.intermediate.dense.weight"}, {"y"});
  AddOutput(m, "y");
  absl::StatusOr<OnnxImportResult> result = Import(m);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_FALSE(result->transformer.has_value());
}

}  // namespace
}  // namespace placement
