#include "graph/pipelined_memory.h"

#include "absl/strings/match.h"
#include "graph/op_class.h"

namespace placement {
namespace {

// Whether autograd keeps tensor t of forward operator u for the backward, given that a backward operator reads it.
// An answer of the model (an output no forward operator reads) is read by its operator's backward because the
// loss's gradient starts there, not because autograd keeps it; what a final operator saves beside its answers
// (a final Linear's 16-bit weight copy under autocast, max pooling's indices) is its last output.
bool Kept(const Graph& g, OpId u, TensorId t) {
  for (const Edge& e : g.out_edges(u)) {
    if (!g.is_backward(e.dst)) return true;
  }
  return g.num_outputs(u) > 1 && t == g.first_output(u) + g.num_outputs(u) - 1;
}

}  // namespace

bool IsWeightGradientType(absl::string_view op_type) { return absl::EndsWith(op_type, "WeightGrad"); }

std::vector<int64_t> KeptForBackwardBytes(const Graph& g) {
  std::vector<int64_t> kept(g.num_ops(), 0);
  std::vector<uint8_t> counted(g.num_tensors(), 0);
  for (EdgeId e = 0; e < g.num_edges(); ++e) {
    const Edge& edge = g.edge(e);
    if (g.is_backward(edge.src) || !g.is_backward(edge.dst) || !IsBackwardType(g.op_type(edge.dst))) continue;
    const TensorId t = g.edge_tensor(e);
    if (counted[t] || !Kept(g, edge.src, t)) continue;
    counted[t] = 1;
    kept[edge.src] += g.tensor(t).bytes;
  }
  return kept;
}

std::vector<int64_t> PipelinedBytes(const Graph& g, int32_t in_flight) {
  std::vector<int64_t> bytes = KeptForBackwardBytes(g);
  for (OpId v = 0; v < g.num_ops(); ++v) {
    bytes[v] = g.param_bytes(v) + bytes[v] * in_flight;
    if (!g.is_backward(v) || !IsWeightGradientType(g.op_type(v))) continue;
    for (int32_t k = 0; k < g.num_outputs(v); ++k) bytes[v] += g.tensor(g.first_output(v) + k).bytes;
  }
  return bytes;
}

}  // namespace placement
