// A transformer described as people describe them: the fields of a Hugging Face config.json (GPT-2, GPT-NeoX,
// Llama/Mistral with grouped-query attention, BERT, T5, mixture-of-experts such as Mixtral), read into one shape
// that the layer model (simulator/transformer_layers.h) and the graph expansion (graph/transformer_graph.h) share.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace placement {

enum class TransformerFamily : uint8_t {
  kDecoder = 0,         // GPT-2, GPT-NeoX, Llama, Mistral, Mixtral: causal self-attention, a language-model head
  kEncoder = 1,         // BERT: bidirectional self-attention, a masked-language-model head
  kEncoderDecoder = 2,  // T5: an encoder stack, a decoder stack with cross-attention
};

enum class MlpKind : uint8_t {
  kPlain = 0,  // up projection, activation, down projection (GPT-2, BERT, T5 v1.0)
  kGated = 1,  // gate and up projections, activation times up, down projection (SwiGLU, GeGLU)
};

enum class NormKind : uint8_t { kLayerNorm = 0, kRmsNorm = 1 };

struct TransformerSpec {
  std::string model_type;  // the config's model_type, e.g. "gpt2", "llama" ("gpt2" when a GPT-2 config omits it)
  TransformerFamily family = TransformerFamily::kDecoder;
  int64_t layers = 0;          // decoder layers (encoder layers for an encoder-only model)
  int64_t encoder_layers = 0;  // encoder-decoder only: the encoder's layers (`layers` counts the decoder's)
  int64_t hidden = 0;          // model width
  int64_t heads = 0;           // query heads
  int64_t kv_heads = 0;        // key/value heads (== heads without grouped-query attention)
  int64_t head_dim = 0;        // per head (hidden / heads unless the config says otherwise)
  int64_t ffn = 0;             // the MLP's inner width (per expert with experts)
  MlpKind mlp = MlpKind::kPlain;
  NormKind norm = NormKind::kLayerNorm;
  std::string activation = "gelu";  // the config's hidden_act / activation_function
  int64_t vocab = 0;
  int64_t max_positions = 0;      // learned position embeddings' rows; 0: none (rotary or relative positions)
  bool tied_embeddings = true;    // the output layer shares the input embedding's weights
  bool attention_bias = true;     // the Q, K, V and output projections carry biases
  bool mlp_bias = true;           // the MLP's projections carry biases
  int64_t experts = 0;            // mixture-of-experts: experts per layer (0: a dense MLP)
  int64_t experts_per_token = 0;  // experts each token is routed to
  // With attention_bias, whether the output projection carries one too: Qwen2 biases Q, K and V only.
  bool attention_output_bias = true;
  // GPT-NeoX's use_parallel_residual: attention and MLP both read the layer's input, both added to it.
  bool parallel_residual = false;
  int64_t token_types = 0;                 // BERT: token-type (segment) embeddings' rows; 0: none
  int64_t relative_attention_buckets = 0;  // T5: rows of the relative position bias, one table per stack; 0: none
};

// Reads a config.json's text; `name` (the file) is used in messages. INVALID_ARGUMENT naming the field when a
// required one is missing, not a positive integer, or inconsistent (heads not dividing hidden, kv heads not
// dividing heads, more experts per token than experts); UNIMPLEMENTED naming the model_type for an architecture
// outside the families above.
absl::StatusOr<TransformerSpec> ParseHfConfig(absl::string_view json_text, absl::string_view name);

// Whether a JSON text looks like a Hugging Face config (an object with model_type, or with the layer and width
// fields of one): how a graph loader tells it from the project's own graph format without parsing twice.
bool LooksLikeHfConfig(absl::string_view json_text);

// Parameters of the whole model (embeddings, every layer, norms, the output layer unless tied), as PyTorch counts
// them for the corresponding transformers class.
int64_t ParameterCount(const TransformerSpec& spec);

}  // namespace placement
