#include "graph/transformer_graph.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"
#include "graph/transformer_blocks.h"
#include "graph/transformer_ops.h"

namespace placement {
namespace {

using transformer_graph::AttentionModules;
using transformer_graph::Input;
using transformer_graph::MlpModules;
using transformer_graph::ModulePath;
using transformer_graph::OpWriter;

constexpr int64_t kMaxOps = 2'000'000;

struct Shape {
  int64_t batch = 1;
  int64_t seq = 1;
  double tokens() const { return static_cast<double>(batch) * static_cast<double>(seq); }
};

// A decoder-only model's modules; a layer's are relative to "<layers>.<i>".
struct DecoderModules {
  std::string embed, positions, embeddings_sum, layers;
  std::string norm1, norm2;
  AttentionModules attention;
  MlpModules mlp;
  std::string moe;  // a mixture-of-experts block in place of the MLP
  std::string final_norm, head;
};

DecoderModules ModulesOf(absl::string_view model_type) {
  DecoderModules m;
  if (model_type == "gpt2") {
    m.embed = "transformer.wte", m.positions = "transformer.wpe", m.embeddings_sum = "transformer";
    m.layers = "transformer.h", m.norm1 = "ln_1", m.norm2 = "ln_2";
    m.attention = {.core = "attn", .qkv = "attn.c_attn", .out = "attn.c_proj"};
    m.mlp = {.up = "mlp.c_fc", .act = "mlp.act", .down = "mlp.c_proj"};
    m.final_norm = "transformer.ln_f", m.head = "lm_head";
  } else if (model_type == "gpt_neox") {
    m.embed = "gpt_neox.embed_in";
    m.layers = "gpt_neox.layers", m.norm1 = "input_layernorm", m.norm2 = "post_attention_layernorm";
    m.attention = {.core = "attention", .qkv = "attention.query_key_value", .out = "attention.dense"};
    m.mlp = {.up = "mlp.dense_h_to_4h", .act = "mlp.act", .down = "mlp.dense_4h_to_h"};
    m.final_norm = "gpt_neox.final_layer_norm", m.head = "embed_out";
  } else {  // Llama and its kin
    m.embed = "model.embed_tokens";
    m.layers = "model.layers", m.norm1 = "input_layernorm", m.norm2 = "post_attention_layernorm";
    m.attention = {.core = "self_attn",
                   .q = "self_attn.q_proj",
                   .k = "self_attn.k_proj",
                   .v = "self_attn.v_proj",
                   .out = "self_attn.o_proj"};
    m.mlp = {
        .gate = "mlp.gate_proj", .up = "mlp.up_proj", .act = "mlp.act_fn", .down = "mlp.down_proj", .product = "mlp"};
    m.moe = "block_sparse_moe";
    m.final_norm = "model.norm", m.head = "lm_head";
  }
  return m;
}

Input DecoderEmbeddings(OpWriter& w, const TransformerSpec& s, const DecoderModules& m, const Shape& shape) {
  const OpId tokens = w.Gather(m.embed, shape.tokens(), s.hidden, s.vocab, true);
  if (s.max_positions == 0) return {tokens};  // rotary positions: applied inside attention
  // One row per position, broadcast over the batch by the addition.
  const OpId positions = w.Gather(m.positions, static_cast<double>(shape.seq), s.hidden, s.max_positions, true);
  return {
      w.Pointwise(m.embeddings_sum, "Add", 1, shape.tokens() * static_cast<double>(s.hidden), {{tokens}, {positions}})};
}

// Pre-norm: x + attention(norm1(x)), then + mlp(norm2(...)); with parallel residuals both norms read x.
Input DecoderLayer(OpWriter& w, const TransformerSpec& s, const DecoderModules& m, const Shape& shape, int64_t i,
                   Input h) {
  const std::string layer = absl::StrCat(m.layers, ".", i);
  const double tokens = shape.tokens(), elements = tokens * static_cast<double>(s.hidden);
  const OpId norm1 = w.Norm(ModulePath(layer, m.norm1), s.norm, h, tokens, s.hidden);
  const OpId attention =
      Attention(w, s, Within(layer, m.attention), {{norm1}, {norm1}, shape.batch, shape.seq, shape.seq});
  const OpId residual = w.Pointwise(layer, "Add", 1, elements, {h, {attention}});
  const OpId norm2 =
      w.Norm(ModulePath(layer, m.norm2), s.norm, s.parallel_residual ? h : Input{residual}, tokens, s.hidden);
  const OpId mlp = s.experts > 0 ? MixtureOfExperts(w, s, ModulePath(layer, m.moe), {norm2}, tokens)
                                 : Mlp(w, s, Within(layer, m.mlp), {norm2}, tokens);
  return {w.Pointwise(layer, "Add", 1, elements, {{residual}, {mlp}})};
}

absl::StatusOr<Graph> DecoderOnly(const TransformerSpec& s, const Shape& shape) {
  const DecoderModules m = ModulesOf(s.model_type);
  OpWriter w;
  Input h = DecoderEmbeddings(w, s, m, shape);
  for (int64_t i = 0; i < s.layers; ++i) h = DecoderLayer(w, s, m, shape, i, h);
  const OpId norm = w.Norm(m.final_norm, s.norm, h, shape.tokens(), s.hidden);
  w.Linear(m.head, {norm}, shape.tokens(), s.hidden, s.vocab, false, !s.tied_embeddings);
  return std::move(w).Build();
}

// BERT's post-norm layer: norm(x + attention(x)), then norm(... + mlp(...)).
Input BertLayer(OpWriter& w, const TransformerSpec& s, const Shape& shape, int64_t i, Input h) {
  const std::string layer = absl::StrCat("bert.encoder.layer.", i);
  const double tokens = shape.tokens(), elements = tokens * static_cast<double>(s.hidden);
  const AttentionModules attention{"attention.self",       "",
                                   "attention.self.query", "attention.self.key",
                                   "attention.self.value", "attention.output.dense"};
  const OpId attended = Attention(w, s, Within(layer, attention), {h, h, shape.batch, shape.seq, shape.seq});
  const OpId sum1 = w.Pointwise(ModulePath(layer, "attention.output"), "Add", 1, elements, {{attended}, h});
  const OpId norm1 = w.Norm(ModulePath(layer, "attention.output.LayerNorm"), s.norm, {sum1}, tokens, s.hidden);
  const MlpModules mlp{"", "intermediate.dense", "intermediate.intermediate_act_fn", "output.dense", ""};
  const OpId out = Mlp(w, s, Within(layer, mlp), {norm1}, tokens);
  const OpId sum2 = w.Pointwise(ModulePath(layer, "output"), "Add", 1, elements, {{out}, {norm1}});
  return {w.Norm(ModulePath(layer, "output.LayerNorm"), s.norm, {sum2}, tokens, s.hidden)};
}

// BertForMaskedLM: word, token-type and position embeddings summed and normalized; the layers; the MLM head.
absl::StatusOr<Graph> Bert(const TransformerSpec& s, const Shape& shape) {
  OpWriter w;
  const double tokens = shape.tokens(), elements = tokens * static_cast<double>(s.hidden);
  const OpId words = w.Gather("bert.embeddings.word_embeddings", tokens, s.hidden, s.vocab, true);
  Input h{words};
  if (s.token_types > 0) {
    const OpId types = w.Gather("bert.embeddings.token_type_embeddings", tokens, s.hidden, s.token_types, true);
    h = {w.Pointwise("bert.embeddings", "Add", 1, elements, {h, {types}})};
  }
  if (s.max_positions > 0) {
    const OpId positions = w.Gather("bert.embeddings.position_embeddings", static_cast<double>(shape.seq), s.hidden,
                                    s.max_positions, true);
    h = {w.Pointwise("bert.embeddings", "Add", 1, elements, {h, {positions}})};
  }
  h = {w.Norm("bert.embeddings.LayerNorm", s.norm, h, tokens, s.hidden)};
  for (int64_t i = 0; i < s.layers; ++i) h = BertLayer(w, s, shape, i, h);
  const OpId dense = w.Linear("cls.predictions.transform.dense", h, tokens, s.hidden, s.hidden, true);
  const OpId act = Activation(w, s, "cls.predictions.transform.transform_act_fn", {dense}, elements);
  const OpId norm = w.Norm("cls.predictions.transform.LayerNorm", s.norm, {act}, tokens, s.hidden);
  // The decoder's weight is the word embeddings' (unless untied); its bias is its own.
  w.Linear("cls.predictions.decoder", {norm}, tokens, s.hidden, s.vocab, true, !s.tied_embeddings);
  return std::move(w).Build();
}

AttentionModules T5Attention(const std::string& module) {
  return {
      module, "", ModulePath(module, "q"), ModulePath(module, "k"), ModulePath(module, "v"), ModulePath(module, "o")};
}

MlpModules T5Mlp(const std::string& module, bool gated) {
  return {gated ? ModulePath(module, "wi_0") : "", ModulePath(module, gated ? "wi_1" : "wi"), ModulePath(module, "act"),
          ModulePath(module, "wo"), module};
}

// One T5 block, each sublayer x + sublayer(norm(x)): self-attention with the stack's relative position bias added
// to its scores, cross-attention over the encoder's output in the decoder, the feed-forward.
Input T5Block(OpWriter& w, const TransformerSpec& s, const Shape& shape, const std::string& block, Input h,
              OpId position_bias, OpId encoder_output) {
  const double tokens = shape.tokens(), elements = tokens * static_cast<double>(s.hidden);
  int sublayers = 0;
  const auto residual = [&](const auto& body) {
    const std::string at = absl::StrCat(block, ".layer.", sublayers++);
    const OpId norm = w.Norm(ModulePath(at, "layer_norm"), s.norm, h, tokens, s.hidden);
    const OpId out = body(at, Input{norm});
    h = {w.Pointwise(at, "Add", 1, elements, {h, {out}})};
  };
  residual([&](const std::string& at, Input x) {
    return Attention(w, s, T5Attention(ModulePath(at, "SelfAttention")),
                     {x, x, shape.batch, shape.seq, shape.seq, position_bias});
  });
  if (encoder_output != kNone) {
    residual([&](const std::string& at, Input x) {
      return Attention(w, s, T5Attention(ModulePath(at, "EncDecAttention")),
                       {x, {encoder_output}, shape.batch, shape.seq, shape.seq});
    });
  }
  residual([&](const std::string& at, Input x) {
    return Mlp(w, s, T5Mlp(ModulePath(at, "DenseReluDense"), s.mlp == MlpKind::kGated), x, tokens);
  });
  return h;
}

// One T5 stack: its first block's relative position bias (shared by every block), the blocks, the final norm.
Input T5Stack(OpWriter& w, const TransformerSpec& s, const Shape& shape, const std::string& stack, int64_t layers,
              Input h, OpId encoder_output) {
  const double pairs = static_cast<double>(shape.seq) * static_cast<double>(shape.seq);
  const OpId bias = s.relative_attention_buckets == 0
                        ? kNone
                        : w.Gather(absl::StrCat(stack, ".block.0.layer.0.SelfAttention.relative_attention_bias"), pairs,
                                   s.heads, s.relative_attention_buckets, true);
  for (int64_t i = 0; i < layers; ++i) {
    h = T5Block(w, s, shape, absl::StrCat(stack, ".block.", i), h, bias, encoder_output);
  }
  return {w.Norm(ModulePath(stack, "final_layer_norm"), s.norm, h, shape.tokens(), s.hidden)};
}

// T5ForConditionalGeneration: encoder and decoder over `seq` tokens each, sharing one embedding table.
absl::StatusOr<Graph> T5(const TransformerSpec& s, const Shape& shape) {
  OpWriter w;
  const double tokens = shape.tokens();
  const OpId source = w.Gather("shared", tokens, s.hidden, s.vocab, true);
  const Input encoded = T5Stack(w, s, shape, "encoder", s.encoder_layers, {source}, kNone);
  const OpId target = w.Gather("decoder.embed_tokens", tokens, s.hidden, s.vocab, false);  // the shared table
  const Input decoded = T5Stack(w, s, shape, "decoder", s.layers, {target}, encoded.op);
  w.Linear("lm_head", decoded, tokens, s.hidden, s.vocab, false, !s.tied_embeddings);
  return std::move(w).Build();
}

absl::Status CheckSpec(const TransformerSpec& s) {
  for (const auto& [field, value] : {std::pair{"layers", s.layers},
                                     {"hidden", s.hidden},
                                     {"heads", s.heads},
                                     {"kv_heads", s.kv_heads},
                                     {"head_dim", s.head_dim},
                                     {"ffn", s.ffn},
                                     {"vocab", s.vocab}}) {
    if (value < 1)
      return absl::InvalidArgumentError(absl::StrCat("the model's ", field, " is ", value, ", not positive"));
  }
  if (s.family == TransformerFamily::kEncoderDecoder && s.encoder_layers < 1) {
    return absl::InvalidArgumentError("an encoder-decoder model needs encoder layers");
  }
  if (s.experts > 0 && (s.experts_per_token < 1 || s.experts_per_token > s.experts)) {
    return absl::InvalidArgumentError(absl::StrCat("experts_per_token is ", s.experts_per_token, " of ", s.experts,
                                                   " experts: it must be between 1 and the experts"));
  }
  return absl::OkStatus();
}

absl::Status CheckShape(const TransformerSpec& s, int64_t batch, int64_t seq) {
  if (batch < 1) return absl::InvalidArgumentError(absl::StrCat("batch must be at least 1 (got ", batch, ")"));
  if (seq < 1) return absl::InvalidArgumentError(absl::StrCat("sequence length must be at least 1 (got ", seq, ")"));
  if (s.max_positions > 0 && seq > s.max_positions) {
    return absl::InvalidArgumentError(absl::StrCat("sequence length ", seq, " is longer than the ", s.max_positions,
                                                   " positions ", s.model_type, " has learned embeddings for"));
  }
  const double tokens = static_cast<double>(batch) * static_cast<double>(seq);
  const double scores = tokens * static_cast<double>(s.heads) * static_cast<double>(seq);
  const double widest =
      std::max({scores, tokens * static_cast<double>(s.vocab), tokens * static_cast<double>(s.ffn),
                tokens * static_cast<double>(s.heads + 2 * s.kv_heads) * static_cast<double>(s.head_dim)});
  if (widest * transformer_graph::kFloatBytes > 0x1p62) {
    return absl::InvalidArgumentError(
        absl::StrCat("batch ", batch, " x sequence length ", seq, " makes tensors past 2^62 bytes"));
  }
  const double ops = static_cast<double>(s.layers + s.encoder_layers) * static_cast<double>(30 + 8 * s.experts);
  if (ops > kMaxOps) {
    return absl::InvalidArgumentError(
        absl::StrCat("the graph would have about ", ops, " operators (at most ", kMaxOps, ")"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Problem> BuildTransformerGraph(const TransformerSpec& spec, int64_t batch, int64_t seq) {
  RETURN_IF_ERROR(CheckSpec(spec));
  RETURN_IF_ERROR(CheckShape(spec, batch, seq));
  const Shape shape{batch, seq};
  absl::StatusOr<Graph> graph;
  switch (spec.family) {
    case TransformerFamily::kDecoder:
      graph = DecoderOnly(spec, shape);
      break;
    case TransformerFamily::kEncoder:
      graph = Bert(spec, shape);
      break;
    case TransformerFamily::kEncoderDecoder:
      graph = T5(spec, shape);
      break;
  }
  if (!graph.ok()) return graph.status();
  Problem problem;
  problem.graph = *std::move(graph);
  return problem;
}

}  // namespace placement
