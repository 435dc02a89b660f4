#include "graph/transformer_spec.h"

#include <algorithm>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "graph/json_read.h"
#include "graph/json_text.h"
#include "graph/status_macros.h"

namespace placement {
namespace {

using Json = nlohmann::json;

// Sizes past this are no model's: bounding each field keeps every product of a few of them inside an int64.
constexpr int64_t kMaxField = int64_t{1} << 31;

constexpr absl::string_view kActivations[] = {"gelu",        "gelu_new",      "gelu_fast", "gelu_pytorch_tanh",
                                              "gelu_python", "gelu_accurate", "gelu_10",   "quick_gelu",
                                              "relu",        "silu",          "swish"};

// Reads one config's fields; every error names the file, the field and what is wrong with it.
class ConfigReader {
 public:
  ConfigReader(const Json& config, absl::string_view name, absl::string_view model_type)
      : config_(config), name_(name), model_type_(model_type) {}

  absl::Status Error(absl::string_view message) const {
    return absl::InvalidArgumentError(absl::StrCat(name_, ": ", message));
  }

  // A positive integer the config must give.
  absl::StatusOr<int64_t> Required(const char* key) const {
    const Json* v = json::Find(config_, key);
    if (v == nullptr || v->is_null()) {
      return Error(absl::StrCat("a ", model_type_, " config needs ", key, ", which is missing"));
    }
    return Positive(key, *v);
  }

  // A positive integer, `fallback` (the transformers class's default) where absent or null.
  absl::StatusOr<int64_t> Optional(const char* key, int64_t fallback) const {
    const Json* v = json::Find(config_, key);
    if (v == nullptr || v->is_null()) return fallback;
    return Positive(key, *v);
  }

  absl::StatusOr<bool> Flag(const char* key, bool fallback) const {
    bool value = fallback;
    if (absl::Status s = json::OptionalBool(config_, "", key, &value); !s.ok()) return Error(s.message());
    return value;
  }

  absl::StatusOr<std::string> Text(const char* key, absl::string_view fallback) const {
    const Json* v = json::Find(config_, key);
    if (v == nullptr || v->is_null()) return std::string(fallback);
    absl::StatusOr<std::string> text = json::String(*v, key);
    if (!text.ok()) return Error(text.status().message());
    return text;
  }

  // An activation function's name the graph knows how to run.
  absl::StatusOr<std::string> Activation(const char* key, absl::string_view fallback) const {
    ASSIGN_OR_RETURN(std::string name, Text(key, fallback));
    return CheckActivation(key, std::move(name));
  }

  absl::StatusOr<std::string> CheckActivation(absl::string_view key, std::string name) const {
    if (std::find(std::begin(kActivations), std::end(kActivations), name) != std::end(kActivations)) return name;
    return Error(absl::StrCat(key, " '", name, "' is not one of ", absl::StrJoin(kActivations, ", ")));
  }

  // head_dim from the width when the config gives none; heads must then divide it. kv heads must divide heads.
  absl::Status SplitHeads(absl::string_view heads_key, absl::string_view width_key, TransformerSpec& spec) const {
    if (spec.head_dim == 0) {
      if (spec.hidden % spec.heads != 0) {
        return Error(absl::StrCat(heads_key, " (", spec.heads, ") does not divide ", width_key, " (", spec.hidden,
                                  "): the heads would not split the width evenly"));
      }
      spec.head_dim = spec.hidden / spec.heads;
    }
    if (spec.kv_heads == 0) spec.kv_heads = spec.heads;
    if (spec.heads % spec.kv_heads != 0) {
      return Error(absl::StrCat("num_key_value_heads (", spec.kv_heads, ") does not divide ", heads_key, " (",
                                spec.heads, "): each key/value head must serve a whole group of query heads"));
    }
    return absl::OkStatus();
  }

 private:
  absl::StatusOr<int64_t> Positive(const char* key, const Json& v) const {
    if (!v.is_number_integer() || (v.is_number_unsigned() ? v.get<uint64_t>() == 0 : v.get<int64_t>() <= 0)) {
      return Error(absl::StrCat(key, " must be a positive integer (got ", v.dump(), ")"));
    }
    if (v.get<uint64_t>() > static_cast<uint64_t>(kMaxField)) {
      return Error(absl::StrCat(key, " is too large (got ", v.dump(), "; at most ", kMaxField, ")"));
    }
    return v.get<int64_t>();
  }

  const Json& config_;
  absl::string_view name_;
  absl::string_view model_type_;
};

// GPT2LMHeadModel: learned positions, fused QKV (Conv1D), plain MLP, LayerNorm before each block, tied head.
absl::Status ReadGpt2(const ConfigReader& r, TransformerSpec& s) {
  ASSIGN_OR_RETURN(s.layers, r.Required("n_layer"));
  ASSIGN_OR_RETURN(s.hidden, r.Required("n_embd"));
  ASSIGN_OR_RETURN(s.heads, r.Required("n_head"));
  ASSIGN_OR_RETURN(s.vocab, r.Required("vocab_size"));
  ASSIGN_OR_RETURN(s.max_positions, r.Optional("n_positions", 1024));
  ASSIGN_OR_RETURN(s.ffn, r.Optional("n_inner", 4 * s.hidden));
  ASSIGN_OR_RETURN(s.activation, r.Activation("activation_function", "gelu_new"));
  ASSIGN_OR_RETURN(s.tied_embeddings, r.Flag("tie_word_embeddings", true));
  return r.SplitHeads("n_head", "n_embd", s);
}

// GPTNeoXForCausalLM: rotary positions, fused QKV, attention and MLP in parallel by default, untied head.
absl::Status ReadGptNeoX(const ConfigReader& r, TransformerSpec& s) {
  ASSIGN_OR_RETURN(s.layers, r.Required("num_hidden_layers"));
  ASSIGN_OR_RETURN(s.hidden, r.Required("hidden_size"));
  ASSIGN_OR_RETURN(s.heads, r.Required("num_attention_heads"));
  ASSIGN_OR_RETURN(s.ffn, r.Required("intermediate_size"));
  ASSIGN_OR_RETURN(s.vocab, r.Required("vocab_size"));
  ASSIGN_OR_RETURN(s.activation, r.Activation("hidden_act", "gelu"));
  ASSIGN_OR_RETURN(s.tied_embeddings, r.Flag("tie_word_embeddings", false));
  ASSIGN_OR_RETURN(s.parallel_residual, r.Flag("use_parallel_residual", true));
  ASSIGN_OR_RETURN(s.attention_bias, r.Flag("attention_bias", true));
  return r.SplitHeads("num_attention_heads", "hidden_size", s);
}

// LlamaForCausalLM and its kin (Mistral, Qwen2, Mixtral): rotary positions, grouped-query attention, RMSNorm,
// gated SiLU MLP, no biases except where the family says.
absl::Status ReadLlama(const ConfigReader& r, TransformerSpec& s) {
  ASSIGN_OR_RETURN(s.layers, r.Required("num_hidden_layers"));
  ASSIGN_OR_RETURN(s.hidden, r.Required("hidden_size"));
  ASSIGN_OR_RETURN(s.heads, r.Required("num_attention_heads"));
  ASSIGN_OR_RETURN(s.kv_heads, r.Optional("num_key_value_heads", s.heads));
  ASSIGN_OR_RETURN(s.head_dim, r.Optional("head_dim", 0));
  ASSIGN_OR_RETURN(s.ffn, r.Required("intermediate_size"));
  ASSIGN_OR_RETURN(s.vocab, r.Required("vocab_size"));
  ASSIGN_OR_RETURN(s.activation, r.Activation("hidden_act", "silu"));
  ASSIGN_OR_RETURN(s.tied_embeddings, r.Flag("tie_word_embeddings", false));
  s.mlp = MlpKind::kGated;
  s.norm = NormKind::kRmsNorm;
  s.attention_bias = s.mlp_bias = false;
  if (s.model_type == "llama") {
    ASSIGN_OR_RETURN(s.attention_bias, r.Flag("attention_bias", false));
    ASSIGN_OR_RETURN(s.mlp_bias, r.Flag("mlp_bias", false));
  } else if (s.model_type == "qwen2") {
    s.attention_bias = true;  // Qwen2's q, k and v projections have biases, its o_proj none
    s.attention_output_bias = false;
  } else if (s.model_type == "mixtral") {
    ASSIGN_OR_RETURN(s.experts, r.Required("num_local_experts"));
    ASSIGN_OR_RETURN(s.experts_per_token, r.Required("num_experts_per_tok"));
    if (s.experts_per_token > s.experts) {
      return r.Error(absl::StrCat("num_experts_per_tok (", s.experts_per_token, ") is more than num_local_experts (",
                                  s.experts, ")"));
    }
  }
  return r.SplitHeads("num_attention_heads", "hidden_size", s);
}

// BertForMaskedLM: learned and token-type embeddings with a LayerNorm, LayerNorm after each block, and the
// masked-language-model head (a dense layer, a LayerNorm, the decoder tied to the word embeddings).
absl::Status ReadBert(const ConfigReader& r, TransformerSpec& s) {
  ASSIGN_OR_RETURN(s.layers, r.Required("num_hidden_layers"));
  ASSIGN_OR_RETURN(s.hidden, r.Required("hidden_size"));
  ASSIGN_OR_RETURN(s.heads, r.Required("num_attention_heads"));
  ASSIGN_OR_RETURN(s.ffn, r.Required("intermediate_size"));
  ASSIGN_OR_RETURN(s.vocab, r.Required("vocab_size"));
  ASSIGN_OR_RETURN(s.max_positions, r.Optional("max_position_embeddings", 512));
  ASSIGN_OR_RETURN(s.token_types, r.Optional("type_vocab_size", 2));
  ASSIGN_OR_RETURN(s.activation, r.Activation("hidden_act", "gelu"));
  ASSIGN_OR_RETURN(s.tied_embeddings, r.Flag("tie_word_embeddings", true));
  ASSIGN_OR_RETURN(std::string positions, r.Text("position_embedding_type", "absolute"));
  if (positions != "absolute") {
    // relative_key adds a distance embedding to every layer's attention, which this model does not count.
    return absl::UnimplementedError(
        absl::StrCat("position_embedding_type '", positions, "' (only absolute BERT positions are supported)"));
  }
  s.family = TransformerFamily::kEncoder;
  return r.SplitHeads("num_attention_heads", "hidden_size", s);
}

// T5ForConditionalGeneration: an encoder and a decoder with cross-attention, relative position biases in each
// stack's first layer, T5's weight-only RMS LayerNorm, no biases, a tied head by default.
absl::Status ReadT5(const ConfigReader& r, TransformerSpec& s) {
  ASSIGN_OR_RETURN(s.hidden, r.Required("d_model"));
  ASSIGN_OR_RETURN(s.heads, r.Required("num_heads"));
  ASSIGN_OR_RETURN(s.head_dim, r.Required("d_kv"));
  ASSIGN_OR_RETURN(s.ffn, r.Required("d_ff"));
  ASSIGN_OR_RETURN(s.encoder_layers, r.Required("num_layers"));
  ASSIGN_OR_RETURN(s.layers, r.Optional("num_decoder_layers", s.encoder_layers));
  ASSIGN_OR_RETURN(s.vocab, r.Required("vocab_size"));
  ASSIGN_OR_RETURN(s.relative_attention_buckets, r.Optional("relative_attention_num_buckets", 32));
  ASSIGN_OR_RETURN(s.tied_embeddings, r.Flag("tie_word_embeddings", true));
  ASSIGN_OR_RETURN(std::string projection, r.Text("feed_forward_proj", "relu"));
  // As T5Config reads it: "ACT" or "gated-ACT", with "gated-gelu" meaning the tanh approximation.
  std::vector<std::string> parts = absl::StrSplit(projection, '-');
  if (parts.size() > 2 || (parts.size() == 2 && parts[0] != "gated")) {
    return r.Error(absl::StrCat("feed_forward_proj '", projection, "' is not ACT or gated-ACT (e.g. gated-gelu)"));
  }
  s.mlp = parts.size() == 2 ? MlpKind::kGated : MlpKind::kPlain;
  ASSIGN_OR_RETURN(s.activation,
                   r.CheckActivation("feed_forward_proj", projection == "gated-gelu" ? "gelu_new" : parts.back()));
  s.family = TransformerFamily::kEncoderDecoder;
  s.norm = NormKind::kRmsNorm;
  s.attention_bias = s.mlp_bias = false;
  return r.SplitHeads("num_heads", "d_model", s);
}

using FamilyReader = absl::Status (*)(const ConfigReader&, TransformerSpec&);

constexpr std::pair<absl::string_view, FamilyReader> kFamilies[] = {
    {"gpt2", ReadGpt2},   {"gpt_neox", ReadGptNeoX}, {"llama", ReadLlama}, {"mistral", ReadLlama},
    {"qwen2", ReadLlama}, {"mixtral", ReadLlama},    {"bert", ReadBert},   {"t5", ReadT5},
};

std::string SupportedTypes() {
  std::vector<absl::string_view> names;
  for (const auto& [type, reader] : kFamilies) names.push_back(type);
  return absl::StrJoin(names, ", ");
}

// The parameter count in T: double to check that it fits before counting exactly in int64_t.
template <typename T>
T CountParameters(const TransformerSpec& s) {
  const T d = static_cast<T>(s.hidden), f = static_cast<T>(s.ffn), vocab = static_cast<T>(s.vocab);
  const T q = static_cast<T>(s.heads) * static_cast<T>(s.head_dim);
  const T kv = static_cast<T>(s.kv_heads) * static_cast<T>(s.head_dim);
  const T norm = s.norm == NormKind::kLayerNorm ? 2 * d : d;
  const T attention_biases = s.attention_bias ? q + 2 * kv + (s.attention_output_bias ? d : 0) : 0;
  const T attention = d * q + 2 * d * kv + q * d + attention_biases;
  const bool gated = s.mlp == MlpKind::kGated;
  const T one_mlp = (gated ? 3 : 2) * d * f + (s.mlp_bias ? (gated ? 2 : 1) * f + d : 0);
  const T experts = static_cast<T>(s.experts);
  const T mlp = s.experts > 0 ? experts * one_mlp + d * experts : one_mlp;  // plus the router, hidden x experts
  const T embedding = (vocab + static_cast<T>(s.max_positions) + static_cast<T>(s.token_types)) * d;
  const T head = s.tied_embeddings ? 0 : vocab * d;
  const T layers = static_cast<T>(s.layers);
  switch (s.family) {
    case TransformerFamily::kDecoder:
      return embedding + layers * (attention + mlp + 2 * norm) + norm + head;
    case TransformerFamily::kEncoder: {
      const T mlm_transform = d * d + d + norm;  // dense with bias, then a LayerNorm
      return embedding + norm + layers * (attention + mlp + 2 * norm) + mlm_transform + head + vocab;
    }
    case TransformerFamily::kEncoderDecoder: {
      const T relative = static_cast<T>(s.relative_attention_buckets) * static_cast<T>(s.heads);
      const T encoder = static_cast<T>(s.encoder_layers) * (attention + mlp + 2 * norm) + norm + relative;
      const T decoder = layers * (2 * attention + mlp + 3 * norm) + norm + relative;
      return embedding + encoder + decoder + head;
    }
  }
  return 0;
}

// The top-level keys a config is told by, read in one streaming pass that stops at model_type.
class ConfigProbe : public JsonSaxBase {
 public:
  bool start_object(std::size_t) override { return ++depth_ > 0; }
  bool end_object() override { return --depth_ > 0; }
  bool start_array(std::size_t) override { return ++depth_ > 1; }  // an array at the top is no config
  bool end_array() override { return --depth_ > 0; }
  bool key(string_t& key) override {
    if (depth_ != 1) return true;
    if (key == "model_type") model_type_ = true;
    layers_ = layers_ || key == "n_layer" || key == "num_hidden_layers" || key == "num_layers";
    width_ = width_ || key == "n_embd" || key == "hidden_size" || key == "d_model";
    return !model_type_;
  }
  bool looks_like_config() const { return model_type_ || (layers_ && width_); }

 private:
  int depth_ = 0;
  bool model_type_ = false, layers_ = false, width_ = false;
};

}  // namespace

absl::StatusOr<TransformerSpec> ParseHfConfig(absl::string_view json_text, absl::string_view name) {
  if (absl::Status s = CheckJsonText(json_text, "the config"); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": ", s.message()));
  }
  const Json config = Json::parse(json_text.begin(), json_text.end(), nullptr, /*allow_exceptions=*/false);
  if (!config.is_object()) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": a Hugging Face config.json is a JSON object, not ", config.type_name()));
  }
  TransformerSpec spec;
  const Json* type = json::Find(config, "model_type");
  if (type != nullptr && !type->is_string()) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": model_type must be a string (got ", type->dump(), ")"));
  }
  if (type != nullptr) {
    spec.model_type = type->get<std::string>();
  } else if (json::Find(config, "n_embd") != nullptr) {
    spec.model_type = "gpt2";  // early GPT-2 configs name no model_type
  } else {
    return absl::InvalidArgumentError(absl::StrCat(name, ": model_type is missing (one of ", SupportedTypes(), ")"));
  }
  const auto* family = std::find_if(std::begin(kFamilies), std::end(kFamilies),
                                    [&](const auto& entry) { return entry.first == spec.model_type; });
  if (family == std::end(kFamilies)) {
    return absl::UnimplementedError(
        absl::StrCat(name, ": model_type '", spec.model_type, "' is not supported; supported: ", SupportedTypes()));
  }
  const ConfigReader reader(config, name, spec.model_type);
  if (absl::Status s = family->second(reader, spec); !s.ok()) {
    if (s.code() != absl::StatusCode::kUnimplemented) return s;
    return absl::UnimplementedError(absl::StrCat(name, ": ", spec.model_type, " with ", s.message()));
  }
  if (CountParameters<double>(spec) > 0x1p62) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": the model would have more than 2^62 parameters"));
  }
  return spec;
}

bool LooksLikeHfConfig(absl::string_view json_text) {
  ConfigProbe probe;
  try {
    nlohmann::ordered_json::sax_parse(json_text.begin(), json_text.end(), &probe);
  } catch (const std::exception&) {
    return false;
  }
  return probe.looks_like_config();
}

int64_t ParameterCount(const TransformerSpec& spec) { return CountParameters<int64_t>(spec); }

}  // namespace placement
