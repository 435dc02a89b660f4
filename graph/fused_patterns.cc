#include "graph/fused_patterns.h"

#include <initializer_list>
#include <utility>

#include "graph/saved_tensors.h"

namespace placement {
namespace {

// Operators whose outputs are constants of the export (scalars such as GELU's sqrt(2) or layer norm's epsilon).
bool IsConstantOp(const Graph& g, OpId u) {
  const absl::string_view type = g.op_type(u);
  return type == "Constant" || type == "ConstantOfShape" || type == "Identity";
}

class Matcher {
 public:
  explicit Matcher(const Graph& g) : g_(g) {}

  bool Is(OpId u, absl::string_view type) const { return u != kNone && g_.op_type(u) == type; }

  // The one forward operator that reads u's output, or kNone. In a training step the backward also reads what
  // autograd saved, sometimes as outputs of their own (an autocast product's 16-bit weight copy); those readers do
  // not count.
  OpId OnlyConsumer(OpId u) const {
    if (u == kNone || g_.num_outputs(u) < 1) return kNone;
    OpId only = kNone;
    for (const Edge& e : g_.out_edges(u)) {
      if (g_.is_backward(e.dst)) continue;
      if (e.src_output != 0 || only != kNone) return kNone;
      only = e.dst;
    }
    return only;
  }

  // The tensors u reads from operators that are no constants (an operand read from a weight is no edge).
  int32_t ActivationInputs(OpId u, TensorId* first = nullptr, TensorId* second = nullptr) const {
    int32_t count = 0;
    for (EdgeId e : g_.in_edges(u)) {
      if (IsConstantOp(g_, g_.edge(e).src)) continue;
      if (count == 0 && first != nullptr) *first = g_.edge_tensor(e);
      if (count == 1 && second != nullptr) *second = g_.edge_tensor(e);
      ++count;
    }
    return count;
  }

  // u's one activation input, or kNone.
  TensorId OnlyActivationInput(OpId u) const {
    TensorId t = kNone;
    return u != kNone && ActivationInputs(u, &t) == 1 ? t : kNone;
  }

  bool Reads(OpId u, TensorId t) const {
    for (EdgeId e : g_.in_edges(u)) {
      if (g_.edge_tensor(e) == t) return true;
    }
    return false;
  }

  OpId Producer(TensorId t) const { return t == kNone ? kNone : g_.tensor_producer(t); }

 private:
  const Graph& g_;
};

void Add(FusedPatterns* out, FusedKind kind, TensorId input, std::initializer_list<OpId> ops) {
  out->kind.push_back(kind);
  out->input.push_back(input);
  for (OpId u : ops) out->ops.push_back(u);
  out->begin.push_back(static_cast<int32_t>(out->ops.size()));
}

// gelu(x) with erf, as torch's exporter writes it before opset 20: Mul(Mul(x, Add(Erf(Div(x, sqrt 2)), 1)), 0.5).
void MatchGelu(const Matcher& m, OpId erf, FusedPatterns* out) {
  const OpId div = m.Producer(m.OnlyActivationInput(erf));
  if (!(m.Is(div, "Div") || m.Is(div, "Mul")) || m.OnlyConsumer(div) != erf) return;
  const TensorId x = m.OnlyActivationInput(div);
  const OpId add = m.OnlyConsumer(erf);
  if (x == kNone || !m.Is(add, "Add") || m.OnlyActivationInput(add) == kNone) return;
  const OpId product = m.OnlyConsumer(add);
  if (!m.Is(product, "Mul") || !m.Reads(product, x)) return;
  const OpId half = m.OnlyConsumer(product);
  if (m.Is(half, "Mul") && m.OnlyActivationInput(half) != kNone) {
    Add(out, FusedKind::kGelu, x, {div, erf, add, product, half});
  } else {
    Add(out, FusedKind::kGelu, x, {div, erf, add, product});
  }
}

// silu(x): Mul(x, Sigmoid(x)).
void MatchSilu(const Matcher& m, const Graph& g, OpId sigmoid, FusedPatterns* out) {
  const TensorId x = m.OnlyActivationInput(sigmoid);
  const OpId product = m.OnlyConsumer(sigmoid);
  if (x == kNone || !m.Is(product, "Mul") || g.in_degree(product) != 2 || !m.Reads(product, x)) return;
  Add(out, FusedKind::kSilu, x, {sigmoid, product});
}

// layer_norm(x) before opset 17: Div(Sub(x, ReduceMean(x)), Sqrt(Add(ReduceMean(Pow(Sub, 2)), eps))).
void MatchLayerNorm(const Matcher& m, const Graph& g, OpId div, FusedPatterns* out) {
  TensorId numerator = kNone, denominator = kNone;
  if (m.ActivationInputs(div, &numerator, &denominator) != 2) return;
  OpId sub = m.Producer(numerator), sqrt = m.Producer(denominator);
  if (!m.Is(sub, "Sub")) std::swap(sub, sqrt);
  if (!m.Is(sub, "Sub") || !m.Is(sqrt, "Sqrt")) return;
  const OpId add = m.Producer(m.OnlyActivationInput(sqrt));
  const OpId variance = m.Producer(m.OnlyActivationInput(add));
  const OpId pow = m.Producer(m.OnlyActivationInput(variance));
  if (!m.Is(add, "Add") || !m.Is(variance, "ReduceMean") || !m.Is(pow, "Pow")) return;
  TensorId x = kNone, mean_tensor = kNone;
  if (m.ActivationInputs(sub, &x, &mean_tensor) != 2) return;
  OpId mean = m.Producer(mean_tensor);
  if (!m.Is(mean, "ReduceMean")) {
    std::swap(x, mean_tensor);
    mean = m.Producer(mean_tensor);
  }
  if (!m.Is(mean, "ReduceMean") || m.OnlyActivationInput(mean) != x || m.OnlyActivationInput(pow) == kNone ||
      m.Producer(m.OnlyActivationInput(pow)) != sub) {
    return;
  }
  // The elementwise affine: a Mul by the weight and an Add of the bias, each reading nothing else of the model.
  const OpId scale = m.OnlyConsumer(div);
  if (m.Is(scale, "Mul") && m.OnlyActivationInput(scale) != kNone && g.param_bytes(scale) > 0) {
    Add(out, FusedKind::kLayerNorm, x, {mean, sub, pow, variance, add, sqrt, div, scale});
  } else {
    Add(out, FusedKind::kLayerNorm, x, {mean, sub, pow, variance, add, sqrt, div});
  }
}

// avg_pool2d(x, padding=p), which torch's exporter writes as Pad then AveragePool.
void MatchPaddedPool(const Matcher& m, OpId pad, FusedPatterns* out) {
  const TensorId x = m.OnlyActivationInput(pad);
  const OpId pool = m.OnlyConsumer(pad);
  if (x == kNone || !m.Is(pool, "AveragePool")) return;
  Add(out, FusedKind::kPaddedPool, x, {pad, pool});
}

// A weight reaching u along an edge: laid out for it (the Transpose before a MatMul, which holds the weight), or an
// Identity of an initializer (how an exporter aliases equal initializers: a model not yet trained has equal
// biases, all zero, read through Identities of one).
bool WeightSource(const Graph& g, OpId src) {
  if (g.param_bytes(src) > 0 && IsLayoutOp(g.op_type(src))) return true;
  return g.op_type(src) == "Identity" && g.in_degree(src) == 0;
}

// linear(x, W, b): MatMul(x, W^T) then Add(b), as both exporters write a Linear on an input of more than two
// dimensions; eager PyTorch flattens a contiguous input and runs one addmm, the bias in the matrix product. The
// MatMul reads a weight and one activation, the Add the MatMul's output and a bias that is a weight too.
void MatchLinearBias(const Matcher& m, const Graph& g, OpId matmul, FusedPatterns* out) {
  bool weight = g.param_bytes(matmul) > 0;
  TensorId x = kNone;
  int32_t activations = 0;
  for (EdgeId e : g.in_edges(matmul)) {
    if (WeightSource(g, g.edge(e).src)) {
      weight = true;
    } else if (!IsConstantOp(g, g.edge(e).src)) {
      x = g.edge_tensor(e);
      ++activations;
    }
  }
  const OpId add = m.OnlyConsumer(matmul);
  if (!weight || activations != 1 || !m.Is(add, "Add") || m.ActivationInputs(add) != 1) return;
  bool bias = g.param_bytes(add) > 0;
  for (EdgeId e : g.in_edges(add)) bias = bias || (WeightSource(g, g.edge(e).src) && g.edge(e).bytes > 4);
  if (bias) Add(out, FusedKind::kLinearBias, x, {matmul, add});
}

}  // namespace

FusedPatterns FindFusedPatterns(const Graph& g) {
  FusedPatterns out;
  const Matcher m(g);
  for (OpId u : g.topo_order()) {
    const absl::string_view type = g.op_type(u);
    if (type == "Erf") {
      MatchGelu(m, u, &out);
    } else if (type == "Sigmoid") {
      MatchSilu(m, g, u, &out);
    } else if (type == "Div") {
      MatchLayerNorm(m, g, u, &out);
    } else if (type == "Pad") {
      MatchPaddedPool(m, u, &out);
    } else if (type == "MatMul") {
      MatchLinearBias(m, g, u, &out);
    }
  }
  return out;
}

}  // namespace placement
