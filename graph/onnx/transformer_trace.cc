#include "graph/onnx/transformer_trace.h"

#include <algorithm>
#include <deque>
#include <utility>

#include "graph/onnx/attributes.h"

namespace placement::onnx_import {
namespace {

// Every walk is local to a layer or two; the caps bound the work on a hostile graph that names a family.
constexpr size_t kMaxWalkNodes = 1024;
constexpr size_t kMaxAttentions = 4096;  // more layers than any model has
constexpr int kMaxMlpCandidates = 16;    // projections tried after an attention's output projection
// Identity, Cast and Transpose nodes between a weight and its reader; more than this is no export's.
constexpr int kMaxWeightHops = 8;

bool IsMatrixOp(const onnx::NodeProto& node) { return node.op_type() == "MatMul" || node.op_type() == "Gemm"; }

// A Transpose that swaps the two axes of a matrix (no perm means reversed axes).
bool SwapsMatrix(const onnx::NodeProto& node) {
  const std::vector<int64_t> perm = IntsAttr(node, "perm");
  return perm.empty() || perm == std::vector<int64_t>{1, 0};
}

}  // namespace

TransformerTrace::TransformerTrace(const onnx::GraphProto& graph, const InferredShapes& shapes,
                                   std::unordered_set<std::string> constants)
    : graph_(graph), shapes_(shapes), constants_(std::move(constants)) {
  for (int32_t n = 0; n < graph.node_size(); ++n) {
    for (const std::string& output : graph.node(n).output()) {
      if (!output.empty()) producer_.emplace(output, n);
    }
    for (const std::string& input : graph.node(n).input()) {
      if (!input.empty()) consumers_[input].push_back(n);
    }
  }
  projections_.resize(static_cast<size_t>(graph.node_size()));
  for (int32_t n = 0; n < graph.node_size(); ++n) projections_[n] = ProjectionAt(n);
}

const std::string& TransformerTrace::Source(const std::string& name) const {
  const std::string* at = &name;
  for (int hop = 0; hop < kMaxWeightHops && constants_.count(*at) == 0; ++hop) {
    auto it = producer_.find(*at);
    if (it == producer_.end()) break;
    const onnx::NodeProto& node = graph_.node(it->second);
    if ((node.op_type() != "Identity" && node.op_type() != "Cast") || node.input_size() < 1) break;
    at = &node.input(0);
  }
  return *at;
}

const TensorInfo* TransformerTrace::Info(const std::string& name) const {
  auto it = shapes_.tensors.find(name);
  return it != shapes_.tensors.end() ? &it->second : nullptr;
}

bool TransformerTrace::IsFloating(const std::string& name) const {
  const TensorInfo* info = Info(name);
  if (info == nullptr) return false;
  const int32_t t = info->elem_type;
  return t == onnx::TensorProto::FLOAT || t == onnx::TensorProto::FLOAT16 || t == onnx::TensorProto::DOUBLE ||
         t == onnx::TensorProto::BFLOAT16;
}

// Breadth first from the producers (backward) or consumers (forward) of `from`, through floating tensors only:
// shape arithmetic (Shape, Gather, Concat on int64) joins every layer to every other and is never followed.
template <typename Stop>
TransformerTrace::Walked TransformerTrace::Walk(const std::vector<std::string>& from, bool backward, Stop stop) const {
  Walked walked;
  std::deque<int32_t> queue;
  std::unordered_set<int32_t> seen;
  auto reach = [&](const std::string& tensor) {
    if (tensor.empty() || !IsFloating(tensor)) return;
    walked.tensors.insert(tensor);
    if (backward) {
      auto it = producer_.find(tensor);
      if (it != producer_.end() && seen.insert(it->second).second) queue.push_back(it->second);
      return;
    }
    auto it = consumers_.find(tensor);
    if (it == consumers_.end()) return;
    for (int32_t n : it->second) {
      if (seen.insert(n).second) queue.push_back(n);
    }
  };
  for (const std::string& tensor : from) reach(tensor);
  while (!queue.empty() && walked.nodes.size() < kMaxWalkNodes) {
    const int32_t n = queue.front();
    queue.pop_front();
    walked.nodes.push_back(n);
    if (stop(n)) {
      walked.stops.push_back(n);
      continue;
    }
    const onnx::NodeProto& node = graph_.node(n);
    for (const std::string& tensor : backward ? node.input() : node.output()) reach(tensor);
  }
  return walked;
}

std::optional<Projection> TransformerTrace::ProjectionAt(int32_t n) const {
  const onnx::NodeProto& node = graph_.node(n);
  if (!IsMatrixOp(node) || node.input_size() < 2) return std::nullopt;
  if (constants_.count(Source(node.input(0))) > 0) return std::nullopt;  // weights times activations: no Linear
  bool transposed = node.op_type() == "Gemm" && IntAttr(node, "transB", 0) != 0;
  const std::string* weight = &node.input(1);
  for (int hop = 0; constants_.count(*weight) == 0; ++hop) {
    auto it = producer_.find(*weight);
    if (hop == kMaxWeightHops || it == producer_.end()) return std::nullopt;
    const onnx::NodeProto& p = graph_.node(it->second);
    if (p.input_size() < 1) return std::nullopt;
    if (p.op_type() == "Transpose" && SwapsMatrix(p)) {
      transposed = !transposed;
    } else if (p.op_type() != "Identity" && p.op_type() != "Cast") {
      return std::nullopt;
    }
    weight = &p.input(0);
  }
  const TensorInfo* info = Info(*weight);
  if (info == nullptr || info->dims.size() != 2) return std::nullopt;
  Projection projection;
  projection.node = n;
  projection.weight = *weight;
  projection.in = info->dims[transposed ? 1 : 0];
  projection.out = info->dims[transposed ? 0 : 1];
  projection.bias = HasBias(node, projection.out);
  return projection;
}

bool TransformerTrace::HasBias(const onnx::NodeProto& node, int64_t out) const {
  if (node.op_type() == "Gemm") return node.input_size() > 2 && !node.input(2).empty();
  if (node.output_size() < 1) return false;
  auto it = consumers_.find(node.output(0));
  if (it == consumers_.end()) return false;
  for (int32_t c : it->second) {
    const onnx::NodeProto& add = graph_.node(c);
    if (add.op_type() != "Add" || add.input_size() != 2) continue;
    const std::string& other = add.input(0) == node.output(0) ? add.input(1) : add.input(0);
    const TensorInfo* info = Info(other);
    if (constants_.count(Source(other)) > 0 && info != nullptr && info->elements == out) return true;
  }
  return false;
}

bool TransformerTrace::IsMatMulOfActivations(int32_t n) const {
  const onnx::NodeProto& node = graph_.node(n);
  if (node.op_type() != "MatMul" || node.input_size() != 2 || node.output_size() != 1 || projections_[n].has_value()) {
    return false;
  }
  return constants_.count(Source(node.input(0))) == 0 && constants_.count(Source(node.input(1))) == 0;
}

std::optional<Projection> TransformerTrace::NearestProjection(const std::string& tensor, bool backward,
                                                              std::vector<int32_t>* path) const {
  const Walked walked = Walk({tensor}, backward, [&](int32_t n) { return IsMatrixOp(graph_.node(n)); });
  if (path != nullptr) *path = walked.nodes;
  for (int32_t n : walked.stops) {
    if (projections_[n].has_value()) return projections_[n];
  }
  return std::nullopt;
}

std::vector<Projection> TransformerTrace::ProjectionsFeeding(const std::string& tensor,
                                                             std::vector<int32_t>* between) const {
  const Walked walked = Walk({tensor}, /*backward=*/true, [&](int32_t n) { return IsMatrixOp(graph_.node(n)); });
  std::vector<Projection> found;
  for (int32_t n : walked.stops) {
    if (projections_[n].has_value()) found.push_back(*projections_[n]);
  }
  std::sort(found.begin(), found.end(), [](const Projection& a, const Projection& b) { return a.node < b.node; });
  for (int32_t n : walked.nodes) {
    if (!IsMatrixOp(graph_.node(n))) between->push_back(n);
  }
  return found;
}

int64_t TransformerTrace::HeadsFromReshapes(const std::vector<int32_t>& path, int64_t q_width) const {
  for (int32_t n : path) {
    const onnx::NodeProto& node = graph_.node(n);
    if (node.op_type() != "Reshape" || node.output_size() < 1) continue;
    const TensorInfo* out = Info(node.output(0));
    if (out != nullptr && out->dims.size() == 4 && out->dims[2] > 0 && out->dims[2] * out->dims[3] == q_width) {
      return out->dims[2];
    }
  }
  return 0;
}

std::optional<AttentionTrace> TransformerTrace::AttentionAt(int32_t softmax) const {
  const onnx::NodeProto& node = graph_.node(softmax);
  const TensorInfo* scores_info = node.input_size() == 1 && node.output_size() == 1 ? Info(node.input(0)) : nullptr;
  if (scores_info == nullptr || scores_info->dims.size() < 3 || scores_info->dims.size() > 4) return std::nullopt;
  auto matrix_op = [&](int32_t n) { return IsMatrixOp(graph_.node(n)); };
  const Walked to_scores = Walk({node.input(0)}, /*backward=*/true, matrix_op);
  const Walked to_values = Walk({node.output(0)}, /*backward=*/false, matrix_op);
  if (to_scores.stops.empty() || to_values.stops.empty()) return std::nullopt;
  const int32_t scores = to_scores.stops.front(), applied = to_values.stops.front();
  if (!IsMatMulOfActivations(scores) || !IsMatMulOfActivations(applied)) return std::nullopt;
  const onnx::NodeProto& pv = graph_.node(applied);
  const bool probs_first = to_values.tensors.count(pv.input(0)) > 0 || pv.input(0) == node.output(0);
  AttentionTrace a;
  a.softmax = softmax;
  std::vector<int32_t> q_path;
  std::optional<Projection> q = NearestProjection(graph_.node(scores).input(0), true, &q_path);
  std::optional<Projection> k = NearestProjection(graph_.node(scores).input(1), true);
  std::optional<Projection> v = NearestProjection(pv.input(probs_first ? 1 : 0), true);
  std::optional<Projection> o = NearestProjection(pv.output(0), false);
  if (!q || !k || !v || !o) return std::nullopt;
  a.q = *q, a.k = *k, a.v = *v, a.o = *o;
  a.fused_qkv = a.q.node == a.k.node && a.k.node == a.v.node;
  const int64_t q_width = a.fused_qkv ? a.q.out / 3 : a.q.out;
  a.heads = scores_info->dims.size() == 4 ? scores_info->dims[1] : HeadsFromReshapes(q_path, q_width);
  return a;
}

std::vector<AttentionTrace> TransformerTrace::Attentions() const {
  std::vector<AttentionTrace> found;
  for (int32_t n = 0; n < graph_.node_size() && found.size() < kMaxAttentions; ++n) {
    if (graph_.node(n).op_type() != "Softmax") continue;
    if (std::optional<AttentionTrace> a = AttentionAt(n)) found.push_back(*std::move(a));
  }
  return found;
}

std::optional<MlpTrace> TransformerTrace::MlpAfter(const AttentionTrace& attention) const {
  int candidates = 0;
  for (int32_t n = attention.o.node + 1; n < graph_.node_size() && candidates < kMaxMlpCandidates; ++n) {
    if (!projections_[n].has_value()) continue;
    ++candidates;
    std::vector<int32_t> between;
    std::vector<Projection> feeding = ProjectionsFeeding(graph_.node(n).input(0), &between);
    const bool reads_attention =
        std::any_of(feeding.begin(), feeding.end(), [&](const Projection& p) { return p.node == attention.o.node; });
    // An up projection reads the attention's output (through the residual and the norm); the down projection
    // reads only the up projections.
    if (feeding.empty() || reads_attention) continue;
    MlpTrace mlp;
    mlp.up = std::move(feeding);
    mlp.down = *projections_[n];
    std::vector<const onnx::NodeProto*> activation;
    for (int32_t b : between) activation.push_back(&graph_.node(b));
    mlp.activation = ActivationOf(activation);
    return mlp;
  }
  return std::nullopt;
}

std::optional<Projection> TransformerTrace::OutputLayer(int64_t hidden, int64_t vocab) const {
  for (int32_t n = graph_.node_size() - 1; n >= 0; --n) {
    if (projections_[n].has_value() && projections_[n]->in == hidden && projections_[n]->out == vocab) {
      return projections_[n];
    }
  }
  return std::nullopt;
}

std::string ActivationOf(const std::vector<const onnx::NodeProto*>& nodes) {
  auto has = [&](const char* op_type) {
    return std::any_of(nodes.begin(), nodes.end(), [&](const onnx::NodeProto* n) { return n->op_type() == op_type; });
  };
  for (const onnx::NodeProto* n : nodes) {
    if (n->op_type() == "Gelu") return StringAttr(*n, "approximate", "none") == "tanh" ? "gelu_new" : "gelu";
  }
  if (has("Erf")) return "gelu";
  if (has("Tanh")) return "gelu_new";  // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
  if (has("Sigmoid")) return "silu";   // x sigmoid(x)
  if (has("Relu")) return "relu";
  return "";
}

}  // namespace placement::onnx_import
