#include "graph/transformer_graph.h"

#include <fstream>
#include <sstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "graph/fused_patterns.h"
#include "graph/module_map.h"
#include "graph/op_class.h"
#include "graph/training.h"

namespace placement {
namespace {

using ::testing::HasSubstr;

TransformerSpec Spec(const std::string& name) {
  std::ifstream in(std::string(PLACEMENT_SOURCE_DIR) + "/graph/tests/data/hf_configs/" + name + ".json");
  std::stringstream text;
  text << in.rdbuf();
  absl::StatusOr<TransformerSpec> spec = ParseHfConfig(text.str(), name);
  EXPECT_TRUE(spec.ok()) << spec.status();
  return spec.ok() ? *spec : TransformerSpec{};
}

Graph Built(const TransformerSpec& spec, int64_t batch, int64_t seq) {
  absl::StatusOr<Problem> problem = BuildTransformerGraph(spec, batch, seq);
  EXPECT_TRUE(problem.ok()) << problem.status();
  return problem.ok() ? std::move(problem->graph) : Graph{};
}

double TotalFlops(const Graph& g) {
  double total = 0;
  for (OpId u = 0; u < g.num_ops(); ++u) total += g.flops(u);
  return total;
}

OpId Find(const Graph& g, absl::string_view name) {
  const OpId op = g.FindOp(name);
  EXPECT_NE(op, kNone) << name;
  return op;
}

// Kaplan et al.'s forward count: 2 FLOPs per non-embedding parameter and token, the attention products
// 2 x 2 x layers x seq^2 x width per sequence, and the output layer 2 x tokens x width x vocab.
TEST(TransformerGraph, Gpt2ForwardFlopsMatchTheAnalyticalCount) {
  const TransformerSpec gpt2 = Spec("gpt2");
  const Graph g = Built(gpt2, 1, 1024);
  const double tokens = 1024, d = 768, seq = 1024;
  const double embedding = (gpt2.vocab + gpt2.max_positions) * d;
  const double analytical = 2 * (static_cast<double>(ParameterCount(gpt2)) - embedding) * tokens +
                            4 * gpt2.layers * seq * seq * d + 2 * tokens * d * gpt2.vocab;
  EXPECT_NEAR(TotalFlops(g) / analytical, 1.0, 0.01) << TotalFlops(g) << " vs " << analytical;
}

TEST(TransformerGraph, ParameterBytesAreTheParameterCountInFloat32) {
  for (const char* name : {"gpt2", "pythia-160m", "llama-2-7b-hf", "tinyllama-1.1b", "mistral-7b-v0.1",
                           "mixtral-8x7b-v0.1", "qwen2-0.5b", "bert-base-uncased", "t5-small", "t5-v1_1-small"}) {
    SCOPED_TRACE(name);
    const TransformerSpec spec = Spec(name);
    EXPECT_EQ(Built(spec, 2, 16).total_param_bytes(), 4 * ParameterCount(spec));
  }
}

TEST(TransformerGraph, OperatorsCarryTheModulePathsOfTheTransformersClass) {
  const Graph gpt2 = Built(Spec("gpt2"), 1, 8);
  EXPECT_EQ(ModuleScopeOf(gpt2.name(Find(gpt2, "/transformer/h.3/attn/c_attn/Gemm"))), "transformer.h.3.attn.c_attn");
  Find(gpt2, "/transformer/h.3/attn/Softmax");
  Find(gpt2, "/transformer/h.3/attn/MatMul_1");  // attention x V, after the scores
  Find(gpt2, "/transformer/h.11/mlp/act/Gelu");
  Find(gpt2, "/lm_head/MatMul");
  const Graph llama = Built(Spec("tinyllama-1.1b"), 1, 8);
  EXPECT_EQ(ModuleScopeOf(llama.name(Find(llama, "/model/layers.3/self_attn/q_proj/MatMul"))),
            "model.layers.3.self_attn.q_proj");
  Find(llama, "/model/layers.21/post_attention_layernorm/SimplifiedLayerNormalization");
  Find(llama, "/model/norm/SimplifiedLayerNormalization");
  const Graph bert = Built(Spec("bert-base-uncased"), 1, 8);
  Find(bert, "/bert/encoder/layer.0/attention/self/query/Gemm");
  Find(bert, "/cls/predictions/decoder/Gemm");
}

TEST(TransformerGraph, GroupedQueryAttentionProjectsSmallerKeysAndValues) {
  const TransformerSpec tiny = Spec("tinyllama-1.1b");  // 32 query heads, 4 key/value heads of 64
  const Graph g = Built(tiny, 2, 128);
  const double tokens = 256;
  const OpId q = Find(g, "/model/layers.0/self_attn/q_proj/MatMul");
  const OpId k = Find(g, "/model/layers.0/self_attn/k_proj/MatMul");
  EXPECT_EQ(g.tensor(g.first_output(q)).bytes, 4 * 256 * 2048);
  EXPECT_EQ(g.tensor(g.first_output(k)).bytes, 4 * 256 * 256);
  EXPECT_EQ(g.param_bytes(k), 4 * 2048 * 256);
  EXPECT_DOUBLE_EQ(g.flops(k), 2 * tokens * 2048 * 256);
  // The scores follow the query heads: batch x heads x seq^2 x head_dim x 2, causal or not.
  EXPECT_DOUBLE_EQ(g.flops(Find(g, "/model/layers.0/self_attn/MatMul")), 2.0 * 2 * 32 * 128 * 128 * 64);
  EXPECT_EQ(g.tensor(g.first_output(Find(g, "/model/layers.0/self_attn/Softmax"))).bytes, 4 * 2 * 32 * 128 * 128);
}

TEST(TransformerGraph, OperatorsAreClassedAndFusedAsTheImporterClassesThem) {
  const Graph g = Built(Spec("tinyllama-1.1b"), 4, 256);
  EXPECT_EQ(ClassOf(g, Find(g, "/model/layers.0/mlp/down_proj/MatMul")), OpClass::kGemm);
  EXPECT_EQ(ClassOf(g, Find(g, "/model/layers.0/self_attn/Softmax")), OpClass::kNormalization);
  EXPECT_EQ(ClassOf(g, Find(g, "/model/layers.0/input_layernorm/SimplifiedLayerNormalization")),
            OpClass::kNormalization);
  EXPECT_EQ(ClassOf(g, Find(g, "/model/embed_tokens/Gather")), OpClass::kDataMovement);
  // SiLU as Sigmoid and Mul: one fused kernel per layer for the cost model.
  const FusedPatterns fused = FindFusedPatterns(g);
  EXPECT_EQ(fused.size(), 22);
  for (int32_t i = 0; i < fused.size(); ++i) EXPECT_EQ(fused.kind[i], FusedKind::kSilu);
}

TEST(TransformerGraph, MixtralRoutesTokensThroughARouterAndEveryExpert) {
  const TransformerSpec mixtral = Spec("mixtral-8x7b-v0.1");
  const Graph g = Built(mixtral, 1, 64);
  const double tokens = 64, d = 4096, ffn = 14336;
  const OpId router = Find(g, "/model/layers.31/block_sparse_moe/gate/MatMul");
  EXPECT_EQ(g.param_bytes(router), 4 * 4096 * 8);
  EXPECT_DOUBLE_EQ(g.flops(router), 2 * tokens * d * 8);
  // Each token through two of the eight experts: the experts' projections together do tokens x 2 of the work.
  double expert_flops = 0;
  for (int e = 0; e < 8; ++e) {
    for (const char* w : {"w1", "w2", "w3"}) {
      expert_flops +=
          g.flops(Find(g, "/model/layers.0/block_sparse_moe/experts." + std::to_string(e) + "/" + w + "/MatMul"));
    }
  }
  EXPECT_NEAR(expert_flops / (3 * 2 * tokens * 2 * d * ffn), 1.0, 1e-9);
  const OpId sum = Find(g, "/model/layers.0/block_sparse_moe/Sum");
  EXPECT_EQ(g.in_degree(sum), 8);
}

TEST(TransformerGraph, T5DecoderAttendsToTheEncoderOutput) {
  const Graph g = Built(Spec("t5-small"), 2, 32);
  const OpId encoded = Find(g, "/encoder/final_layer_norm/SimplifiedLayerNormalization");
  int32_t readers = 0;
  for (const Edge& e : g.out_edges(encoded)) {
    const std::string reader(g.name(e.dst));
    EXPECT_THAT(reader, HasSubstr("/EncDecAttention/"));
    ++readers;
  }
  EXPECT_EQ(readers, 2 * 6);  // k and v of each decoder block
  // The relative position bias is looked up once per stack and added to every block's scores.
  const OpId bias = Find(g, "/encoder/block.0/layer.0/SelfAttention/relative_attention_bias/Gather");
  EXPECT_EQ(g.out_edges(bias).size(), 6u);
  EXPECT_EQ(g.param_bytes(bias), 4 * 32 * 8);
  Find(g, "/decoder/block.5/layer.2/DenseReluDense/act/Relu");
}

TEST(TransformerGraph, ATrainingStepExpandsFromTheForwardGraph) {
  const Graph forward = Built(Spec("gpt2"), 2, 128);
  absl::StatusOr<Graph> step = BuildTrainingGraph(forward);
  ASSERT_TRUE(step.ok()) << step.status();
  EXPECT_TRUE(step->has_backward());
  EXPECT_GT(step->num_ops(), 2 * forward.num_ops());
}

TEST(TransformerGraph, ABadBatchOrSequenceLengthIsRefused) {
  const TransformerSpec gpt2 = Spec("gpt2");
  absl::StatusOr<Problem> problem = BuildTransformerGraph(gpt2, 0, 128);
  EXPECT_EQ(problem.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(problem.status().message(), HasSubstr("batch must be at least 1 (got 0)"));
  problem = BuildTransformerGraph(gpt2, 1, 0);
  EXPECT_THAT(problem.status().message(), HasSubstr("sequence length must be at least 1 (got 0)"));
  problem = BuildTransformerGraph(gpt2, 1, 2048);
  EXPECT_THAT(problem.status().message(), HasSubstr("sequence length 2048 is longer than the 1024 positions"));
  problem = BuildTransformerGraph(Spec("llama-2-7b-hf"), 1 << 20, 1 << 20);
  EXPECT_THAT(problem.status().message(), HasSubstr("past 2^62 bytes"));
  problem = BuildTransformerGraph(TransformerSpec{}, 1, 1);
  EXPECT_THAT(problem.status().message(), HasSubstr("not positive"));
}

}  // namespace
}  // namespace placement
