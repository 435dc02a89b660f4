// The dataflow graph: operators, their output tensors and the edges between them.
//
// A Graph is immutable once built and stored index-based: operators are dense ids 0..n-1, strings are
// interned into small tables, and adjacency is CSR (out-edges sorted by producer, in-edges as an index into
// the edge array), so that 100k-operator graphs cost a few megabytes and a linear scan touches contiguous
// memory. Graphs are made by GraphBuilder, which validates everything a hostile input can get wrong.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>
#include "absl/strings/string_view.h"

#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace placement {

using OpId = int32_t;
using EdgeId = int32_t;
using TensorId = int32_t;  // dense over all outputs of all operators
inline constexpr int32_t kNone = -1;

// A measured compute time of one operator on one kind of device (a kind names a device model, e.g. "H100").
struct MeasuredTime {
  int32_t kind = kNone;  // index into Graph::device_kinds()
  double seconds = 0;
};

struct OutputTensor {
  int64_t bytes = 0;
  // Measured time to move this tensor to another device; negative when it is to be derived from bytes and
  // the link (latency + bytes / bandwidth). Profiled inputs such as the Tarnawski graphs carry it.
  double transfer_seconds = -1;
};

struct Edge {
  OpId src = kNone;
  int32_t src_output = 0;  // which output of src
  OpId dst = kNone;
  int64_t bytes = 0;  // bytes of the tensor that flows
};

// Kernels the framework runs around an operator that the graph does not show, each dispatched from C++ (no Python,
// no module call): autocast's casts of the operator's inputs to the precision it runs in (graph/precision.h), and
// in a training step autograd's sums of a gradient that several uses of a tensor send back (graph/training.h).
struct ExtraKernels {
  int32_t kernels = 0;
  double bytes = 0;  // read and written by all of them
};

// One operator as handed to the builder. Strings are interned by the builder.
struct OpSpec {
  std::string name;
  std::string op_type;
  // Either measured times per device kind, or FLOPs and bytes touched for the roofline estimate. When
  // measured times are given, device kinds without one cannot run the operator.
  std::vector<std::pair<std::string, double>> measured_seconds;
  double flops = 0;
  double bytes_accessed = 0;
  int64_t param_bytes = 0;  // resident for the whole step (weights, optimizer state)
  int64_t temp_bytes = 0;   // scratch while the operator runs
  // Bytes of the graph's inputs (the data, not weights) it reads directly: no operator's output, so no edge
  // carries them. Autocast casts float data for a 16-bit operator and keeps that copy for its weight gradient.
  int64_t data_bytes = 0;
  // It reads weights another operator holds (a second reader of one initializer, which the ONNX import credits to
  // the first): its outputs need a gradient, as the weights do, though it holds no parameters.
  bool shared_weights = false;
  // A convolution's kernel window, kh x kw: how many input positions of one channel each output reads. The
  // cost model tells a 5x5 depthwise convolution from a 3x3 one by it, whose backward kernels differ in kind.
  // 0 for other operators and where unknown.
  int32_t window = 0;
  // The operator's 4-D activations are laid out channels-last in memory (NHWC strides under an NCHW shape), as
  // eager PyTorch keeps them after a permute from NHWC: a depthwise convolution runs another kernel on them.
  bool channels_last = false;
  // The kernels run before the operator, and those autograd runs back in a training step's backward (one per
  // cast whose source requires a gradient): a forward operator holds both until BuildTrainingGraph gives the second
  // to its input gradient.
  ExtraKernels extra_kernels;
  ExtraKernels extra_kernels_back;
  std::vector<OutputTensor> outputs;
  std::string colocation_group;  // empty: none
  std::string pinned_device;     // empty: none; a device name of the topology
  bool is_backward = false;
};

class Graph {
 public:
  Graph() = default;

  int32_t num_ops() const { return static_cast<int32_t>(op_name_.size()); }
  int32_t num_edges() const { return static_cast<int32_t>(edges_.size()); }
  int32_t num_tensors() const { return static_cast<int32_t>(outputs_.size()); }

  absl::string_view name(OpId op) const { return op_name_[op]; }
  absl::string_view op_type(OpId op) const { return op_types_[op_type_[op]]; }
  int32_t op_type_id(OpId op) const { return op_type_[op]; }
  double flops(OpId op) const { return flops_[op]; }
  double bytes_accessed(OpId op) const { return bytes_accessed_[op]; }
  int64_t param_bytes(OpId op) const { return param_bytes_[op]; }
  int64_t temp_bytes(OpId op) const { return temp_bytes_[op]; }
  int64_t data_bytes(OpId op) const { return data_bytes_[op]; }
  bool shared_weights(OpId op) const { return shared_weights_[op] != 0; }
  // It holds parameters or reads ones another operator holds: their gradient runs through it.
  bool reads_weights(OpId op) const { return param_bytes_[op] > 0 || shared_weights_[op] != 0; }
  int32_t window(OpId op) const { return window_[op]; }
  bool channels_last(OpId op) const { return channels_last_[op] != 0; }
  const ExtraKernels& extra_kernels(OpId op) const { return extra_kernels_[op]; }
  const ExtraKernels& extra_kernels_back(OpId op) const { return extra_kernels_back_[op]; }
  bool is_backward(OpId op) const { return is_backward_[op] != 0; }
  // Index into colocation_groups(), or kNone.
  int32_t colocation_group(OpId op) const { return colocation_[op]; }
  // Index into pinned_devices(), or kNone.
  int32_t pinned(OpId op) const { return pinned_[op]; }

  absl::Span<const MeasuredTime> measured(OpId op) const {
    return absl::MakeConstSpan(measured_).subspan(measured_begin_[op], measured_begin_[op + 1] - measured_begin_[op]);
  }
  // Output tensors of op are the TensorIds first_output(op) .. first_output(op + 1) - 1.
  TensorId first_output(OpId op) const { return output_begin_[op]; }
  int32_t num_outputs(OpId op) const { return output_begin_[op + 1] - output_begin_[op]; }
  const OutputTensor& tensor(TensorId t) const { return outputs_[t]; }
  OpId tensor_producer(TensorId t) const { return tensor_producer_[t]; }

  // Edges leaving op, sorted by (src_output, dst): contiguous EdgeIds out_begin(op) .. out_begin(op + 1) - 1.
  EdgeId out_begin(OpId op) const { return out_begin_[op]; }
  EdgeId out_end(OpId op) const { return out_begin_[op + 1]; }
  absl::Span<const Edge> out_edges(OpId op) const {
    return absl::MakeConstSpan(edges_).subspan(out_begin_[op], out_begin_[op + 1] - out_begin_[op]);
  }
  // Edges entering op, as EdgeIds sorted by (src, src_output).
  absl::Span<const EdgeId> in_edges(OpId op) const {
    return absl::MakeConstSpan(in_edge_ids_).subspan(in_begin_[op], in_begin_[op + 1] - in_begin_[op]);
  }
  int32_t in_degree(OpId op) const { return in_begin_[op + 1] - in_begin_[op]; }
  const Edge& edge(EdgeId e) const { return edges_[e]; }
  // The tensor an edge carries.
  TensorId edge_tensor(EdgeId e) const { return output_begin_[edges_[e].src] + edges_[e].src_output; }

  // A topological order (Kahn's algorithm, ties broken by smaller OpId, so it is deterministic).
  absl::Span<const OpId> topo_order() const { return topo_order_; }
  // Position of op in topo_order().
  int32_t topo_rank(OpId op) const { return topo_rank_[op]; }

  // Interned string tables.
  absl::Span<const std::string> device_kinds() const { return device_kinds_; }
  absl::Span<const std::string> op_types() const { return op_types_; }
  absl::Span<const std::string> colocation_groups() const { return colocation_groups_; }
  absl::Span<const std::string> pinned_devices() const { return pinned_devices_; }

  // OpId of the operator with this name, or kNone.
  OpId FindOp(absl::string_view name) const;

  // Sums over the graph, handy for bounds and reports.
  int64_t total_param_bytes() const;
  // Whether any operator is a backward one: the graph is a training step.
  bool has_backward() const { return has_backward_; }

 private:
  friend class GraphBuilder;

  std::vector<std::string> op_name_;
  std::vector<int32_t> op_type_;
  std::vector<double> flops_;
  std::vector<double> bytes_accessed_;
  std::vector<int64_t> param_bytes_;
  std::vector<int64_t> temp_bytes_;
  std::vector<int64_t> data_bytes_;
  std::vector<uint8_t> shared_weights_;
  std::vector<int32_t> window_;
  std::vector<uint8_t> channels_last_;
  std::vector<ExtraKernels> extra_kernels_;
  std::vector<ExtraKernels> extra_kernels_back_;
  std::vector<uint8_t> is_backward_;
  bool has_backward_ = false;
  std::vector<int32_t> colocation_;
  std::vector<int32_t> pinned_;
  std::vector<int32_t> measured_begin_;  // n + 1
  std::vector<MeasuredTime> measured_;
  std::vector<int32_t> output_begin_;  // n + 1
  std::vector<OutputTensor> outputs_;
  std::vector<OpId> tensor_producer_;
  std::vector<Edge> edges_;          // sorted by (src, src_output, dst)
  std::vector<int32_t> out_begin_;   // n + 1
  std::vector<EdgeId> in_edge_ids_;  // grouped by dst
  std::vector<int32_t> in_begin_;    // n + 1
  std::vector<OpId> topo_order_;
  std::vector<int32_t> topo_rank_;
  std::vector<std::string> device_kinds_;
  std::vector<std::string> op_types_;
  std::vector<std::string> colocation_groups_;
  std::vector<std::string> pinned_devices_;
  std::vector<OpId> by_name_;  // OpIds sorted by name, for FindOp
};

// Collects operators and edges, then validates and freezes them into a Graph.
class GraphBuilder {
 public:
  // Returns the OpId the operator will have. Errors are reported by Build(), all of them naming what is wrong.
  OpId AddOp(OpSpec spec);
  // An edge from output `src_output` of `src` to `dst`. bytes < 0 takes the bytes of that output.
  void AddEdge(OpId src, int32_t src_output, OpId dst, int64_t bytes = -1);
  // Same by operator names; unknown names are reported by Build() as dangling edges.
  void AddEdge(absl::string_view src, int32_t src_output, absl::string_view dst, int64_t bytes = -1);

  int32_t num_ops() const { return static_cast<int32_t>(ops_.size()); }

  // Validates: non-empty, unique non-empty names, finite non-negative numbers, edges between existing
  // operators and outputs, no duplicate edge, no cycle (the error names operators on one).
  absl::StatusOr<Graph> Build() &&;

 private:
  struct PendingEdge {
    OpId src;
    int32_t src_output;
    OpId dst;
    int64_t bytes;
    std::string src_name;  // set when added by name and not resolved yet
    std::string dst_name;
  };
  // Build's steps, in order; each fails with the message that names what is wrong.
  absl::Status IndexNames(Graph& g) const;
  absl::Status TakeOps(Graph& g);
  static absl::Status ResolveEdge(const Graph& g, size_t i, PendingEdge& pe);
  absl::Status TakeEdges(Graph& g);
  static void IndexEdges(Graph& g);
  static absl::Status SortTopologically(Graph& g);

  std::vector<OpSpec> ops_;
  std::vector<PendingEdge> edges_;
};

// An operator as a spec, every field as the graph holds it.
OpSpec SpecOf(const Graph& g, OpId op);

// The graph again with `edit` applied to every operator's spec (ids and edges unchanged): how a pass changes what
// operators cost (measured times merged in) without rebuilding the structure by hand.
absl::StatusOr<Graph> RebuildGraph(const Graph& g, const std::function<void(OpId, OpSpec&)>& edit);

}  // namespace placement
