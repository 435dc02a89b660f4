// Transformer shapes the plan model's and the plan search's tests share.
#pragma once

#include <cstdint>

#include "graph/transformer_spec.h"

namespace placement::testing {

// A GPT of Megatron-LM's published runs: learned positions, biases, a 4h MLP, the 51,200-token vocabulary, tied.
inline TransformerSpec Gpt(int64_t layers, int64_t hidden, int64_t heads) {
  TransformerSpec s;
  s.model_type = "gpt2";
  s.layers = layers, s.hidden = hidden, s.heads = heads, s.kv_heads = heads, s.head_dim = hidden / heads;
  s.ffn = 4 * hidden, s.vocab = 51200, s.max_positions = 2048;
  return s;
}

}  // namespace placement::testing
