// The graph walks behind transformer recognition (transformer_recognition.h): finding a transformer layer's
// projections by where they sit in the data flow rather than by name, because exports rarely keep the names.
// The TorchScript exporter folds each Linear's transposed weight into a new initializer "onnx::MatMul_N" and
// the dynamo exporter into "val_N"; both merge equal initializers (zero biases, unit norm weights) into one, so
// a bias's name may be another layer's. What survives is the pattern every attention layer computes:
//
//   q = x Wq, k = x Wk, v = x Wv  ->  scores = q k^T (scaled, masked)  ->  Softmax  ->  probs v  ->  o = . Wo
//
// and the MLP after it: one or two up projections of the attention's result feeding a down projection.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <onnx/onnx_pb.h>

#include "graph/onnx/infer_shapes.h"

namespace placement::onnx_import {

// A MatMul or Gemm multiplying activations by a constant matrix: a Linear layer (or GPT-2's Conv1D).
struct Projection {
  int32_t node = -1;
  std::string weight;  // the constant read, past Identity, Cast and Transpose: an initializer or weight input
  int64_t in = 0;      // features in
  int64_t out = 0;     // features out
  bool bias = false;   // Gemm's C, or an Add of a constant vector of `out` elements to the product
};

// One attention layer's projections.
struct AttentionTrace {
  int32_t softmax = -1;
  Projection q, k, v, o;
  // One projection gives q, k and v (GPT-2's c_attn, split in three): q, k and v are that projection.
  bool fused_qkv = false;
  // From the Softmax's input [batch, heads, q, k], else from a Reshape to [batch, seq, heads, head_dim] on the
  // way from the q projection to the scores; 0 when neither says.
  int64_t heads = 0;
};

struct MlpTrace {
  std::vector<Projection> up;  // one for a plain MLP; two (gate and up, in node order) for a gated one
  Projection down;
  // As a config names it ("gelu", "gelu_new", "silu", "relu") from the ops between the up and down
  // projections; "" when none of those is there.
  std::string activation;
};

class TransformerTrace {
 public:
  // `constants`: the names that hold weights (initializers and weight inputs). The graph and shapes must
  // outlive the trace.
  TransformerTrace(const onnx::GraphProto& graph, const InferredShapes& shapes,
                   std::unordered_set<std::string> constants);

  // The attention layers, in node order: each Softmax over rank-3 or rank-4 scores that a product of two
  // activations computes and whose probabilities a second such product applies to the values.
  std::vector<AttentionTrace> Attentions() const;
  // The MLP that follows an attention: the first projection after its output projection (in node order) that
  // reads projections other than that one, and what it reads.
  std::optional<MlpTrace> MlpAfter(const AttentionTrace& attention) const;
  // The last projection (in node order) from `hidden` features to `vocab`: a language-model head.
  std::optional<Projection> OutputLayer(int64_t hidden, int64_t vocab) const;

  // The tensor an Identity/Cast chain ending in `name` reads, or `name` itself (a reference into the graph or
  // to `name`, which must outlive it).
  const std::string& Source(const std::string& name) const;
  const TensorInfo* Info(const std::string& name) const;

 private:
  struct Walked {
    std::vector<int32_t> nodes;               // visited, nearest first (the stops included)
    std::vector<int32_t> stops;               // where `stop` said to stop
    std::unordered_set<std::string> tensors;  // floating tensors reached
  };
  template <typename Stop>
  Walked Walk(const std::vector<std::string>& from, bool backward, Stop stop) const;

  std::optional<Projection> ProjectionAt(int32_t node) const;
  std::optional<AttentionTrace> AttentionAt(int32_t softmax) const;
  std::optional<Projection> NearestProjection(const std::string& tensor, bool backward,
                                              std::vector<int32_t>* path = nullptr) const;
  std::vector<Projection> ProjectionsFeeding(const std::string& tensor, std::vector<int32_t>* between) const;
  bool HasBias(const onnx::NodeProto& node, int64_t out) const;
  bool IsFloating(const std::string& name) const;
  bool IsMatMulOfActivations(int32_t node) const;
  int64_t HeadsFromReshapes(const std::vector<int32_t>& path, int64_t q_width) const;

  const onnx::GraphProto& graph_;
  const InferredShapes& shapes_;
  std::unordered_set<std::string> constants_;
  std::unordered_map<std::string, int32_t> producer_;
  std::unordered_map<std::string, std::vector<int32_t>> consumers_;
  std::vector<std::optional<Projection>> projections_;  // per node
};

// "gelu", "gelu_new", "silu" or "relu" from the op types of an MLP's activation; "" when none matches.
std::string ActivationOf(const std::vector<const onnx::NodeProto*>& nodes);

}  // namespace placement::onnx_import
