#include "graph/onnx/transformer_recognition.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <set>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "graph/onnx/transformer_trace.h"

namespace placement::onnx_import {
namespace {

// What a family's parameter names are, after any prefix, and what its config says where the export is silent.
struct FamilyNames {
  const char* model_type;
  const char* tokens;       // the token embedding, [vocab, hidden]
  const char* positions;    // learned positions, [positions, hidden]; nullptr: rotary, none to find
  const char* token_types;  // segment embeddings; nullptr: none
  const char* layer_list;   // the ModuleList whose index numbers the layers
  TransformerFamily family;
  NormKind norm;
  const char* activation;
  bool tied;
};

constexpr FamilyNames kFamilies[] = {
    {"bert", "embeddings.word_embeddings.weight", "embeddings.position_embeddings.weight",
     "embeddings.token_type_embeddings.weight", "layer", TransformerFamily::kEncoder, NormKind::kLayerNorm, "gelu",
     true},
    {"gpt2", "wte.weight", "wpe.weight", nullptr, "h", TransformerFamily::kDecoder, NormKind::kLayerNorm, "gelu_new",
     true},
    {"llama", "embed_tokens.weight", nullptr, nullptr, "layers", TransformerFamily::kDecoder, NormKind::kRmsNorm,
     "silu", false},
};

// `name` is `path` or ends with "." + path: the parameter at that path under any prefix.
bool IsParameter(absl::string_view name, absl::string_view path) {
  if (!absl::EndsWith(name, path)) return false;
  return name.size() == path.size() || name[name.size() - path.size() - 1] == '.';
}

// The names weights go by: initializers, weight inputs, and the Identity outputs the TorchScript exporter
// names after each parameter it merged into an equal one (nodes are in a topological order, so a chain of
// Identities resolves in one pass).
std::set<std::string> WeightNames(const onnx::GraphProto& graph, const std::unordered_set<std::string>& weight_inputs) {
  std::set<std::string> names(weight_inputs.begin(), weight_inputs.end());
  for (const onnx::TensorProto& init : graph.initializer()) names.insert(init.name());
  for (const onnx::NodeProto& node : graph.node()) {
    if (node.op_type() != "Identity" || node.input_size() != 1 || node.output_size() != 1) continue;
    if (names.count(node.input(0)) > 0) names.insert(node.output(0));
  }
  return names;
}

const std::string* FindParameter(const std::set<std::string>& names, const char* path) {
  if (path == nullptr) return nullptr;
  for (const std::string& name : names) {
    if (IsParameter(name, path)) return &name;
  }
  return nullptr;
}

// Names that say the model is a relative of the family that this recognition would misread: mixture-of-experts
// layers, learned positions or an encoder-decoder beside Llama-style names (OPT, BART).
bool HasUnsupportedParts(const std::set<std::string>& names, const FamilyNames& family, const std::string& tokens) {
  for (const std::string& name : names) {
    for (absl::string_view part : absl::StrSplit(name, '.')) {
      if (part == "experts" || part == "block_sparse_moe") return true;
      if (family.positions == nullptr && part == "embed_positions") return true;
    }
  }
  if (family.positions != nullptr) return false;
  return absl::StrContains(tokens, "encoder.") || absl::StrContains(tokens, "decoder.");
}

// Distinct N in names "...<layer_list>.N....".
int64_t CountLayerIndices(const std::set<std::string>& names, absl::string_view layer_list) {
  std::set<int64_t> indices;
  for (const std::string& name : names) {
    std::vector<absl::string_view> parts = absl::StrSplit(name, '.');
    for (size_t i = 0; i + 1 < parts.size(); ++i) {
      int64_t index = 0;
      if (parts[i] == layer_list && absl::SimpleAtoi(parts[i + 1], &index) && index >= 0) indices.insert(index);
    }
  }
  return static_cast<int64_t>(indices.size());
}

// A norm operator decides; else norms named *norm* with weights only are RMS and with biases are LayerNorm;
// else the family's.
NormKind NormOf(const onnx::GraphProto& graph, const std::set<std::string>& names, NormKind fallback) {
  for (const onnx::NodeProto& node : graph.node()) {
    if (node.op_type() == "LayerNormalization") return NormKind::kLayerNorm;
    if (node.op_type() == "RMSNormalization" || node.op_type() == "SimplifiedLayerNormalization") {
      return NormKind::kRmsNorm;
    }
  }
  bool weight_only = false, with_bias = false;
  for (const std::string& name : names) {
    if (!absl::EndsWith(name, ".weight") || !absl::StrContains(absl::AsciiStrToLower(name), "norm")) continue;
    const std::string bias = name.substr(0, name.size() - 6) + "bias";
    if (names.count(bias) > 0) {
      with_bias = true;
    } else {
      weight_only = true;
    }
  }
  if (with_bias) return NormKind::kLayerNorm;
  return weight_only ? NormKind::kRmsNorm : fallback;
}

const onnx::TensorProto* FindInitializer(const onnx::GraphProto& graph, const std::string& name) {
  for (const onnx::TensorProto& init : graph.initializer()) {
    if (init.name() == name) return &init;
  }
  return nullptr;
}

// Whether `head` holds the bytes of `embedding` [vocab, hidden], as is or transposed; nullopt when either
// keeps its data outside raw_data (external data, typed fields), which the import does not read.
std::optional<bool> SameMatrix(const onnx::TensorProto& embedding, const onnx::TensorProto& head) {
  const std::string &e = embedding.raw_data(), &h = head.raw_data();
  if (embedding.data_location() == onnx::TensorProto::EXTERNAL || head.data_location() == onnx::TensorProto::EXTERNAL ||
      e.empty() || h.empty() || embedding.dims_size() != 2 || head.dims_size() != 2) {
    return std::nullopt;
  }
  if (embedding.data_type() != head.data_type() || e.size() != h.size()) return false;
  const int64_t rows = embedding.dims(0), cols = embedding.dims(1);
  if (head.dims(0) == rows && head.dims(1) == cols) return e == h;
  if (head.dims(0) != cols || head.dims(1) != rows || rows * cols == 0) return false;
  const size_t width = e.size() / static_cast<size_t>(rows * cols);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      if (std::memcmp(&e[(r * cols + c) * width], &h[(c * rows + r) * width], width) != 0) return false;
    }
  }
  return true;
}

// Whether the output layer shares the token embedding (see the header for what decides).
bool TiedHead(const onnx::GraphProto& graph, const TransformerTrace& trace, const std::string& tokens,
              const std::optional<Projection>& head, bool fallback) {
  if (!head.has_value()) return true;
  const std::string& embedding = trace.Source(tokens);
  if (head->weight == embedding) return true;
  const onnx::TensorProto* e = FindInitializer(graph, embedding);
  const onnx::TensorProto* h = FindInitializer(graph, head->weight);
  if (e == nullptr || h == nullptr) return fallback;
  return SameMatrix(*e, *h).value_or(fallback);
}

// Heads, head_dim and key/value heads from the first attention; false when they do not divide evenly.
bool ReadAttention(const AttentionTrace& a, TransformerSpec& spec) {
  if (a.heads <= 0 || a.q.in != spec.hidden || a.o.out != spec.hidden) return false;
  if (a.fused_qkv && a.q.out % 3 != 0) return false;
  const int64_t q_width = a.fused_qkv ? a.q.out / 3 : a.q.out;
  const int64_t kv_width = a.fused_qkv ? q_width : a.k.out;
  if (kv_width != (a.fused_qkv ? q_width : a.v.out) || q_width % a.heads != 0) return false;
  spec.heads = a.heads;
  spec.head_dim = q_width / a.heads;
  if (spec.head_dim == 0 || kv_width % spec.head_dim != 0 || a.o.in != q_width) return false;
  spec.kv_heads = kv_width / spec.head_dim;
  if (spec.kv_heads == 0 || spec.heads % spec.kv_heads != 0) return false;
  spec.attention_bias = a.q.bias;
  if (spec.attention_bias) spec.attention_output_bias = a.o.bias;
  return true;
}

bool ReadMlp(const MlpTrace& mlp, const FamilyNames& family, TransformerSpec& spec) {
  if (mlp.up.empty() || mlp.up.size() > 2 || mlp.down.out != spec.hidden) return false;
  for (const Projection& up : mlp.up) {
    if (up.in != spec.hidden || up.out != mlp.down.in) return false;
  }
  spec.ffn = mlp.down.in;
  spec.mlp = mlp.up.size() == 2 ? MlpKind::kGated : MlpKind::kPlain;
  spec.mlp_bias = mlp.up.front().bias;
  spec.activation = mlp.activation.empty() ? family.activation : mlp.activation;
  return true;
}

// The embeddings' sizes; false when a learned-position family has no position table or the shapes disagree.
bool ReadEmbeddings(const TransformerTrace& trace, const std::set<std::string>& names, const FamilyNames& family,
                    const std::string& tokens, TransformerSpec& spec) {
  const TensorInfo* info = trace.Info(tokens);
  if (info == nullptr || info->dims.size() != 2 || info->dims[0] <= 0 || info->dims[1] <= 0) return false;
  spec.vocab = info->dims[0];
  spec.hidden = info->dims[1];
  auto rows = [&](const char* path) -> int64_t {
    const std::string* name = FindParameter(names, path);
    const TensorInfo* table = name != nullptr ? trace.Info(*name) : nullptr;
    if (table == nullptr || table->dims.size() != 2 || table->dims[1] != spec.hidden) return 0;
    return table->dims[0];
  };
  spec.max_positions = rows(family.positions);
  spec.token_types = rows(family.token_types);
  return family.positions == nullptr || spec.max_positions > 0;
}

// The last projection to the vocabulary after the last layer's MLP: the language-model head.
std::optional<Projection> FindHead(const TransformerTrace& trace, const AttentionTrace& last,
                                   const TransformerSpec& spec) {
  std::optional<Projection> head = trace.OutputLayer(spec.hidden, spec.vocab);
  std::optional<MlpTrace> mlp = trace.MlpAfter(last);
  const int32_t layer_end = mlp.has_value() ? mlp->down.node : last.o.node;
  if (!head.has_value() || head->node <= layer_end) return std::nullopt;
  return head;
}

}  // namespace

std::optional<TransformerSpec> RecognizeTransformer(const onnx::GraphProto& graph, const InferredShapes& shapes,
                                                    const std::unordered_set<std::string>& weight_inputs) {
  // Names first: the walks below are only worth making for a model that names a family's embedding.
  const std::set<std::string> names = WeightNames(graph, weight_inputs);
  const FamilyNames* family = nullptr;
  const std::string* tokens = nullptr;
  for (const FamilyNames& f : kFamilies) {
    if ((tokens = FindParameter(names, f.tokens)) != nullptr) {
      family = &f;
      break;
    }
  }
  if (family == nullptr || HasUnsupportedParts(names, *family, *tokens)) return std::nullopt;
  std::unordered_set<std::string> constants = weight_inputs;
  for (const onnx::TensorProto& init : graph.initializer()) constants.insert(init.name());
  const TransformerTrace trace(graph, shapes, std::move(constants));
  TransformerSpec spec;
  spec.model_type = family->model_type;
  spec.family = family->family;
  if (!ReadEmbeddings(trace, names, *family, *tokens, spec)) return std::nullopt;
  const std::vector<AttentionTrace> attentions = trace.Attentions();
  if (attentions.empty() || !ReadAttention(attentions.front(), spec)) return std::nullopt;
  std::optional<MlpTrace> mlp = trace.MlpAfter(attentions.front());
  if (!mlp.has_value() || !ReadMlp(*mlp, *family, spec)) return std::nullopt;
  // Merged initializers can leave a layer without a name of its own; every layer still runs its attention.
  spec.layers = std::max(CountLayerIndices(names, family->layer_list), static_cast<int64_t>(attentions.size()));
  spec.norm = NormOf(graph, names, family->norm);
  spec.tied_embeddings = TiedHead(graph, trace, *tokens, FindHead(trace, attentions.back(), spec), family->tied);
  return spec;
}

}  // namespace placement::onnx_import
