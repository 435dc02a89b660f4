#include "graph/training.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "graph/fused_patterns.h"
#include "graph/saved_tensors.h"
#include "graph/status_macros.h"

namespace placement {
namespace {

constexpr double kBytesPerParameter = 4;  // fp32 weights and state

struct OptimizerModel {
  absl::string_view name;
  absl::string_view op_type;  // TensorFlow's names for the update kernels
  int state_copies;
  double flops_per_parameter;
};

constexpr OptimizerModel kOptimizers[] = {
    {"sgd", "ApplyGradientDescent", 0, 2},  // w -= lr * g
    {"momentum", "ApplyMomentum", 1, 4},    // m = mu * m + g; w -= lr * m
    {"adam", "ApplyAdam", 2, 10},           // two moment updates, bias correction, a square root and a divide
};

const OptimizerModel& ModelOf(Optimizer o) { return kOptimizers[static_cast<int>(o)]; }

bool HasWeightGradient(const Graph& g, OpId u, const TrainingOptions& options) {
  return options.include_weight_gradients && g.param_bytes(u) > 0;
}

// A backward operator doing `share` of the forward operator's work, on the same device.
OpSpec BackwardSpec(const OpSpec& forward, absl::string_view suffix, absl::string_view type_suffix, double share) {
  OpSpec op;
  op.name = absl::StrCat(forward.name, suffix);
  op.op_type = absl::StrCat(forward.op_type, type_suffix);
  for (const auto& [kind, seconds] : forward.measured_seconds) op.measured_seconds.emplace_back(kind, seconds * share);
  op.flops = forward.flops * share;
  op.bytes_accessed = forward.bytes_accessed * share;
  op.temp_bytes = forward.temp_bytes;
  op.window = forward.window;
  op.channels_last = forward.channels_last;
  op.colocation_group = forward.colocation_group;
  op.pinned_device = forward.pinned_device;
  op.is_backward = true;
  return op;
}

// Whether autograd computes a gradient for any of u's inputs: u's outputs need one and so does an input. A network's
// first convolution reads the data, which needs none: its backward computes the weight gradient only.
bool ComputesInputGradient(const Graph& g, OpId u, const SavedTensors& saved) {
  if (!saved.differentiable(g, u)) return false;
  for (EdgeId e : g.in_edges(u)) {
    if (saved.requires_grad[g.edge_tensor(e)]) return true;
  }
  return false;
}

// An input gradient no input needs: kept for the graph's shape (its weight gradient and the backward's edges hang
// off it), with no work, so that it runs no kernel.
void WithoutWork(OpSpec& op) {
  op.flops = 0;
  op.bytes_accessed = 0;
  for (auto& [kind, seconds] : op.measured_seconds) seconds = 0;
}

OpSpec UpdateSpec(const OpSpec& forward, const OptimizerModel& optimizer) {
  OpSpec op;
  op.name = absl::StrCat(forward.name, "/update");
  op.op_type = std::string(optimizer.op_type);
  const double params = static_cast<double>(forward.param_bytes);
  op.flops = optimizer.flops_per_parameter * params / kBytesPerParameter;
  op.bytes_accessed = (3.0 + 2.0 * optimizer.state_copies) * params;
  op.param_bytes = optimizer.state_copies * forward.param_bytes;
  op.colocation_group = forward.colocation_group;
  op.pinned_device = forward.pinned_device;
  op.is_backward = true;
  return op;
}

absl::Status CheckForward(const Graph& g, const TrainingOptions& options) {
  if (!std::isfinite(options.backward_multiplier) || options.backward_multiplier < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("backward_multiplier must be finite and non-negative (got ", options.backward_multiplier, ")"));
  }
  if (static_cast<size_t>(options.optimizer) >= std::size(kOptimizers)) {
    return absl::InvalidArgumentError(absl::StrCat("unknown optimizer ", static_cast<int>(options.optimizer)));
  }
  for (OpId u = 0; u < g.num_ops(); ++u) {
    if (g.is_backward(u)) {
      return absl::InvalidArgumentError(absl::StrCat("operator '", g.name(u),
                                                     "' is already a backward operator; a training step is built "
                                                     "from a forward graph"));
    }
    // Only a name with a suffix the expansion adds can clash, so the rare candidates are looked up rather
    // than every name the expansion makes.
    const absl::string_view name = g.name(u);
    for (absl::string_view suffix : {"/grad", "/wgrad", "/update"}) {
      if (!absl::EndsWith(name, suffix)) continue;
      const OpId stem = g.FindOp(name.substr(0, name.size() - suffix.size()));
      if (stem != kNone && (suffix == "/grad" || HasWeightGradient(g, stem, options))) {
        return absl::InvalidArgumentError(
            absl::StrCat("operator '", name, "' has the name of a backward operator of '", g.name(stem), "'"));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status CheckSize(const TrainingGraphSize& size) {
  if (size.ops > std::numeric_limits<int32_t>::max() || size.edges > std::numeric_limits<int32_t>::max()) {
    return absl::InvalidArgumentError(absl::StrCat("the training graph would have ", size.ops, " operators and ",
                                                   size.edges, " edges, more than 32-bit ids can number"));
  }
  return absl::OkStatus();
}

// Names a new colocation group for u and its backward operators, distinct from every group in use.
class GroupNamer {
 public:
  explicit GroupNamer(const Graph& g) : used_(g.colocation_groups().begin(), g.colocation_groups().end()) {}
  std::string NewGroup(absl::string_view op_name) {
    std::string name(op_name);
    for (int i = 2; !used_.insert(name).second; ++i) name = absl::StrCat(op_name, "#", i);
    return name;
  }

 private:
  absl::flat_hash_set<std::string> used_;
};

// Whether an activation u reads (not a weight the exporter laid out for it) needs a gradient.
bool ActivationNeedsGradient(const Graph& g, OpId u, const SavedTensors& saved) {
  for (EdgeId e : g.in_edges(u)) {
    const TensorId t = g.edge_tensor(e);
    if (saved.requires_grad[t] && !saved.weight_view[t]) return true;
  }
  return false;
}

// Whether u keeps the data it reads for its weights' gradient: a product or convolution (operands kept for each
// other's gradients) with weights, held or laid out for it.
bool KeepsDataForWeights(const Graph& g, OpId u, const SavedTensors& saved) {
  if (g.data_bytes(u) == 0) return false;
  const SavedTensorRule* rule = FindSavedTensorRule(g.op_type(u));
  if (rule == nullptr || rule->kind != SavedKind::kOperands) return false;
  if (g.reads_weights(u)) return true;
  for (EdgeId e : g.in_edges(u)) {
    if (saved.weight_view[g.edge_tensor(e)]) return true;
  }
  return false;
}

// The rules count max pooling's indices and dropout's mask per float32 output byte; an operator that runs in 16
// bits has half those bytes per element, and its indices and mask are as large as ever.
void KeepFixedWidthExtras(const Graph& g, const std::vector<int32_t>& width, SavedTensors& saved) {
  for (OpId u = 0; u < g.num_ops(); ++u) {
    if (saved.extra_bytes[u] == 0 || width[g.first_output(u)] != 2) continue;
    const SavedTensorRule* rule = FindSavedTensorRule(g.op_type(u));
    if (rule != nullptr && rule->fixed_width_extra) saved.extra_bytes[u] *= 2;
  }
}

// What autograd keeps, under autocast with what a 16-bit operator casts among what is no tensor of the graph: its
// weights' copy (held by it or laid out for it), and the copy of each float32 input it keeps (a matrix product
// after a layer norm or a softmax keeps its 16-bit cast of their output, one per reader, not the float32 output).
SavedTensors PlanSavedTensorsUnder(const Graph& g, const TrainingOptions& options) {
  SavedTensors saved = PlanSavedTensors(g);
  if (options.precision == Precision::kFp32) return saved;
  const std::vector<int32_t> width = SixteenBitWidths(g, options.precision);
  KeepFixedWidthExtras(g, width, saved);
  if (!IsAutocast(options.precision)) return saved;
  for (OpId u = 0; u < g.num_ops(); ++u) {
    if (!saved.differentiable(g, u) || !RunsInLowPrecision(g.op_type(u))) continue;
    // The weights' copy is kept for the activation's gradient: not where the activation needs none (the first
    // layer, reading the data).
    const bool activation_gradient = ActivationNeedsGradient(g, u, saved);
    if (activation_gradient) saved.extra_bytes[u] += AutocastWeightCopyBytes(g, u, options.precision);
    // The 16-bit cast of the data it reads, kept for its weights' gradient as the float32 data would be in fp32.
    if (KeepsDataForWeights(g, u, saved)) saved.extra_bytes[u] += g.data_bytes(u) / 2;
    for (EdgeId e : g.in_edges(u)) {
      // A weight the exporter laid out (the Transpose before a Linear's MatMul) is cast like one held here.
      if (saved.weight_view[g.edge_tensor(e)] && activation_gradient) saved.extra_bytes[u] += g.edge(e).bytes / 2;
      if (!saved.edge_saved[e] || width[g.edge_tensor(e)] != 4) continue;
      saved.edge_saved[e] = 0;
      saved.extra_bytes[u] += g.edge(e).bytes / 2;
    }
  }
  return saved;
}

// Per operator, the fused pattern it is part of (graph/fused_patterns.h), or its own id past the patterns': what
// runs as one kernel, and so sends one gradient back.
std::vector<int32_t> KernelOf(const Graph& g) {
  const FusedPatterns patterns = FindFusedPatterns(g);
  std::vector<int32_t> kernel(g.num_ops());
  for (OpId u = 0; u < g.num_ops(); ++u) kernel[u] = patterns.size() + u;
  for (int32_t i = 0; i < patterns.size(); ++i) {
    for (int32_t j = patterns.begin[i]; j < patterns.begin[i + 1]; ++j) kernel[patterns.ops[j]] = i;
  }
  return kernel;
}

// Autograd's sums of the gradients several uses of u's outputs send back, run before u's backward: one add per
// kernel past the first that reads an output requiring a gradient (it reads two gradients and writes one). A
// densenet's feature maps, read by every later concatenation of their block, sum as many. `readers` is scratch.
ExtraKernels GradientSums(const Graph& g, OpId u, const SavedTensors& saved, const std::vector<int32_t>& kernel_of,
                          std::vector<int32_t>& readers) {
  ExtraKernels sums;
  for (int32_t k = 0; k < g.num_outputs(u); ++k) {
    const TensorId t = g.first_output(u) + k;
    if (!saved.requires_grad[t]) continue;
    readers.clear();
    for (EdgeId e = g.out_begin(u); e < g.out_end(u); ++e) {
      const OpId v = g.edge(e).dst;
      if (g.edge(e).src_output == k && saved.differentiable(g, v)) readers.push_back(kernel_of[v]);
    }
    std::sort(readers.begin(), readers.end());
    const int32_t uses = static_cast<int32_t>(std::unique(readers.begin(), readers.end()) - readers.begin());
    if (uses < 2) continue;
    sums.kernels += uses - 1;
    sums.bytes += 3.0 * (uses - 1) * static_cast<double>(g.tensor(t).bytes);
  }
  return sums;
}

// The outputs of u its backward reads: those it saves, and every output of an operator nothing reads (a graph
// output, whose gradient the backward starts from), which also orders the backward after u.
bool OutputReadByBackward(const Graph& g, OpId u, int32_t k, const SavedTensors& saved) {
  return saved.output_saved[g.first_output(u) + k] != 0 || g.out_begin(u) == g.out_end(u);
}

// Edges into each of u's backward operators: saved outputs, saved inputs, the extra saved bytes and the gradient
// of every use of u's outputs.
int64_t SavedEdgeCount(const Graph& g, OpId u, const SavedTensors& saved) {
  int64_t edges = g.out_end(u) - g.out_begin(u);
  for (int32_t k = 0; k < g.num_outputs(u); ++k) edges += OutputReadByBackward(g, u, k, saved) ? 1 : 0;
  for (EdgeId e : g.in_edges(u)) edges += saved.edge_saved[e];
  if (saved.extra_bytes[u] > 0) ++edges;
  return edges;
}

// The size BuildTrainingGraph's result will have, from what the forward operators save.
TrainingGraphSize SizeWith(const Graph& g, const TrainingOptions& options, const SavedTensors& saved) {
  TrainingGraphSize size;
  size.ops = 2 * int64_t{g.num_ops()};
  size.edges = g.num_edges();
  for (OpId u = 0; u < g.num_ops(); ++u) {
    const int consumers = HasWeightGradient(g, u, options) ? 2 : 1;
    size.ops += 2 * (consumers - 1);
    size.edges += consumers - 1;  // wgrad -> update
    size.edges += int64_t{consumers} * SavedEdgeCount(g, u, saved);
  }
  return size;
}

// The edges into every backward operator: what its forward operator saves (graph/saved_tensors.h) and the gradient
// of every use of that operator's outputs.
void AddBackwardInputs(const Graph& g, const SavedTensors& saved, const std::vector<OpId>& grad_of,
                       const std::vector<OpId>& wgrad_of, GraphBuilder* builder) {
  // Position of every forward edge among its consumer's in-edges: the output of the consumer's grad operator
  // that carries the gradient back along it.
  std::vector<int32_t> grad_output(g.num_edges());
  for (OpId v = 0; v < g.num_ops(); ++v) {
    int32_t j = 0;
    for (EdgeId e : g.in_edges(v)) grad_output[e] = j++;
  }
  for (OpId u = 0; u < g.num_ops(); ++u) {
    for (OpId consumer : {grad_of[u], wgrad_of[u]}) {
      if (consumer == kNone) continue;
      for (int32_t k = 0; k < g.num_outputs(u); ++k) {
        if (OutputReadByBackward(g, u, k, saved)) builder->AddEdge(u, k, consumer);
      }
      for (EdgeId e : g.in_edges(u)) {
        if (!saved.edge_saved[e]) continue;
        const Edge& in = g.edge(e);
        builder->AddEdge(in.src, in.src_output, consumer, in.bytes);
      }
      if (saved.extra_bytes[u] > 0) builder->AddEdge(u, g.num_outputs(u), consumer);
      for (EdgeId e = g.out_begin(u); e < g.out_end(u); ++e) {  // gradients of u's outputs, one per use
        builder->AddEdge(grad_of[g.edge(e).dst], grad_output[e], consumer);
      }
    }
  }
}

}  // namespace

absl::string_view OptimizerName(Optimizer optimizer) { return ModelOf(optimizer).name; }

absl::StatusOr<Optimizer> ParseOptimizer(absl::string_view name) {
  const std::string lower = absl::AsciiStrToLower(name);
  for (size_t i = 0; i < std::size(kOptimizers); ++i) {
    if (kOptimizers[i].name == lower) return static_cast<Optimizer>(i);
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown optimizer '", name, "' (expected sgd, momentum or adam)"));
}

TrainingGraphSize TrainingGraphSizeOf(const Graph& g, const TrainingOptions& options) {
  return SizeWith(g, options, PlanSavedTensorsUnder(g, options));
}


absl::StatusOr<Graph> BuildTrainingGraph(const Graph& forward, const TrainingOptions& options) {
  RETURN_IF_ERROR(CheckForward(forward, options));
  const Graph& g = forward;
  const int32_t n = g.num_ops();
  const OptimizerModel& optimizer = ModelOf(options.optimizer);

  GraphBuilder builder;
  GroupNamer groups(g);
  std::vector<OpSpec> specs;
  specs.reserve(n);
  const SavedTensors saved = PlanSavedTensorsUnder(g, options);
  RETURN_IF_ERROR(CheckSize(SizeWith(g, options, saved)));
  for (OpId u = 0; u < n; ++u) {
    specs.push_back(SpecOf(g, u));
    if (specs.back().colocation_group.empty()) specs.back().colocation_group = groups.NewGroup(specs.back().name);
  }
  // What autograd saves that is no tensor of the graph (max pooling's indices) is one more output of its operator,
  // read only by the backward; the forward outputs keep their indices.
  for (OpId u = 0; u < n; ++u) {
    if (saved.extra_bytes[u] > 0) specs[u].outputs.push_back(OutputTensor{.bytes = saved.extra_bytes[u]});
  }
  // Forward operators keep their ids, so forward edges and ids carry over unchanged. The kernels autograd runs back
  // are their input gradients' (below).
  std::vector<ExtraKernels> extra_kernels_back(n);
  for (OpId u = 0; u < n; ++u) extra_kernels_back[u] = std::exchange(specs[u].extra_kernels_back, ExtraKernels{});
  for (const OpSpec& op : specs) builder.AddOp(op);
  std::vector<OpId> grad_of(n), wgrad_of(n, kNone);
  const std::vector<int32_t> kernel_of = KernelOf(g);
  std::vector<int32_t> readers;
  // Backward operators in reverse topological order of their forward ones, as autograd's engine runs them (the
  // node created last first): among ready operators the simulator takes the smallest id, so a weight gradient
  // runs beside its input gradient and frees what they share, instead of after the rest of the backward.
  const auto forward_order = g.topo_order();
  for (auto it = forward_order.rbegin(); it != forward_order.rend(); ++it) {
    const OpId u = *it;
    const bool weights = HasWeightGradient(g, u, options);
    const double share = weights ? options.backward_multiplier / 2 : options.backward_multiplier;
    OpSpec grad = BackwardSpec(specs[u], "/grad", "Grad", share);
    if (!ComputesInputGradient(g, u, saved)) WithoutWork(grad);
    const ExtraKernels sums = GradientSums(g, u, saved, kernel_of, readers);
    grad.extra_kernels = {extra_kernels_back[u].kernels + sums.kernels, extra_kernels_back[u].bytes + sums.bytes};
    for (EdgeId e : g.in_edges(u)) {
      OutputTensor gradient = g.tensor(g.edge_tensor(e));
      // The gradient of what flowed along this edge; none for a tensor that requires none (data, sizes, masks).
      gradient.bytes = saved.requires_grad[g.edge_tensor(e)] ? g.edge(e).bytes : 0;
      grad.outputs.push_back(gradient);
    }
    grad_of[u] = builder.AddOp(std::move(grad));
    if (!weights) continue;
    OpSpec wgrad = BackwardSpec(specs[u], "/wgrad", "WeightGrad", share);
    wgrad.outputs.push_back(OutputTensor{.bytes = specs[u].param_bytes});
    wgrad_of[u] = builder.AddOp(std::move(wgrad));
    const OpId update = builder.AddOp(UpdateSpec(specs[u], optimizer));
    builder.AddEdge(wgrad_of[u], 0, update);
  }
  specs.clear();

  for (EdgeId e = 0; e < g.num_edges(); ++e) {
    const Edge& edge = g.edge(e);
    builder.AddEdge(edge.src, edge.src_output, edge.dst, edge.bytes);
  }
  AddBackwardInputs(g, saved, grad_of, wgrad_of, &builder);
  return std::move(builder).Build();
}

}  // namespace placement
