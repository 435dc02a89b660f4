#include "graph/fused_costs.h"

#include "absl/strings/str_cat.h"
#include "graph/cost_model.h"
#include "graph/fused_patterns.h"
#include "graph/op_class.h"

namespace placement {
namespace {

// The operator type each pattern is one kernel of, for its class.
absl::string_view FusedType(FusedKind kind) {
  switch (kind) {
    case FusedKind::kGelu:
      return "Gelu";
    case FusedKind::kSilu:
      return "Sigmoid";
    case FusedKind::kLayerNorm:
      return "LayerNormalization";
    case FusedKind::kPaddedPool:
      return "AveragePool";
    case FusedKind::kLinearBias:
      return "MatMul";
  }
  return "Gelu";
}

// The work of the fused kernel: a GELU or a layer normalization costs what the importer gives its ONNX operator
// (8 FLOPs per output element; the pattern's last operator does one per element); the others what their operators
// add up to. Bytes: the input read, the output written, and the weights, once.
struct FusedWork {
  double flops = 0;
  double bytes = 0;
};

FusedWork WorkOf(const Graph& g, const FusedPatterns& p, int32_t i) {
  const OpId last = p.ops[p.begin[i + 1] - 1];
  FusedWork w;
  w.bytes = static_cast<double>(g.tensor(p.input[i]).bytes + g.tensor(g.first_output(last)).bytes);
  for (int32_t k = p.begin[i]; k < p.begin[i + 1]; ++k) {
    w.bytes += static_cast<double>(g.param_bytes(p.ops[k]));
    w.flops += g.flops(p.ops[k]);
  }
  if (p.kind[i] == FusedKind::kGelu || p.kind[i] == FusedKind::kLayerNorm) w.flops = 8 * g.flops(last);
  return w;
}

bool AnyMeasured(const Graph& g, absl::Span<const OpId> ops, absl::Span<const OpId> grads) {
  for (OpId u : ops) {
    if (!g.measured(u).empty()) return true;
  }
  for (OpId u : grads) {
    if (u != kNone && !g.measured(u).empty()) return true;
  }
  return false;
}

}  // namespace

void PriceFusedPatterns(const Graph& g, const Topology& topology, absl::Span<const DeviceId> kind_device,
                        std::vector<double>& time) {
  const FusedPatterns patterns = FindFusedPatterns(g);
  const size_t n = static_cast<size_t>(g.num_ops());
  const bool training = g.has_backward();
  std::vector<OpId> grads;
  for (int32_t i = 0; i < patterns.size(); ++i) {
    const absl::Span<const OpId> ops =
        absl::MakeConstSpan(patterns.ops).subspan(patterns.begin[i], patterns.begin[i + 1] - patterns.begin[i]);
    grads.clear();
    for (OpId u : ops) grads.push_back(training ? g.FindOp(absl::StrCat(g.name(u), "/grad")) : kNone);
    if (AnyMeasured(g, ops, grads)) continue;
    const OpId last = ops.back(), last_grad = grads.back();
    const FusedWork forward = WorkOf(g, patterns, i);
    // The step gave each gradient a share of its forward operator's work; the fused backward takes the last one's,
    // a Linear's the product's (its input gradient; the weight's is the product's own /wgrad, kept as it is).
    const size_t leading = patterns.kind[i] == FusedKind::kLinearBias ? 0 : ops.size() - 1;
    const double share = grads[leading] != kNone && g.bytes_accessed(ops[leading]) > 0
                             ? g.bytes_accessed(grads[leading]) / g.bytes_accessed(ops[leading])
                             : 0;
    // No share: the pattern's input needs no gradient (a first layer reading the data), and its backward runs none.
    const FusedWork backward{forward.flops * share, forward.bytes * share};
    const OpClass c = ClassOfType(FusedType(patterns.kind[i]));
    for (size_t k = 0; k < kind_device.size(); ++k) {
      const Device& d = topology.device(kind_device[k]);
      for (size_t m = 0; m < ops.size(); ++m) {
        time[k * n + ops[m]] = ops[m] == last ? KernelSeconds(c, forward.flops, forward.bytes, d, false) : 0;
        if (grads[m] != kNone)
          time[k * n + grads[m]] =
              grads[m] == last_grad && share > 0 ? KernelSeconds(c, backward.flops, backward.bytes, d, true) : 0;
      }
    }
  }
}

}  // namespace placement
