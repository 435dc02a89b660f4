// Loop and Scan expansion (control_flow.h): unrolled iteration by iteration, each iteration's body inferred
// as it is emitted so that a condition computed in the body can end the loop.
#include <algorithm>
#include <limits>
#include <optional>

#include "absl/strings/str_cat.h"
#include "graph/onnx/attributes.h"
#include "graph/onnx/emitter.h"
#include "graph/onnx/newer_ops.h"
#include "graph/status_macros.h"

namespace placement::onnx_import {
namespace {

// Exporters write a while loop's trip count as INT64_MAX: such a count bounds nothing.
constexpr int64_t kUnboundedTrips = int64_t{1} << 31;

std::optional<int64_t> ScalarInt(const ConstValue* v) {
  if (v == nullptr || v->size() != 1) return std::nullopt;
  const double x = v->Real(0);
  if (!(x >= 0)) return 0;
  return x >= static_cast<double>(kUnboundedTrips) ? std::nullopt : std::optional<int64_t>(static_cast<int64_t>(x));
}

// Folded condition: true, false, or nullopt when it depends on the data.
std::optional<bool> Condition(const ConstValue* v) {
  if (v == nullptr || v->size() != 1) return std::nullopt;
  return v->Real(0) != 0;
}

}  // namespace

onnx::TypeProto Emitter::TypeOf(const std::string& name) const {
  onnx::TypeProto type;
  const TensorInfo* info = inferer_.Info(name);
  if (info == nullptr) return type;
  type.mutable_tensor_type()->set_elem_type(info->elem_type);
  for (int64_t d : info->dims) type.mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(d);
  return type;
}

absl::StatusOr<std::vector<std::string>> Emitter::EmitIteration(const onnx::GraphProto& body, Scope* scope,
                                                                const std::vector<std::string>& bindings,
                                                                const std::string& prefix) {
  Scope child{scope, {}};
  for (int k = 0; k < body.input_size(); ++k) child.names[body.input(k).name()] = bindings[k];
  RETURN_IF_ERROR(EmitBody(body, &child, prefix));
  std::vector<std::string> outputs;
  for (const onnx::ValueInfoProto& out : body.output()) outputs.push_back(Resolve(child, out.name()));
  return outputs;
}

std::vector<onnx::TypeProto> Emitter::Signature(const ControlNode& c, const Scope& scope) const {
  std::vector<onnx::TypeProto> signature;
  for (const std::string& input : c.inputs) signature.push_back(TypeOf(input));
  for (const std::string& captured : CapturedNames(*GraphAttribute(c.node, "body"))) {
    signature.push_back(TypeOf(Resolve(scope, captured)));
  }
  return signature;
}

const Emitter::UnitMemo* Emitter::MemoFor(const ControlNode& c, const Scope& scope, int64_t trips) const {
  auto it = units_.find(GraphAttribute(c.node, "body"));
  if (it == units_.end() || it->second.body_nodes <= options_.max_unrolled_nodes / std::max<int64_t>(trips, 1)) {
    return nullptr;
  }
  const std::vector<onnx::TypeProto> signature = Signature(c, scope);
  if (signature.size() != it->second.signature.size()) return nullptr;
  for (size_t i = 0; i < signature.size(); ++i) {
    if (signature[i].SerializeAsString() != it->second.signature[i].SerializeAsString()) return nullptr;
  }
  return &it->second;
}

Emitter::UnitMemo Emitter::Summarize(const ControlNode& c, const Scope& scope, int first,
                                     const std::vector<std::string>& outputs) {
  UnitMemo memo;
  memo.signature = Signature(c, scope);
  memo.per_iteration = RangeCost(first, flat_.node_size());
  memo.body_nodes = flat_.node_size() - first;
  for (const std::string& name : outputs) memo.outputs.push_back(TypeOf(name));
  flat_.mutable_node()->DeleteSubrange(first, flat_.node_size() - first);
  units_[GraphAttribute(c.node, "body")] = memo;
  return memo;
}

absl::Status Emitter::EmitUnit(const ControlNode& c, Scope* scope, const UnitMemo& memo, int64_t trips,
                               const std::vector<int64_t>& scan_axes, int carried, const std::string& why) {
  onnx::NodeProto unit;
  unit.set_name(c.base);
  unit.set_op_type(c.node.op_type());
  unit.set_domain(kInternalDomain);
  std::unordered_set<std::string> seen;
  for (const std::string& input : c.inputs) {
    if (!input.empty() && seen.insert(input).second) unit.add_input(input);
  }
  for (const std::string& captured : CapturedNames(*GraphAttribute(c.node, "body"))) {
    const std::string& name = Resolve(*scope, captured);
    if (seen.insert(name).second) unit.add_input(name);
  }
  std::vector<onnx::TypeProto> types = memo.outputs;
  for (size_t k = 0; k < scan_axes.size() && carried + k < types.size(); ++k) {
    onnx::TensorShapeProto* shape = types[carried + k].mutable_tensor_type()->mutable_shape();
    const int64_t at = std::clamp<int64_t>(scan_axes[k], 0, shape->dim_size());
    shape->add_dim();
    for (int64_t d = shape->dim_size() - 1; d > at; --d) shape->mutable_dim(d)->Swap(shape->mutable_dim(d - 1));
    shape->mutable_dim(at)->set_dim_value(trips);
  }
  for (const std::string& output : c.node.output()) {
    unit.add_output(output.empty() ? std::string() : names_.Fresh(absl::StrCat(c.base, "/", output)));
  }
  onnx::AttributeProto* cost = unit.add_attribute();
  cost->set_name(kUnitCostAttribute);
  cost->set_type(onnx::AttributeProto::FLOATS);
  const double t = static_cast<double>(trips);
  for (double v : {memo.per_iteration.flops, memo.per_iteration.bytes_accessed, memo.per_iteration.macs}) {
    cost->add_floats(static_cast<float>(t * v));
  }
  for (int o = 0; o < c.node.output_size(); ++o) {
    if (!c.node.output(o).empty()) scope->names[c.node.output(o)] = unit.output(o);
  }
  RETURN_IF_ERROR(CheckBudget());
  onnx::NodeProto* added = flat_.add_node();
  added->Swap(&unit);
  inferer_.Warn(absl::StrCat(c.node.op_type(), " '", c.base, "': ", trips, " iterations of a ", memo.body_nodes,
                             "-node body exceed max_unrolled_nodes ", options_.max_unrolled_nodes, why,
                             "; kept as one operator costing ", trips, " times its body"));
  return inferer_.SetOutputs(*added, -1, std::move(types));
}

absl::Status Emitter::BindLoopOutputs(const ControlNode& c, Scope* scope, const std::vector<std::string>& values,
                                      const std::vector<std::vector<std::string>>& scans,
                                      const std::vector<int64_t>& axes, const std::vector<int64_t>& reversed) {
  const int carried = static_cast<int>(values.size());
  for (int j = 0; j < carried; ++j) {
    if (!c.node.output(j).empty()) scope->names[c.node.output(j)] = values[j];
  }
  for (size_t k = 0; k < scans.size(); ++k) {
    const std::string& out = c.node.output(carried + static_cast<int>(k));
    if (out.empty()) continue;
    if (scans[k].empty()) {
      return absl::InvalidArgumentError(absl::StrCat(c.node.op_type(), " '", c.base,
                                                     "' runs no iteration, so its "
                                                     "scan output '",
                                                     out, "' has no shape"));
    }
    absl::StatusOr<std::string> stacked =
        EmitStack(absl::StrCat(c.base, "/", out), scans[k], axes[k], reversed[k] != 0);
    if (!stacked.ok()) return stacked.status();
    scope->names[out] = *stacked;
  }
  return absl::OkStatus();
}

// One iteration of a Loop: its number and condition bound (as Constants where the body reads them), the body
// emitted, the carried values and scan outputs taken from it, the condition folded if it can be.
absl::Status Emitter::LoopStep(const ControlNode& c, const onnx::GraphProto& body, Scope* scope, LoopRun* run) {
  const std::string prefix = absl::StrCat(c.base, "/iter", run->count);
  std::vector<std::string> bindings(2);
  if (ReadsName(body, body.input(0).name())) {
    absl::StatusOr<std::string> i = EmitScalar(prefix + "/iteration", onnx::TensorProto::INT64, run->count);
    if (!i.ok()) return i.status();
    bindings[0] = *i;
  }
  if (run->condition.empty() && ReadsName(body, body.input(1).name())) {
    absl::StatusOr<std::string> t = EmitScalar(prefix + "/condition", onnx::TensorProto::BOOL, 1);
    if (!t.ok()) return t.status();
    run->condition = *t;
  }
  bindings[1] = run->condition;
  bindings.insert(bindings.end(), run->values.begin(), run->values.end());
  absl::StatusOr<std::vector<std::string>> outs = EmitIteration(body, scope, bindings, prefix);
  if (!outs.ok()) return outs.status();
  run->condition = (*outs)[0];
  std::copy(outs->begin() + 1, outs->begin() + 1 + run->values.size(), run->values.begin());
  for (size_t k = 0; k < run->scans.size(); ++k) run->scans[k].push_back((*outs)[1 + run->values.size() + k]);
  run->go = Condition(inferer_.Value(run->condition));
  run->from_data = run->from_data || !run->go;
  if (++run->count == 1) run->first_outputs.assign(outs->begin() + 1, outs->end());
  return absl::OkStatus();
}

absl::Status Emitter::ExpandLoop(const ControlNode& c, Scope* scope) {
  const onnx::GraphProto* body = GraphAttribute(c.node, "body");
  const int carried = static_cast<int>(c.inputs.size()) - 2;
  const int scanned = body == nullptr ? -1 : body->output_size() - 1 - carried;
  if (body == nullptr || carried < 0 || body->input_size() != 2 + carried || scanned < 0 ||
      c.node.output_size() != carried + scanned) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Loop '", c.base, "' is malformed: it needs a body graph taking (iteration, condition, ", std::max(carried, 0),
        " carried values) and giving (condition, the carried values, scan outputs), and one "
        "output per carried value and scan output"));
  }
  LoopRun run;
  run.trips = c.inputs[0].empty() ? std::nullopt : ScalarInt(inferer_.Value(c.inputs[0]));
  run.go = c.inputs[1].empty() ? std::optional<bool>(true) : Condition(inferer_.Value(c.inputs[1]));
  // A trip count from the data, or a condition from the data with no trip count folded: loop_iterations.
  run.from_data = (!c.inputs[0].empty() && !run.trips) || !run.go;
  auto assumption = [&]() -> std::string {
    if (!run.from_data) return "";
    return run.trips
               ? absl::StrCat("; its condition depends on the data, so all ", *run.trips, " iterations are counted")
               : absl::StrCat("; its trip count depends on the data, so ", options_.loop_iterations,
                              " iterations are assumed (loop_iterations)");
  };
  const std::vector<int64_t> zeros(scanned, 0);
  if (run.go.value_or(true) && (run.trips || run.from_data)) {
    const int64_t expected = run.trips.value_or(options_.loop_iterations);
    if (const UnitMemo* memo = MemoFor(c, *scope, expected)) {
      return EmitUnit(c, scope, *memo, expected, zeros, carried, assumption());
    }
  }
  run.values.assign(c.inputs.begin() + 2, c.inputs.end());
  run.scans.resize(scanned);
  run.condition = c.inputs[1];
  const int first = flat_.node_size();
  int first_end = first;
  while (run.go.value_or(true) &&
         (run.trips ? run.count < *run.trips : !run.from_data || run.count < options_.loop_iterations)) {
    RETURN_IF_ERROR(LoopStep(c, *body, scope, &run));
    if (run.count == 1) first_end = flat_.node_size();
    const std::optional<int64_t> expected = run.trips       ? run.trips
                                            : run.from_data ? std::optional<int64_t>(options_.loop_iterations)
                                                            : std::nullopt;
    const int64_t body_nodes = first_end - first;
    const bool too_many = expected && body_nodes > options_.max_unrolled_nodes / std::max<int64_t>(*expected, 1);
    if (too_many || flat_.node_size() - first > options_.max_unrolled_nodes) {
      flat_.mutable_node()->DeleteSubrange(first_end, flat_.node_size() - first_end);
      const UnitMemo memo = Summarize(c, *scope, first, run.first_outputs);
      return EmitUnit(c, scope, memo, expected.value_or(options_.loop_iterations), zeros, carried, assumption());
    }
  }
  if (run.from_data) inferer_.Warn(absl::StrCat("Loop '", c.base, "': ", assumption().substr(2)));
  return BindLoopOutputs(c, scope, run.values, run.scans, zeros, zeros);
}

absl::Status Emitter::ExpandScan(const ControlNode& c, Scope* scope) {
  const onnx::NodeProto& node = c.node;
  const std::string& base = c.base;
  if (opset_ < 9) {
    return absl::InvalidArgumentError(absl::StrCat("Scan '", base,
                                                   "': Scan before opset 9 (batched, with "
                                                   "sequence_lens) is not supported; export at opset 9 or later"));
  }
  const onnx::GraphProto* body = GraphAttribute(node, "body");
  const int64_t scan_inputs = IntAttr(node, "num_scan_inputs", 0);
  const int states = static_cast<int>(c.inputs.size()) - static_cast<int>(scan_inputs);
  const int scanned = body == nullptr ? -1 : body->output_size() - states;
  if (body == nullptr || scan_inputs < 1 || states < 0 || body->input_size() != node.input_size() || scanned < 0 ||
      node.output_size() != states + scanned) {
    return absl::InvalidArgumentError(
        absl::StrCat("Scan '", base,
                     "' is malformed: its body must take the states "
                     "and one slice per scan input and give the states and scan outputs"));
  }
  std::vector<int64_t> in_axes = IntsAttr(node, "scan_input_axes"), in_dirs = IntsAttr(node, "scan_input_directions"),
                       out_axes = IntsAttr(node, "scan_output_axes"),
                       out_dirs = IntsAttr(node, "scan_output_directions");
  in_axes.resize(scan_inputs, 0);
  in_dirs.resize(scan_inputs, 0);
  out_axes.resize(scanned, 0);
  out_dirs.resize(scanned, 0);
  int64_t trips = -1;
  for (int64_t j = 0; j < scan_inputs; ++j) {
    const TensorInfo* info = inferer_.Info(c.inputs[states + j]);
    const int64_t rank = info == nullptr ? 0 : static_cast<int64_t>(info->dims.size());
    if (in_axes[j] < 0) in_axes[j] += rank;
    if (info == nullptr || in_axes[j] < 0 || in_axes[j] >= rank || (trips >= 0 && info->dims[in_axes[j]] != trips)) {
      return absl::InvalidArgumentError(absl::StrCat("Scan '", base, "': scan input ", j, " has no axis ", in_axes[j],
                                                     " of the same length as the others"));
    }
    trips = info->dims[in_axes[j]];
  }
  if (const UnitMemo* memo = MemoFor(c, *scope, trips)) return EmitUnit(c, scope, *memo, trips, out_axes, states, "");
  std::vector<std::string> values(c.inputs.begin(), c.inputs.begin() + states);
  std::vector<std::vector<std::string>> scans(scanned);
  const int first = flat_.node_size();
  for (int64_t i = 0; i < trips; ++i) {
    const std::string prefix = absl::StrCat(base, "/iter", i);
    std::vector<std::string> bindings = values;
    for (int64_t j = 0; j < scan_inputs; ++j) {
      const int64_t at = in_dirs[j] != 0 ? trips - 1 - i : i;
      absl::StatusOr<std::string> index = EmitScalar(absl::StrCat(prefix, "/index", j), onnx::TensorProto::INT64, at);
      if (!index.ok()) return index.status();
      onnx::NodeProto slice;
      slice.set_op_type("Gather");
      slice.set_name(absl::StrCat(prefix, "/slice", j));
      slice.add_input(c.inputs[states + j]);
      slice.add_input(*index);
      slice.add_output(names_.Fresh(slice.name()));
      SetIntAttribute(&slice, "axis", in_axes[j]);
      bindings.push_back(slice.output(0));
      RETURN_IF_ERROR(Append(std::move(slice), -1));
    }
    absl::StatusOr<std::vector<std::string>> outs = EmitIteration(*body, scope, bindings, prefix);
    if (!outs.ok()) return outs.status();
    std::copy(outs->begin(), outs->begin() + states, values.begin());
    for (int k = 0; k < scanned; ++k) scans[k].push_back((*outs)[states + k]);
    if (i == 0 && flat_.node_size() - first > options_.max_unrolled_nodes / std::max<int64_t>(trips, 1)) {
      const UnitMemo memo = Summarize(c, *scope, first, *outs);
      return EmitUnit(c, scope, memo, trips, out_axes, states, "");
    }
  }
  return BindLoopOutputs(c, scope, values, scans, out_axes, out_dirs);
}

}  // namespace placement::onnx_import
