#include "graph/transformer_spec.h"

#include <fstream>
#include <sstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace placement {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

// A config.json as published on the Hugging Face Hub, kept under graph/tests/data/hf_configs.
std::string ConfigText(const std::string& name) {
  std::ifstream in(std::string(PLACEMENT_SOURCE_DIR) + "/graph/tests/data/hf_configs/" + name + ".json");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TransformerSpec Parsed(const std::string& name) {
  const std::string text = ConfigText(name);
  EXPECT_FALSE(text.empty()) << name;
  absl::StatusOr<TransformerSpec> spec = ParseHfConfig(text, name + ".json");
  EXPECT_TRUE(spec.ok()) << spec.status();
  return spec.ok() ? *spec : TransformerSpec{};
}

// A published config with one field changed (null: removed).
absl::StatusOr<TransformerSpec> ParsedWith(const std::string& name, const char* key, const nlohmann::json& value) {
  nlohmann::json config = nlohmann::json::parse(ConfigText(name));
  if (value.is_null()) {
    config.erase(key);
  } else {
    config[key] = value;
  }
  return ParseHfConfig(config.dump(), name + ".json");
}

// The counts below are what model.num_parameters() reports for each checkpoint's transformers class.
TEST(TransformerSpec, HfConfig_Gpt2CountsItsTiedHeadOnce) {
  const TransformerSpec gpt2 = Parsed("gpt2");
  EXPECT_EQ(gpt2.model_type, "gpt2");
  EXPECT_EQ(gpt2.family, TransformerFamily::kDecoder);
  EXPECT_EQ(gpt2.layers, 12);
  EXPECT_EQ(gpt2.head_dim, 64);
  EXPECT_EQ(gpt2.ffn, 3072);  // n_inner absent: 4 x n_embd
  EXPECT_EQ(gpt2.max_positions, 1024);
  EXPECT_EQ(gpt2.activation, "gelu_new");
  EXPECT_TRUE(gpt2.tied_embeddings);
  EXPECT_EQ(ParameterCount(gpt2), 124'439'808);
  EXPECT_EQ(ParameterCount(Parsed("gpt2-medium")), 354'823'168);
}

TEST(TransformerSpec, HfConfig_GptNeoXCountsAnUntiedHeadAndNoPositionTable) {
  const TransformerSpec pythia = Parsed("pythia-160m");
  EXPECT_EQ(pythia.max_positions, 0);  // rotary
  EXPECT_FALSE(pythia.tied_embeddings);
  EXPECT_TRUE(pythia.parallel_residual);
  EXPECT_EQ(ParameterCount(pythia), 162'322'944);
}

TEST(TransformerSpec, HfConfig_LlamaCountsGroupedQueryAttention) {
  const TransformerSpec llama = Parsed("llama-2-7b-hf");
  EXPECT_EQ(llama.mlp, MlpKind::kGated);
  EXPECT_EQ(llama.norm, NormKind::kRmsNorm);
  EXPECT_FALSE(llama.attention_bias);
  EXPECT_FALSE(llama.mlp_bias);
  EXPECT_EQ(llama.kv_heads, 32);
  EXPECT_EQ(ParameterCount(llama), 6'738'415'616);
  const TransformerSpec tiny = Parsed("tinyllama-1.1b");
  EXPECT_EQ(tiny.heads, 32);
  EXPECT_EQ(tiny.kv_heads, 4);
  EXPECT_EQ(tiny.head_dim, 64);
  EXPECT_EQ(ParameterCount(tiny), 1'100'048'384);
}

TEST(TransformerSpec, HfConfig_MistralCountsGroupedQueryAttention) {
  const TransformerSpec mistral = Parsed("mistral-7b-v0.1");
  EXPECT_EQ(mistral.kv_heads, 8);
  EXPECT_EQ(ParameterCount(mistral), 7'241'732'096);
}

TEST(TransformerSpec, HfConfig_MixtralCountsEveryExpertAndTheRouters) {
  const TransformerSpec mixtral = Parsed("mixtral-8x7b-v0.1");
  EXPECT_EQ(mixtral.experts, 8);
  EXPECT_EQ(mixtral.experts_per_token, 2);
  EXPECT_EQ(ParameterCount(mixtral), 46'702'792'704);
}

TEST(TransformerSpec, HfConfig_Qwen2CountsItsQkvBiasesAndTiedHead) {
  const TransformerSpec qwen = Parsed("qwen2-0.5b");
  EXPECT_TRUE(qwen.attention_bias);
  EXPECT_FALSE(qwen.attention_output_bias);
  EXPECT_TRUE(qwen.tied_embeddings);
  EXPECT_EQ(ParameterCount(qwen), 494'032'768);
}

TEST(TransformerSpec, HfConfig_BertCountsTheMaskedLanguageModelHead) {
  const TransformerSpec bert = Parsed("bert-base-uncased");
  EXPECT_EQ(bert.family, TransformerFamily::kEncoder);
  EXPECT_EQ(bert.token_types, 2);
  EXPECT_EQ(bert.max_positions, 512);
  EXPECT_EQ(ParameterCount(bert), 109'514'298);  // BertForMaskedLM: no pooler, the decoder's bias its own
}

TEST(TransformerSpec, HfConfig_T5CountsBothStacksAndTheirRelativeBiases) {
  const TransformerSpec t5 = Parsed("t5-small");
  EXPECT_EQ(t5.family, TransformerFamily::kEncoderDecoder);
  EXPECT_EQ(t5.encoder_layers, 6);
  EXPECT_EQ(t5.layers, 6);  // num_decoder_layers absent: num_layers
  EXPECT_EQ(t5.mlp, MlpKind::kPlain);
  EXPECT_EQ(t5.activation, "relu");
  EXPECT_EQ(t5.relative_attention_buckets, 32);
  EXPECT_TRUE(t5.tied_embeddings);
  EXPECT_EQ(ParameterCount(t5), 60'506'624);
  const TransformerSpec v11 = Parsed("t5-v1_1-small");  // gated GELU, an untied head, 6 heads of 64 in 512
  EXPECT_EQ(v11.mlp, MlpKind::kGated);
  EXPECT_EQ(v11.activation, "gelu_new");
  EXPECT_FALSE(v11.tied_embeddings);
  EXPECT_EQ(ParameterCount(v11), 76'961'152);
}

TEST(TransformerSpec, HfConfig_AMissingFieldIsNamed) {
  absl::StatusOr<TransformerSpec> spec = ParsedWith("llama-2-7b-hf", "hidden_size", nullptr);
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(spec.status().message(),
              AllOf(HasSubstr("llama-2-7b-hf.json"), HasSubstr("hidden_size"), HasSubstr("missing")));
  spec = ParsedWith("gpt2", "n_layer", nullptr);
  EXPECT_THAT(spec.status().message(), HasSubstr("n_layer"));
}

TEST(TransformerSpec, HfConfig_ZeroOrFractionalHeadsAreRefused) {
  absl::StatusOr<TransformerSpec> spec = ParsedWith("bert-base-uncased", "num_attention_heads", 0);
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(spec.status().message(), HasSubstr("num_attention_heads must be a positive integer (got 0)"));
  spec = ParsedWith("gpt2", "n_head", 1.5);
  EXPECT_THAT(spec.status().message(), HasSubstr("n_head must be a positive integer (got 1.5)"));
  spec = ParsedWith("gpt2", "n_head", "12");
  EXPECT_THAT(spec.status().message(), HasSubstr("n_head must be a positive integer"));
}

TEST(TransformerSpec, HfConfig_HeadsThatDoNotDivideTheWidthAreRefused) {
  absl::StatusOr<TransformerSpec> spec = ParsedWith("gpt2", "n_head", 7);
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(spec.status().message(), HasSubstr("n_head (7) does not divide n_embd (768)"));
  spec = ParsedWith("mistral-7b-v0.1", "num_key_value_heads", 5);
  EXPECT_THAT(spec.status().message(), HasSubstr("num_key_value_heads (5) does not divide num_attention_heads (32)"));
  // An explicit head_dim needs no division: Mistral-Nemo's 32 heads of 128 in a width of 5120.
  EXPECT_TRUE(ParsedWith("mistral-7b-v0.1", "head_dim", 96).ok());
}

TEST(TransformerSpec, HfConfig_MoreExpertsPerTokenThanExpertsIsRefused) {
  absl::StatusOr<TransformerSpec> spec = ParsedWith("mixtral-8x7b-v0.1", "num_experts_per_tok", 9);
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(spec.status().message(), HasSubstr("num_experts_per_tok (9) is more than num_local_experts (8)"));
}

TEST(TransformerSpec, HfConfig_AnUnknownModelTypeIsUnimplementedAndListsTheSupportedOnes) {
  absl::StatusOr<TransformerSpec> spec = ParsedWith("llama-2-7b-hf", "model_type", "falcon");
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(spec.status().message(),
              AllOf(HasSubstr("'falcon'"), HasSubstr("gpt2, gpt_neox, llama, mistral, qwen2, mixtral, bert, t5")));
  spec = ParsedWith("bert-base-uncased", "position_embedding_type", "relative_key");
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(spec.status().message(), HasSubstr("relative_key"));
}

TEST(TransformerSpec, HfConfig_AnUnknownActivationIsNamed) {
  absl::StatusOr<TransformerSpec> spec = ParsedWith("llama-2-7b-hf", "hidden_act", "squareplus");
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(spec.status().message(), HasSubstr("hidden_act 'squareplus' is not one of"));
  spec = ParsedWith("t5-small", "feed_forward_proj", "gated-gelu-extra");
  EXPECT_THAT(spec.status().message(), HasSubstr("feed_forward_proj 'gated-gelu-extra' is not ACT or gated-ACT"));
}

TEST(TransformerSpec, HfConfig_TextThatIsNotAJsonObjectIsRefused) {
  absl::StatusOr<TransformerSpec> spec = ParseHfConfig("{\"model_type\": \"gpt2\",", "config.json");
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(spec.status().message(), AllOf(HasSubstr("config.json"), HasSubstr("not valid JSON")));
  spec = ParseHfConfig("[1, 2]", "config.json");
  EXPECT_THAT(spec.status().message(), HasSubstr("is a JSON object, not array"));
  spec = ParseHfConfig("{\"n_layer\": 2, \"n_layer\": 3}", "config.json");
  EXPECT_THAT(spec.status().message(), HasSubstr("appears twice"));
  spec = ParseHfConfig("{\"hidden_size\": 8}", "config.json");
  EXPECT_THAT(spec.status().message(), HasSubstr("model_type is missing"));
}

TEST(TransformerSpec, HfConfig_EarlyGpt2ConfigsWithoutAModelTypeAreGpt2) {
  absl::StatusOr<TransformerSpec> spec = ParsedWith("gpt2", "model_type", nullptr);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->model_type, "gpt2");
  EXPECT_EQ(ParameterCount(*spec), 124'439'808);
}

TEST(TransformerSpec, HfConfig_IsToldFromTheOtherJsonFormats) {
  for (const char* name : {"gpt2", "pythia-160m", "mixtral-8x7b-v0.1", "bert-base-uncased", "t5-small"}) {
    EXPECT_TRUE(LooksLikeHfConfig(ConfigText(name))) << name;
  }
  EXPECT_TRUE(LooksLikeHfConfig(R"({"n_layer": 2, "n_embd": 64})"));
  EXPECT_FALSE(LooksLikeHfConfig(R"({"format": "placement.graph/v1", "operators": []})"));
  EXPECT_FALSE(LooksLikeHfConfig(R"({"nodes": [], "edges": [], "maxFPGAs": 2})"));
  EXPECT_FALSE(LooksLikeHfConfig(R"([{"model_type": "gpt2"}])"));
  EXPECT_FALSE(LooksLikeHfConfig(R"({"inner": {"model_type": "gpt2"}})"));
  EXPECT_FALSE(LooksLikeHfConfig("not json"));
  EXPECT_FALSE(LooksLikeHfConfig(""));
}

}  // namespace
}  // namespace placement
