#include "graph/proto/graph_proto.h"

#include <cmath>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"

namespace placement {
namespace {

namespace pb = ::placement::v1;

// The checks GraphBuilder cannot make because the builder gives negative values a meaning ("derive it"):
// on the wire a present value is a figure, and a negative figure is a mistake.
absl::Status CheckPresentFigures(const pb::Graph& message) {
  for (int i = 0; i < message.operators_size(); ++i) {
    const pb::Operator& op = message.operators(i);
    for (int k = 0; k < op.outputs_size(); ++k) {
      if (op.outputs(k).has_transfer_seconds() && op.outputs(k).transfer_seconds() < 0) {
        return absl::InvalidArgumentError(absl::StrCat("operators[", i, "] ('", op.name(), "'): outputs[", k,
                                                       "].transfer_seconds is negative (",
                                                       op.outputs(k).transfer_seconds(), ")"));
      }
    }
  }
  for (int i = 0; i < message.edges_size(); ++i) {
    const pb::Edge& e = message.edges(i);
    if (e.has_bytes() && e.bytes() < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("edges[", i, "] ('", e.src(), "' -> '", e.dst(), "'): bytes is negative (", e.bytes(), ")"));
    }
    if (e.src().empty() || e.dst().empty()) {
      return absl::InvalidArgumentError(absl::StrCat("edges[", i, "] has an empty ", e.src().empty() ? "src" : "dst"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Graph> GraphFromProto(const pb::Graph& message) {
  RETURN_IF_ERROR(CheckPresentFigures(message));
  GraphBuilder builder;
  for (const pb::Operator& in : message.operators()) {
    OpSpec op;
    op.name = in.name();
    op.op_type = in.op_type();
    for (const pb::MeasuredTime& m : in.measured()) op.measured_seconds.emplace_back(m.device_kind(), m.seconds());
    op.flops = in.flops();
    op.bytes_accessed = in.bytes_accessed();
    op.param_bytes = in.param_bytes();
    op.temp_bytes = in.temp_bytes();
    op.data_bytes = in.data_bytes();
    op.shared_weights = in.shared_weights();
    op.window = in.window();
    op.channels_last = in.channels_last();
    for (const pb::OutputTensor& t : in.outputs()) {
      // Absent means "derive it from the link", which the graph spells as a negative time.
      op.outputs.push_back(
          OutputTensor{.bytes = t.bytes(), .transfer_seconds = t.has_transfer_seconds() ? t.transfer_seconds() : -1});
    }
    op.colocation_group = in.colocation_group();
    op.pinned_device = in.pinned_device();
    op.is_backward = in.is_backward();
    builder.AddOp(std::move(op));
  }
  for (const pb::Edge& e : message.edges()) {
    builder.AddEdge(e.src(), e.src_output(), e.dst(), e.has_bytes() ? e.bytes() : -1);
  }
  return std::move(builder).Build();
}

pb::Graph GraphToProto(const Graph& g) {
  pb::Graph message;
  message.mutable_operators()->Reserve(g.num_ops());
  for (OpId u = 0; u < g.num_ops(); ++u) {
    pb::Operator* op = message.add_operators();
    op->set_name(std::string(g.name(u)));
    op->set_op_type(std::string(g.op_type(u)));
    for (const MeasuredTime& m : g.measured(u)) {
      pb::MeasuredTime* out = op->add_measured();
      out->set_device_kind(g.device_kinds()[m.kind]);
      out->set_seconds(m.seconds);
    }
    op->set_flops(g.flops(u));
    op->set_bytes_accessed(g.bytes_accessed(u));
    op->set_param_bytes(g.param_bytes(u));
    op->set_temp_bytes(g.temp_bytes(u));
    op->set_data_bytes(g.data_bytes(u));
    op->set_shared_weights(g.shared_weights(u));
    op->set_window(g.window(u));
    op->set_channels_last(g.channels_last(u));
    for (int32_t k = 0; k < g.num_outputs(u); ++k) {
      const OutputTensor& t = g.tensor(g.first_output(u) + k);
      pb::OutputTensor* out = op->add_outputs();
      out->set_bytes(t.bytes);
      if (t.transfer_seconds >= 0) out->set_transfer_seconds(t.transfer_seconds);
    }
    if (g.colocation_group(u) != kNone) op->set_colocation_group(g.colocation_groups()[g.colocation_group(u)]);
    if (g.pinned(u) != kNone) op->set_pinned_device(g.pinned_devices()[g.pinned(u)]);
    op->set_is_backward(g.is_backward(u));
  }
  message.mutable_edges()->Reserve(g.num_edges());
  for (EdgeId e = 0; e < g.num_edges(); ++e) {
    const Edge& edge = g.edge(e);
    pb::Edge* out = message.add_edges();
    out->set_src(std::string(g.name(edge.src)));
    out->set_src_output(edge.src_output);
    out->set_dst(std::string(g.name(edge.dst)));
    out->set_bytes(edge.bytes);
  }
  return message;
}

}  // namespace placement
