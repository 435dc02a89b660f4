// The blocks every transformer family is assembled from (graph/transformer_graph.h): attention (fused or separate
// Q/K/V projections, grouped-query, cross-attention, an added position bias), the plain or gated MLP, and a
// mixture of experts, each written as its operators with the module paths of the family's transformers class.
#pragma once

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "graph/transformer_ops.h"
#include "graph/transformer_spec.h"

namespace placement::transformer_graph {

// "parent.child"; either may be empty.
std::string ModulePath(absl::string_view parent, absl::string_view child);

// Where the parts of one attention block and one MLP sit, as the family's transformers class names its modules.
struct AttentionModules {
  std::string core;  // the scores, softmax and context products
  std::string qkv;   // one fused Q/K/V projection; "" where Q, K and V are separate
  std::string q, k, v, out;
};
struct MlpModules {
  std::string gate;  // "" for a plain MLP
  std::string up, act, down;
  std::string product;  // where a gated MLP multiplies the activation by the up projection
};

// The same modules inside `layer` (relative paths made absolute; empty ones left empty).
AttentionModules Within(absl::string_view layer, const AttentionModules& m);
MlpModules Within(absl::string_view layer, const MlpModules& m);

// The spec's activation over `elements` values: Gelu, Relu, or SiLU as Sigmoid and Mul.
OpId Activation(OpWriter& w, const TransformerSpec& s, absl::string_view module, Input x, double elements);

struct AttentionCall {
  Input x;       // the queries' input
  Input memory;  // the keys' and values' input: x itself, or the encoder's output for cross-attention
  int64_t batch = 1, q_len = 1, kv_len = 1;
  OpId position_bias = kNone;  // T5's relative position bias, added to the scores
};

// Projections, scores, softmax, context and output projection; returns the output projection.
OpId Attention(OpWriter& w, const TransformerSpec& s, const AttentionModules& m, const AttentionCall& c);

// Up (and gate) projection, activation, down projection over `rows` rows; returns the down projection.
OpId Mlp(OpWriter& w, const TransformerSpec& s, const MlpModules& m, Input x, double rows);

// Mixtral's sparse block at module `moe`: the router, then each expert's gated MLP over its share of the routed
// tokens (tokens x experts_per_token spread evenly), scaled by the routing weights and summed back into the
// tokens. Returns the sum.
OpId MixtureOfExperts(OpWriter& w, const TransformerSpec& s, const std::string& moe, Input x, double tokens);

}  // namespace placement::transformer_graph
