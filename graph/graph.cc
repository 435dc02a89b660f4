#include "graph/graph.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <queue>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/status_macros.h"

namespace placement {
namespace {

// Interns strings into a table; index kNone for the empty string when `empty_is_none`.
class Interner {
 public:
  explicit Interner(std::vector<std::string>* table) : table_(table) {}
  int32_t Intern(const std::string& s, bool empty_is_none) {
    if (s.empty() && empty_is_none) return kNone;
    auto [it, inserted] = index_.try_emplace(s, static_cast<int32_t>(table_->size()));
    if (inserted) table_->push_back(s);
    return it->second;
  }

 private:
  std::vector<std::string>* table_;
  absl::flat_hash_map<std::string, int32_t> index_;
};

absl::Status CheckNumber(absl::string_view op, absl::string_view field, double v) {
  if (std::isnan(v)) return absl::InvalidArgumentError(absl::StrCat("operator '", op, "': ", field, " is NaN"));
  if (std::isinf(v)) return absl::InvalidArgumentError(absl::StrCat("operator '", op, "': ", field, " is infinite"));
  if (v < 0) return absl::InvalidArgumentError(absl::StrCat("operator '", op, "': ", field, " is negative (", v, ")"));
  return absl::OkStatus();
}

absl::Status CheckBytes(absl::string_view op, absl::string_view field, int64_t v) {
  if (v < 0) return absl::InvalidArgumentError(absl::StrCat("operator '", op, "': ", field, " is negative (", v, ")"));
  return absl::OkStatus();
}

absl::Status ValidateOp(const OpSpec& op) {
  if (op.name.empty()) return absl::InvalidArgumentError("an operator has an empty name");
  absl::Status s;
  for (const auto& [kind, seconds] : op.measured_seconds) {
    if (kind.empty())
      return absl::InvalidArgumentError(
          absl::StrCat("operator '", op.name, "': measured time with an empty device kind"));
    if (!(s = CheckNumber(op.name, absl::StrCat("measured time on ", kind), seconds)).ok()) return s;
  }
  for (size_t i = 0; i < op.measured_seconds.size(); ++i) {
    for (size_t j = i + 1; j < op.measured_seconds.size(); ++j) {
      if (op.measured_seconds[i].first == op.measured_seconds[j].first) {
        return absl::InvalidArgumentError(absl::StrCat("operator '", op.name, "': two measured times for device kind '",
                                                       op.measured_seconds[i].first, "'"));
      }
    }
  }
  if (!(s = CheckNumber(op.name, "flops", op.flops)).ok()) return s;
  if (!(s = CheckNumber(op.name, "bytes_accessed", op.bytes_accessed)).ok()) return s;
  if (!(s = CheckBytes(op.name, "param_bytes", op.param_bytes)).ok()) return s;
  if (!(s = CheckBytes(op.name, "temp_bytes", op.temp_bytes)).ok()) return s;
  if (!(s = CheckBytes(op.name, "data_bytes", op.data_bytes)).ok()) return s;
  if (op.window < 0) {
    return absl::InvalidArgumentError(absl::StrCat("operator '", op.name, "': window must be non-negative"));
  }
  for (const ExtraKernels& c : {op.extra_kernels, op.extra_kernels_back}) {
    if (c.kernels < 0) {
      return absl::InvalidArgumentError(absl::StrCat("operator '", op.name, "': negative extra kernels"));
    }
    if (!(s = CheckNumber(op.name, "extra kernel bytes", c.bytes)).ok()) return s;
  }
  for (size_t i = 0; i < op.outputs.size(); ++i) {
    const OutputTensor& out = op.outputs[i];
    if (!(s = CheckBytes(op.name, absl::StrCat("output ", i, " bytes"), out.bytes)).ok()) return s;
    // A negative transfer time means "derive it"; NaN and infinity are still errors.
    if (!std::isfinite(out.transfer_seconds)) {
      return absl::InvalidArgumentError(
          absl::StrCat("operator '", op.name, "': output ", i, " transfer time is not finite"));
    }
  }
  return absl::OkStatus();
}

// Finds a cycle among the operators Kahn's algorithm could not order and names the operators on it.
std::string DescribeCycle(const Graph& g, const std::vector<int32_t>& remaining_in) {
  // Every unordered node has an unordered predecessor; walk predecessors until a node repeats.
  OpId start = kNone;
  for (OpId v = 0; v < g.num_ops(); ++v) {
    if (remaining_in[v] > 0) {
      start = v;
      break;
    }
  }
  std::vector<int32_t> seen_at(g.num_ops(), -1);
  std::vector<OpId> walk;
  OpId v = start;
  while (seen_at[v] < 0) {
    seen_at[v] = static_cast<int32_t>(walk.size());
    walk.push_back(v);
    OpId next = kNone;
    for (EdgeId e : g.in_edges(v)) {
      OpId u = g.edge(e).src;
      if (remaining_in[u] > 0) {
        next = u;
        break;
      }
    }
    v = next;
  }
  // walk[i + 1] precedes walk[i], and v = walk[k] precedes walk.back(): in edge direction the cycle is
  // walk[k] -> walk.back() -> ... -> walk[k].
  const size_t k = static_cast<size_t>(seen_at[v]);
  std::vector<std::string> names;
  names.emplace_back(g.name(walk[k]));
  for (size_t i = walk.size(); i-- > k;) names.emplace_back(g.name(walk[i]));
  return absl::StrJoin(names, " -> ");
}

}  // namespace

OpId Graph::FindOp(absl::string_view name) const {
  auto it = std::lower_bound(by_name_.begin(), by_name_.end(), name,
                             [this](OpId a, absl::string_view n) { return op_name_[a] < n; });
  if (it != by_name_.end() && op_name_[*it] == name) return *it;
  return kNone;
}

OpSpec SpecOf(const Graph& g, OpId u) {
  OpSpec op;
  op.name = std::string(g.name(u));
  op.op_type = std::string(g.op_type(u));
  for (const MeasuredTime& m : g.measured(u)) op.measured_seconds.emplace_back(g.device_kinds()[m.kind], m.seconds);
  op.flops = g.flops(u);
  op.bytes_accessed = g.bytes_accessed(u);
  op.param_bytes = g.param_bytes(u);
  op.temp_bytes = g.temp_bytes(u);
  op.data_bytes = g.data_bytes(u);
  op.shared_weights = g.shared_weights(u);
  op.window = g.window(u);
  op.channels_last = g.channels_last(u);
  op.extra_kernels = g.extra_kernels(u);
  op.extra_kernels_back = g.extra_kernels_back(u);
  for (int32_t k = 0; k < g.num_outputs(u); ++k) op.outputs.push_back(g.tensor(g.first_output(u) + k));
  if (g.colocation_group(u) != kNone) op.colocation_group = g.colocation_groups()[g.colocation_group(u)];
  if (g.pinned(u) != kNone) op.pinned_device = g.pinned_devices()[g.pinned(u)];
  op.is_backward = g.is_backward(u);
  return op;
}

absl::StatusOr<Graph> RebuildGraph(const Graph& g, const std::function<void(OpId, OpSpec&)>& edit) {
  GraphBuilder builder;
  for (OpId u = 0; u < g.num_ops(); ++u) {
    OpSpec spec = SpecOf(g, u);
    edit(u, spec);
    builder.AddOp(std::move(spec));
  }
  for (EdgeId e = 0; e < g.num_edges(); ++e) {
    const Edge& edge = g.edge(e);
    builder.AddEdge(edge.src, edge.src_output, edge.dst, edge.bytes);
  }
  return std::move(builder).Build();
}

int64_t Graph::total_param_bytes() const {
  return std::accumulate(param_bytes_.begin(), param_bytes_.end(), int64_t{0});
}

OpId GraphBuilder::AddOp(OpSpec spec) {
  ops_.push_back(std::move(spec));
  return static_cast<OpId>(ops_.size() - 1);
}

void GraphBuilder::AddEdge(OpId src, int32_t src_output, OpId dst, int64_t bytes) {
  edges_.push_back(PendingEdge{src, src_output, dst, bytes, {}, {}});
}

void GraphBuilder::AddEdge(absl::string_view src, int32_t src_output, absl::string_view dst, int64_t bytes) {
  edges_.push_back(PendingEdge{kNone, src_output, kNone, bytes, std::string(src), std::string(dst)});
}

absl::StatusOr<Graph> GraphBuilder::Build() && {
  if (ops_.empty()) return absl::InvalidArgumentError("the graph has no operators");
  Graph g;
  // Names first: they are how every later error refers to an operator.
  RETURN_IF_ERROR(IndexNames(g));
  RETURN_IF_ERROR(TakeOps(g));
  RETURN_IF_ERROR(TakeEdges(g));
  IndexEdges(g);
  RETURN_IF_ERROR(SortTopologically(g));
  return g;
}

absl::Status GraphBuilder::IndexNames(Graph& g) const {
  const int32_t n = static_cast<int32_t>(ops_.size());
  g.by_name_.resize(n);
  std::iota(g.by_name_.begin(), g.by_name_.end(), 0);
  for (const OpSpec& op : ops_) {
    if (op.name.empty()) return absl::InvalidArgumentError("an operator has an empty name");
  }
  std::sort(g.by_name_.begin(), g.by_name_.end(), [this](OpId a, OpId b) { return ops_[a].name < ops_[b].name; });
  for (int32_t i = 1; i < n; ++i) {
    if (ops_[g.by_name_[i]].name == ops_[g.by_name_[i - 1]].name) {
      return absl::InvalidArgumentError(absl::StrCat("duplicate operator name '", ops_[g.by_name_[i]].name, "'"));
    }
  }
  return absl::OkStatus();
}

absl::Status GraphBuilder::TakeOps(Graph& g) {
  const int32_t n = static_cast<int32_t>(ops_.size());
  Interner kinds(&g.device_kinds_), types(&g.op_types_), groups(&g.colocation_groups_), pins(&g.pinned_devices_);
  g.op_name_.reserve(n);
  g.measured_begin_.reserve(n + 1);
  g.output_begin_.reserve(n + 1);
  g.measured_begin_.push_back(0);
  g.output_begin_.push_back(0);
  for (OpId v = 0; v < n; ++v) {
    OpSpec& op = ops_[v];
    RETURN_IF_ERROR(ValidateOp(op));
    g.op_name_.push_back(std::move(op.name));
    g.op_type_.push_back(types.Intern(op.op_type, /*empty_is_none=*/false));
    g.flops_.push_back(op.flops);
    g.bytes_accessed_.push_back(op.bytes_accessed);
    g.param_bytes_.push_back(op.param_bytes);
    g.temp_bytes_.push_back(op.temp_bytes);
    g.data_bytes_.push_back(op.data_bytes);
    g.shared_weights_.push_back(op.shared_weights ? 1 : 0);
    g.window_.push_back(op.window);
    g.channels_last_.push_back(op.channels_last ? 1 : 0);
    g.extra_kernels_.push_back(op.extra_kernels);
    g.extra_kernels_back_.push_back(op.extra_kernels_back);
    g.is_backward_.push_back(op.is_backward ? 1 : 0);
    g.has_backward_ = g.has_backward_ || op.is_backward;
    g.colocation_.push_back(groups.Intern(op.colocation_group, true));
    g.pinned_.push_back(pins.Intern(op.pinned_device, true));
    for (const auto& [kind, seconds] : op.measured_seconds) {
      g.measured_.push_back(MeasuredTime{kinds.Intern(kind, false), seconds});
    }
    g.measured_begin_.push_back(static_cast<int32_t>(g.measured_.size()));
    for (const OutputTensor& out : op.outputs) {
      g.outputs_.push_back(out);
      g.tensor_producer_.push_back(v);
    }
    g.output_begin_.push_back(static_cast<int32_t>(g.outputs_.size()));
  }
  ops_.clear();
  return absl::OkStatus();
}

absl::Status GraphBuilder::ResolveEdge(const Graph& g, size_t i, PendingEdge& pe) {
  const int32_t n = g.num_ops();
  if (!pe.src_name.empty() || pe.src == kNone) {
    pe.src = g.FindOp(pe.src_name);
    if (pe.src == kNone) {
      return absl::InvalidArgumentError(absl::StrCat("edge ", i, " comes from unknown operator '", pe.src_name, "'"));
    }
  }
  if (!pe.dst_name.empty() || pe.dst == kNone) {
    pe.dst = g.FindOp(pe.dst_name);
    if (pe.dst == kNone) {
      return absl::InvalidArgumentError(absl::StrCat("edge ", i, " goes to unknown operator '", pe.dst_name, "'"));
    }
  }
  if (pe.src < 0 || pe.src >= n)
    return absl::InvalidArgumentError(
        absl::StrCat("edge ", i, " comes from operator id ", pe.src, ", which does not exist"));
  if (pe.dst < 0 || pe.dst >= n)
    return absl::InvalidArgumentError(
        absl::StrCat("edge ", i, " goes to operator id ", pe.dst, ", which does not exist"));
  const std::string& src_name = g.op_name_[pe.src];
  if (pe.src_output < 0 || pe.src_output >= g.num_outputs(pe.src)) {
    return absl::InvalidArgumentError(absl::StrCat("edge '", src_name, "' -> '", g.op_name_[pe.dst], "' uses output ",
                                                   pe.src_output, " but '", src_name, "' has ", g.num_outputs(pe.src),
                                                   " output(s)"));
  }
  if (pe.src == pe.dst) return absl::InvalidArgumentError(absl::StrCat("operator '", src_name, "' has an edge to itself"));
  return absl::OkStatus();
}

absl::Status GraphBuilder::TakeEdges(Graph& g) {
  g.edges_.reserve(edges_.size());
  for (size_t i = 0; i < edges_.size(); ++i) {
    PendingEdge& pe = edges_[i];
    RETURN_IF_ERROR(ResolveEdge(g, i, pe));
    int64_t bytes = pe.bytes < 0 ? g.outputs_[g.output_begin_[pe.src] + pe.src_output].bytes : pe.bytes;
    g.edges_.push_back(Edge{pe.src, pe.src_output, pe.dst, bytes});
  }
  edges_.clear();
  std::sort(g.edges_.begin(), g.edges_.end(), [](const Edge& a, const Edge& b) {
    return std::tie(a.src, a.src_output, a.dst) < std::tie(b.src, b.src_output, b.dst);
  });
  for (size_t i = 1; i < g.edges_.size(); ++i) {
    const Edge& a = g.edges_[i - 1];
    const Edge& b = g.edges_[i];
    if (a.src == b.src && a.src_output == b.src_output && a.dst == b.dst) {
      return absl::InvalidArgumentError(
          absl::StrCat("duplicate edge '", g.op_name_[a.src], "':", a.src_output, " -> '", g.op_name_[a.dst], "'"));
    }
  }
  return absl::OkStatus();
}

// CSR: out-edges are the sorted edge array; in-edges index into it.
void GraphBuilder::IndexEdges(Graph& g) {
  const int32_t n = g.num_ops();
  g.out_begin_.assign(n + 1, 0);
  g.in_begin_.assign(n + 1, 0);
  for (const Edge& e : g.edges_) {
    ++g.out_begin_[e.src + 1];
    ++g.in_begin_[e.dst + 1];
  }
  for (int32_t v = 0; v < n; ++v) {
    g.out_begin_[v + 1] += g.out_begin_[v];
    g.in_begin_[v + 1] += g.in_begin_[v];
  }
  g.in_edge_ids_.resize(g.edges_.size());
  std::vector<int32_t> fill(g.in_begin_.begin(), g.in_begin_.end() - 1);
  for (EdgeId e = 0; e < static_cast<EdgeId>(g.edges_.size()); ++e) g.in_edge_ids_[fill[g.edges_[e].dst]++] = e;
}

// Kahn's algorithm with a min-heap on OpId: deterministic and independent of edge insertion order.
absl::Status GraphBuilder::SortTopologically(Graph& g) {
  const int32_t n = g.num_ops();
  std::vector<int32_t> remaining(n);
  for (OpId v = 0; v < n; ++v) remaining[v] = g.in_degree(v);
  std::priority_queue<OpId, std::vector<OpId>, std::greater<>> ready;
  for (OpId v = 0; v < n; ++v) {
    if (remaining[v] == 0) ready.push(v);
  }
  g.topo_order_.reserve(n);
  while (!ready.empty()) {
    OpId v = ready.top();
    ready.pop();
    g.topo_order_.push_back(v);
    for (const Edge& e : g.out_edges(v)) {
      if (--remaining[e.dst] == 0) ready.push(e.dst);
    }
  }
  if (static_cast<int32_t>(g.topo_order_.size()) != n) {
    return absl::InvalidArgumentError(absl::StrCat("the graph has a cycle: ", DescribeCycle(g, remaining)));
  }
  g.topo_rank_.resize(n);
  for (int32_t i = 0; i < n; ++i) g.topo_rank_[g.topo_order_[i]] = i;
  return absl::OkStatus();
}

}  // namespace placement
