#include "graph/onnx/attention_fusion.h"

#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "graph/onnx/attributes.h"
#include "graph/onnx/newer_ops.h"
#include "graph/onnx/op_costs.h"

namespace placement::onnx_import {
namespace {

constexpr int kMaxMaskOps = 2;       // a mask, and a second one (a causal mask and a padding mask)
constexpr double kSoftmaxFlops = 5;  // per score: as the Softmax rule prices it (op_costs.cc)

// One recognized attention: its nodes (the final MatMul last) and the tensors the fused operator reads.
struct Attention {
  std::vector<int32_t> nodes;
  std::string q, k_transposed, v;
  std::vector<std::string> masks;
};

class Matcher {
 public:
  Matcher(const onnx::GraphProto& graph, const GraphIndex& index, const InferredShapes& shapes)
      : graph_(graph), index_(index), shapes_(shapes) {
    for (int32_t n = 0; n < graph.node_size(); ++n) {
      for (const std::string& in : graph.node(n).input()) {
        if (!in.empty()) readers_[in].push_back(n);
      }
    }
    for (const onnx::ValueInfoProto& out : graph.output()) graph_outputs_.insert(out.name());
    for (const onnx::TensorProto& init : graph.initializer()) initializers_.insert(init.name());
  }

  // The attention whose Softmax is node `softmax`, if it is one; its last MatMul is the last of its nodes.
  bool Match(int32_t softmax, Attention* a) const {
    const onnx::NodeProto& node = graph_.node(softmax);
    if (node.input_size() < 1 || node.output_size() < 1 || !LastAxis(node)) return false;
    if (!Scores(node.input(0), softmax, kMaxMaskOps, a)) return false;
    a->nodes.push_back(softmax);
    const int32_t product = Probabilities(node.output(0), a);
    if (product < 0) return false;
    a->v = graph_.node(product).input(1);
    a->nodes.push_back(product);
    return true;
  }

  const TensorInfo* Info(const std::string& name) const {
    auto it = shapes_.tensors.find(name);
    return it == shapes_.tensors.end() ? nullptr : &it->second;
  }

  const std::vector<int32_t>& Readers(const std::string& t) const {
    static const std::vector<int32_t> kNoReaders;
    auto it = readers_.find(t);
    return it == readers_.end() ? kNoReaders : it->second;
  }

  bool IsGraphOutput(const std::string& t) const { return graph_outputs_.count(t) > 0; }

 private:
  bool Is(int32_t n, const char* type) const {
    if (n < 0) return false;
    const onnx::NodeProto& node = graph_.node(n);
    return node.op_type() == type && (node.domain().empty() || node.domain() == "ai.onnx");
  }

  // The node that makes t; -1 for graph inputs and initializers.
  int32_t Producer(const std::string& t) const {
    auto it = index_.producers.find(t);
    return it == index_.producers.end() ? -1 : it->second.node;
  }

  // The one node reading t, or -1 (also when t is an output of the graph, which must stay).
  int32_t OnlyReader(const std::string& t) const {
    const std::vector<int32_t>& readers = Readers(t);
    return readers.size() == 1 && !IsGraphOutput(t) ? readers.front() : -1;
  }

  // A scalar the export computes from constants alone: sqrt(scale), a fill value.
  bool IsScalarConstant(const std::string& t) const {
    const TensorInfo* info = Info(t);
    if (info == nullptr || info->elements != 1) return false;
    return shapes_.folded.count(t) > 0 || initializers_.count(t) > 0 || Is(Producer(t), "Constant");
  }

  bool LastAxis(const onnx::NodeProto& softmax) const {
    const TensorInfo* x = Info(softmax.input(0));
    if (x == nullptr || x->dims.empty()) return false;
    const int64_t axis = IntAttr(softmax, "axis", -1);
    return axis == -1 || axis == static_cast<int64_t>(x->dims.size()) - 1;
  }

  // The product of the scaled q and k^T behind tensor t (read by `reader` alone), through at most `masks` Add or
  // Where operators, whose other inputs are the masks.
  bool Scores(const std::string& t, int32_t reader, int masks, Attention* a) const {
    const int32_t p = Producer(t);
    if (p < 0 || OnlyReader(t) != reader) return false;
    if (Is(p, "MatMul")) return ScaledProduct(p, a);
    if (masks == 0 || !(Is(p, "Add") || Is(p, "Where"))) return false;
    const onnx::NodeProto& node = graph_.node(p);
    for (int k = 0; k < node.input_size(); ++k) {
      Attention trial = *a;
      if (!Scores(node.input(k), p, masks - 1, &trial)) continue;
      for (int j = 0; j < node.input_size(); ++j) {
        if (j != k && !IsScalarConstant(node.input(j))) trial.masks.push_back(node.input(j));
      }
      trial.nodes.push_back(p);
      *a = std::move(trial);
      return true;
    }
    return false;
  }

  // MatMul(Mul(q, c), Mul(k^T, c')) with c and c' scalar constants, each product read by the MatMul alone.
  bool ScaledProduct(int32_t matmul, Attention* a) const {
    const onnx::NodeProto& product = graph_.node(matmul);
    if (product.input_size() != 2) return false;
    std::string operand[2];
    for (int k = 0; k < 2; ++k) {
      const std::string& t = product.input(k);
      const int32_t mul = Producer(t);
      if (!Is(mul, "Mul") || OnlyReader(t) != matmul || graph_.node(mul).input_size() != 2) return false;
      const onnx::NodeProto& scale = graph_.node(mul);
      if (IsScalarConstant(scale.input(1)) && !IsScalarConstant(scale.input(0))) {
        operand[k] = scale.input(0);
      } else if (IsScalarConstant(scale.input(0)) && !IsScalarConstant(scale.input(1))) {
        operand[k] = scale.input(1);
      } else {
        return false;
      }
      a->nodes.push_back(mul);
    }
    a->q = operand[0];
    a->k_transposed = operand[1];
    a->nodes.push_back(matmul);
    return true;
  }

  // The MatMul of the probabilities (the Softmax's output t) and v, through the NaN guard and a dropout; -1 when
  // the probabilities go anywhere else.
  int32_t Probabilities(std::string t, Attention* a) const {
    const std::vector<int32_t>& readers = Readers(t);
    if (IsGraphOutput(t)) return -1;
    if (readers.size() == 2) {  // Where(IsNaN(p), 0, p)
      const int32_t isnan = Is(readers[0], "IsNaN") ? readers[0] : readers[1];
      const int32_t where = isnan == readers[0] ? readers[1] : readers[0];
      if (!Is(isnan, "IsNaN") || !Is(where, "Where") || graph_.node(isnan).output_size() != 1) return -1;
      const onnx::NodeProto& guard = graph_.node(where);
      if (OnlyReader(graph_.node(isnan).output(0)) != where || guard.input_size() != 3 ||
          guard.input(0) != graph_.node(isnan).output(0) || guard.input(2) != t || !IsScalarConstant(guard.input(1))) {
        return -1;
      }
      a->nodes.push_back(isnan);
      a->nodes.push_back(where);
      t = guard.output(0);
    } else if (readers.size() != 1) {
      return -1;
    }
    int32_t next = OnlyReader(t);
    if (Is(next, "Dropout")) {
      const onnx::NodeProto& dropout = graph_.node(next);
      if (dropout.output_size() > 1 && !dropout.output(1).empty() &&
          (!Readers(dropout.output(1)).empty() || IsGraphOutput(dropout.output(1)))) {
        return -1;
      }
      a->nodes.push_back(next);
      t = dropout.output(0);
      next = OnlyReader(t);
    }
    if (!Is(next, "MatMul") || graph_.node(next).input_size() != 2 || graph_.node(next).input(0) != t) return -1;
    return next;
  }

  const onnx::GraphProto& graph_;
  const GraphIndex& index_;
  const InferredShapes& shapes_;
  std::unordered_map<std::string, std::vector<int32_t>> readers_;
  std::unordered_set<std::string> graph_outputs_;
  std::unordered_set<std::string> initializers_;
};

bool KnownShape(const TensorInfo* t) {
  if (t == nullptr || t->dims.size() < 2) return false;
  for (int64_t d : t->dims) {
    if (d <= 0) return false;
  }
  return true;
}

// The fused kernel's work: both products (scores x head dim, scores x value dim multiply-accumulates) and the
// softmax over the scores; bytes: q, k, v and the masks read, the output written. False when a shape is unknown.
bool UnitCost(const Matcher& m, const onnx::NodeProto& product, const Attention& a, OpCost* cost) {
  const TensorInfo* q = m.Info(a.q);
  const TensorInfo* out = product.output_size() == 1 ? m.Info(product.output(0)) : nullptr;
  const TensorInfo* scores = m.Info(product.input(0));
  if (!KnownShape(q) || !KnownShape(out) || !KnownShape(scores)) return false;
  const double score_count = static_cast<double>(scores->elements);
  cost->macs = score_count * static_cast<double>(q->dims.back() + out->dims.back());
  cost->flops = 2 * cost->macs + kSoftmaxFlops * score_count;
  cost->bytes_accessed = static_cast<double>(out->bytes);
  for (const std::string* name : {&a.q, &a.k_transposed, &a.v}) {
    const TensorInfo* t = m.Info(*name);
    if (t == nullptr) return false;
    cost->bytes_accessed += static_cast<double>(t->bytes);
  }
  for (const std::string& mask : a.masks) {
    if (const TensorInfo* t = m.Info(mask)) cost->bytes_accessed += static_cast<double>(t->bytes);
  }
  return true;
}

void MakeFused(const Attention& a, const OpCost& cost, onnx::NodeProto* product) {
  product->clear_input();
  for (const std::string* name : {&a.q, &a.k_transposed, &a.v}) product->add_input(*name);
  for (const std::string& mask : a.masks) product->add_input(mask);
  product->set_op_type(kAttentionOpType);
  product->set_domain(kInternalDomain);
  product->clear_attribute();
  onnx::AttributeProto* unit = product->add_attribute();
  unit->set_name(kUnitCostAttribute);
  unit->set_type(onnx::AttributeProto::FLOATS);
  for (double v : {cost.flops, cost.bytes_accessed, cost.macs}) unit->add_floats(static_cast<float>(v));
}

// Constant nodes whose every output is read only by removed nodes: the scales and fill values of the patterns.
void RemoveOrphanedConstants(const onnx::GraphProto& graph, const Matcher& m, std::vector<bool>* removed) {
  for (int32_t n = 0; n < graph.node_size(); ++n) {
    const onnx::NodeProto& node = graph.node(n);
    if ((*removed)[n] || node.op_type() != "Constant" || node.input_size() != 0) continue;
    bool orphaned = true;
    for (const std::string& out : node.output()) {
      if (m.IsGraphOutput(out)) orphaned = false;
      for (int32_t reader : m.Readers(out)) orphaned = orphaned && (*removed)[reader];
    }
    (*removed)[n] = orphaned;
  }
}

}  // namespace

int32_t FuseScaledDotProductAttention(onnx::GraphProto* graph, const GraphIndex& index, const InferredShapes& shapes) {
  std::vector<bool> removed(graph->node_size(), false);
  std::vector<std::pair<Attention, OpCost>> found;
  {
    const Matcher m(*graph, index, shapes);
    for (int32_t n = 0; n < graph->node_size(); ++n) {
      const onnx::NodeProto& node = graph->node(n);
      if (node.op_type() != "Softmax" || !(node.domain().empty() || node.domain() == "ai.onnx")) continue;
      Attention a;
      OpCost cost;
      if (!m.Match(n, &a) || !UnitCost(m, graph->node(a.nodes.back()), a, &cost)) continue;
      for (size_t k = 0; k + 1 < a.nodes.size(); ++k) removed[a.nodes[k]] = true;
      found.emplace_back(std::move(a), cost);
    }
    if (found.empty()) return 0;
    RemoveOrphanedConstants(*graph, m, &removed);
  }
  for (const auto& [a, cost] : found) MakeFused(a, cost, graph->mutable_node(a.nodes.back()));
  google::protobuf::RepeatedPtrField<onnx::NodeProto> kept;
  kept.Reserve(graph->node_size());
  for (int32_t n = 0; n < graph->node_size(); ++n) {
    if (!removed[n]) *kept.Add() = std::move(*graph->mutable_node(n));
  }
  graph->mutable_node()->Swap(&kept);
  return static_cast<int32_t>(found.size());
}

}  // namespace placement::onnx_import
