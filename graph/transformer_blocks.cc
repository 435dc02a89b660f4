#include "graph/transformer_blocks.h"

#include <vector>

#include "absl/strings/str_cat.h"

namespace placement::transformer_graph {

std::string ModulePath(absl::string_view parent, absl::string_view child) {
  if (child.empty()) return std::string(parent);
  return parent.empty() ? std::string(child) : absl::StrCat(parent, ".", child);
}

AttentionModules Within(absl::string_view layer, const AttentionModules& m) {
  auto in = [&](const std::string& part) { return part.empty() ? part : ModulePath(layer, part); };
  return {in(m.core), in(m.qkv), in(m.q), in(m.k), in(m.v), in(m.out)};
}
MlpModules Within(absl::string_view layer, const MlpModules& m) {
  auto in = [&](const std::string& part) { return part.empty() ? part : ModulePath(layer, part); };
  return {in(m.gate), in(m.up), in(m.act), in(m.down), in(m.product)};
}

OpId Activation(OpWriter& w, const TransformerSpec& s, absl::string_view module, Input x, double elements) {
  if (s.activation == "relu") return w.Pointwise(module, "Relu", 1, elements, {x});
  if (s.activation == "silu" || s.activation == "swish") {
    // As the exporter writes SiLU, x * sigmoid(x): the cost model's fused patterns price the pair as one kernel.
    const OpId sigmoid = w.Pointwise(module, "Sigmoid", 4, elements, {x});
    return w.Pointwise(module, "Mul", 1, elements, {x, {sigmoid}});
  }
  return w.Pointwise(module, "Gelu", 8, elements, {x});  // every GELU variant ParseHfConfig accepts
}

OpId Attention(OpWriter& w, const TransformerSpec& s, const AttentionModules& m, const AttentionCall& c) {
  const double q_rows = static_cast<double>(c.batch * c.q_len), kv_rows = static_cast<double>(c.batch * c.kv_len);
  const int64_t q_width = s.heads * s.head_dim, kv_width = s.kv_heads * s.head_dim;
  std::vector<Input> scores_inputs;
  Input values;
  if (!m.qkv.empty()) {
    const OpId qkv = w.Linear(m.qkv, c.x, q_rows, s.hidden, q_width + 2 * kv_width, s.attention_bias);
    scores_inputs.push_back({qkv, FloatBytes(q_rows * static_cast<double>(q_width + kv_width))});  // Q and K
    values = {qkv, FloatBytes(q_rows * static_cast<double>(kv_width))};
  } else {
    scores_inputs.push_back({w.Linear(m.q, c.x, q_rows, s.hidden, q_width, s.attention_bias)});
    scores_inputs.push_back({w.Linear(m.k, c.memory, kv_rows, s.hidden, kv_width, s.attention_bias)});
    values = {w.Linear(m.v, c.memory, kv_rows, s.hidden, kv_width, s.attention_bias)};
  }
  // Grouped-query attention shares each K and V head among heads / kv_heads query heads: the products' work
  // follows the query heads.
  const double scores = static_cast<double>(c.batch * s.heads) * static_cast<double>(c.q_len * c.kv_len);
  const double product_flops = 2 * scores * static_cast<double>(s.head_dim);
  OpId logits = w.MatMul(m.core, product_flops, scores, scores_inputs);
  if (c.position_bias != kNone) logits = w.Pointwise(m.core, "Add", 1, scores, {{logits}, {c.position_bias}});
  const OpId probs = w.Pointwise(m.core, "Softmax", 5, scores, {{logits}});
  const OpId context = w.MatMul(m.core, product_flops, q_rows * static_cast<double>(q_width), {{probs}, values});
  return w.Linear(m.out, {context}, q_rows, q_width, s.hidden, s.attention_bias && s.attention_output_bias);
}

OpId Mlp(OpWriter& w, const TransformerSpec& s, const MlpModules& m, Input x, double rows) {
  const double inner = rows * static_cast<double>(s.ffn);
  OpId activated;
  if (s.mlp == MlpKind::kGated) {
    const OpId gate = w.Linear(m.gate, x, rows, s.hidden, s.ffn, s.mlp_bias);
    const OpId act = Activation(w, s, m.act, {gate}, inner);
    const OpId up = w.Linear(m.up, x, rows, s.hidden, s.ffn, s.mlp_bias);
    activated = w.Pointwise(m.product, "Mul", 1, inner, {{act}, {up}});
  } else {
    const OpId up = w.Linear(m.up, x, rows, s.hidden, s.ffn, s.mlp_bias);
    activated = Activation(w, s, m.act, {up}, inner);
  }
  return w.Linear(m.down, {activated}, rows, s.ffn, s.hidden, s.mlp_bias);
}

OpId MixtureOfExperts(OpWriter& w, const TransformerSpec& s, const std::string& moe, Input x, double tokens) {
  const double experts = static_cast<double>(s.experts), hidden = static_cast<double>(s.hidden);
  const OpId router = w.Linear(ModulePath(moe, "gate"), x, tokens, s.hidden, s.experts, false);
  const OpId routing = w.Pointwise(moe, "Softmax", 5, tokens * experts, {{router}});
  const double rows = tokens * static_cast<double>(s.experts_per_token) / experts;
  std::vector<Input> weighted;
  for (int64_t e = 0; e < s.experts; ++e) {
    const std::string expert = absl::StrCat(moe, ".experts.", e);
    const MlpModules m{ModulePath(expert, "w1"), ModulePath(expert, "w3"), ModulePath(expert, "act_fn"),
                       ModulePath(expert, "w2"), expert};
    const OpId y = Mlp(w, s, m, {x.op, FloatBytes(rows * hidden)}, rows);
    weighted.push_back({w.Pointwise(expert, "Mul", 1, rows * hidden, {{y}, {routing, FloatBytes(rows)}})});
  }
  // Each token adds experts_per_token contributions.
  return w.Pointwise(moe, "Sum", static_cast<double>(s.experts_per_token), tokens * hidden, weighted);
}

}  // namespace placement::transformer_graph
