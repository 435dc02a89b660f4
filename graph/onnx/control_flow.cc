#include "graph/onnx/control_flow.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "graph/onnx/emitter.h"
#include "graph/onnx/initializers.h"
#include "graph/onnx/newer_ops.h"
#include "graph/status_macros.h"

namespace placement::onnx_import {
namespace {

// "512 FLOP", "3.1 MFLOP", "4.09 GFLOP": three significant digits, for warnings.
std::string Flops(double flops) {
  static const char* const kUnits[] = {"", "k", "M", "G", "T", "P"};
  int unit = 0;
  while (flops >= 1000 && unit < 5) {
    flops /= 1000;
    ++unit;
  }
  return absl::StrFormat("%.3g %sFLOP", flops, kUnits[unit]);
}

}  // namespace

void SetIntAttribute(onnx::NodeProto* node, const char* name, int64_t value) {
  onnx::AttributeProto* a = node->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(value);
}

void SetIntsAttribute(onnx::NodeProto* node, const char* name, const std::vector<int64_t>& values) {
  onnx::AttributeProto* a = node->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t v : values) a->add_ints(v);
}

const std::string& Emitter::Resolve(const Scope& scope, const std::string& name) {
  for (const Scope* s = &scope; s != nullptr; s = s->parent) {
    if (s->names.empty()) continue;
    auto it = s->names.find(name);
    if (it != s->names.end()) return it->second;
  }
  return name;
}

absl::Status Emitter::EmitMainNode(onnx::NodeProto* node, Scope* root, int32_t index) {
  if (HasSubgraph(*node)) return EmitControl(*node, node->name(), root, index);
  onnx::NodeProto moved;
  moved.Swap(node);
  return EmitPlain(std::move(moved), root, index);
}

absl::Status Emitter::EmitPlain(onnx::NodeProto node, Scope* scope, int32_t index) {
  for (std::string& input : *node.mutable_input()) {
    if (!input.empty()) input = Resolve(*scope, input);
  }
  if (IsSequenceOp(node)) {
    plain_ = false;
    return EmitSequenceOp(std::move(node), scope, index);
  }
  if (scope->parent != nullptr) {
    for (std::string& output : *node.mutable_output()) {
      if (!output.empty()) output = scope->names.at(output);
    }
  }
  return Append(std::move(node), index);
}

absl::Status Emitter::EmitControl(const onnx::NodeProto& node, std::string base, Scope* scope, int32_t index) {
  plain_ = false;
  ControlNode c{node, {}, base.empty() ? absl::StrCat(node.op_type(), "_", index) : std::move(base)};
  for (const std::string& input : node.input()) c.inputs.push_back(input.empty() ? input : Resolve(*scope, input));
  const bool standard = node.domain().empty() || node.domain() == "ai.onnx";
  if (standard && node.op_type() == "If") return ExpandIf(c, scope);
  if (standard && node.op_type() == "Loop") return ExpandLoop(c, scope);
  if (standard && node.op_type() == "Scan") return ExpandScan(c, scope);
  return absl::InvalidArgumentError(absl::StrCat("node ", NodeLabel(node, index),
                                                 " holds a subgraph, but only "
                                                 "If, Loop and Scan of the default domain may"));
}

absl::Status Emitter::Append(onnx::NodeProto node, int32_t index) {
  RETURN_IF_ERROR(CheckBudget());
  onnx::NodeProto* added = flat_.add_node();
  added->Swap(&node);
  return inferer_.InferNode(*added, index);
}

absl::Status Emitter::CheckBudget() const {
  if (flat_.node_size() < options_.max_nodes) return absl::OkStatus();
  return absl::ResourceExhaustedError(absl::StrCat("the graph holds more than ", options_.max_nodes,
                                                   " nodes once its "
                                                   "control flow is expanded (max_nodes)"));
}

absl::Status Emitter::EmitBody(const onnx::GraphProto& body, Scope* scope, const std::string& prefix) {
  for (const onnx::TensorProto& init : body.initializer()) {
    onnx::TensorProto* lifted = flat_.add_initializer();
    *lifted = init;
    lifted->set_name(names_.Fresh(absl::StrCat(prefix, "/", init.name())));
    absl::StatusOr<TensorInfo> info = InitializerInfo(*lifted, options_.model_dir);
    if (!info.ok()) return info.status();
    inferer_.AddInitializer(*lifted, *info);
    scope->names[init.name()] = lifted->name();
  }
  for (const onnx::NodeProto& node : body.node()) {
    for (const std::string& output : node.output()) {
      if (!output.empty()) scope->names[output] = names_.Fresh(absl::StrCat(prefix, "/", output));
    }
  }
  const Scope* enclosing = scope;
  absl::StatusOr<GraphIndex> index = IndexGraph(
      body, [this, enclosing](const std::string& name) { return inferer_.Info(Resolve(*enclosing, name)) != nullptr; });
  if (!index.ok()) {
    return absl::Status(index.status().code(), absl::StrCat("in '", prefix, "': ", index.status().message()));
  }
  for (int32_t i : index->order) {
    std::string name = absl::StrCat(prefix, "/", index->op_names[i]);
    if (HasSubgraph(body.node(i))) {
      RETURN_IF_ERROR(EmitControl(body.node(i), std::move(name), scope, -1));
      continue;
    }
    onnx::NodeProto node = body.node(i);
    node.set_name(std::move(name));
    RETURN_IF_ERROR(EmitPlain(std::move(node), scope, -1));
  }
  return absl::OkStatus();
}

absl::Status Emitter::ExpandIf(const ControlNode& c, Scope* scope) {
  const onnx::NodeProto& node = c.node;
  const std::string& base = c.base;
  const onnx::GraphProto* branches[2] = {GraphAttribute(node, "then_branch"), GraphAttribute(node, "else_branch")};
  const char* names[2] = {"then", "else"};
  for (int b = 0; b < 2; ++b) {
    if (branches[b] == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("If '", base, "' has no ", names[b], "_branch graph"));
    }
    if (branches[b]->output_size() != node.output_size()) {
      return absl::InvalidArgumentError(absl::StrCat("If '", base, "': its ", names[b], "_branch has ",
                                                     branches[b]->output_size(), " outputs for its ",
                                                     node.output_size()));
    }
  }
  if (c.inputs.size() != 1 || c.inputs[0].empty()) {
    return absl::InvalidArgumentError(absl::StrCat("If '", base, "' needs exactly one input, its condition"));
  }
  std::vector<std::string> outputs[2];
  int bounds[3] = {flat_.node_size(), 0, 0};
  auto emit = [&](int b) -> absl::Status {
    Scope child{scope, {}};
    RETURN_IF_ERROR(EmitBody(*branches[b], &child, absl::StrCat(base, "/", names[b])));
    for (const onnx::ValueInfoProto& out : branches[b]->output()) outputs[b].push_back(Resolve(child, out.name()));
    return absl::OkStatus();
  };
  const ConstValue* condition = inferer_.Value(c.inputs[0]);
  int kept = 0;
  if (condition != nullptr && condition->size() == 1) {
    kept = condition->Real(0) != 0 ? 0 : 1;
    RETURN_IF_ERROR(emit(kept));
  } else {
    for (int b = 0; b < 2; ++b) {
      RETURN_IF_ERROR(emit(b));
      bounds[b + 1] = flat_.node_size();
    }
    const OpCost cost[2] = {RangeCost(bounds[0], bounds[1]), RangeCost(bounds[1], bounds[2])};
    kept = cost[0].flops > cost[1].flops ||
                   (cost[0].flops == cost[1].flops && cost[0].bytes_accessed >= cost[1].bytes_accessed)
               ? 0
               : 1;
    flat_.mutable_node()->DeleteSubrange(bounds[1 - kept], bounds[2 - kept] - bounds[1 - kept]);
    inferer_.Warn(absl::StrCat("If '", base, "': its condition '", c.inputs[0],
                               "' depends on the data; both branches "
                               "were imported and the costlier, ",
                               names[kept], " (", Flops(cost[kept].flops), ", the other ", Flops(cost[1 - kept].flops),
                               "), is placed"));
  }
  for (int o = 0; o < node.output_size(); ++o) {
    if (!node.output(o).empty()) scope->names[node.output(o)] = outputs[kept][o];
  }
  return absl::OkStatus();
}

OpCost Emitter::RangeCost(int first, int end) const {
  OpCost total;
  std::vector<const TensorInfo*> inputs, outputs;
  for (int i = first; i < end; ++i) {
    const onnx::NodeProto& n = flat_.node(i);
    inputs.clear();
    outputs.clear();
    for (const std::string& name : n.input()) inputs.push_back(name.empty() ? nullptr : inferer_.Info(name));
    for (const std::string& name : n.output()) outputs.push_back(name.empty() ? nullptr : inferer_.Info(name));
    OpCost c = ComputeOpCost(n, inputs, outputs);
    total.flops += c.flops;
    total.bytes_accessed += c.bytes_accessed;
    total.macs += c.macs;
  }
  return total;
}

absl::StatusOr<std::string> Emitter::EmitConstant(const std::string& name, onnx::TensorProto value) {
  onnx::NodeProto node;
  node.set_op_type("Constant");
  node.set_name(name);
  node.add_output(names_.Fresh(name));
  onnx::AttributeProto* a = node.add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  *a->mutable_t() = std::move(value);
  std::string output = node.output(0);
  RETURN_IF_ERROR(Append(std::move(node), -1));
  return output;
}

absl::StatusOr<std::string> Emitter::EmitScalar(const std::string& name, int32_t elem_type, int64_t value) {
  onnx::TensorProto t;
  t.set_data_type(elem_type);
  if (elem_type == onnx::TensorProto::INT64)
    t.add_int64_data(value);
  else
    t.add_int32_data(static_cast<int32_t>(value));
  return EmitConstant(name, std::move(t));
}

absl::StatusOr<std::string> Emitter::EmitInts(const std::string& name, const std::vector<int64_t>& values) {
  onnx::TensorProto t;
  t.set_data_type(onnx::TensorProto::INT64);
  t.add_dims(static_cast<int64_t>(values.size()));
  for (int64_t v : values) t.add_int64_data(v);
  return EmitConstant(name, std::move(t));
}

absl::StatusOr<std::string> Emitter::EmitStack(const std::string& name, std::vector<std::string> values, int64_t axis,
                                               bool reverse) {
  if (reverse) std::reverse(values.begin(), values.end());
  onnx::NodeProto node;
  node.set_op_type("Stack");
  node.set_domain(kInternalDomain);
  node.set_name(name);
  for (std::string& v : values) node.add_input(std::move(v));
  node.add_output(names_.Fresh(name));
  SetIntAttribute(&node, "axis", axis);
  std::string output = node.output(0);
  RETURN_IF_ERROR(Append(std::move(node), -1));
  return output;
}

absl::StatusOr<ExpandedGraph> ExpandGraph(onnx::GraphProto* main, GraphIndex index,
                                          const std::unordered_map<std::string, int>& opsets,
                                          const std::unordered_map<std::string, TensorInfo>& initializers,
                                          const OnnxImportOptions& options) {
  ExpandedGraph out;
  size_t tensors = static_cast<size_t>(main->input_size() + main->initializer_size());
  for (const onnx::NodeProto& node : main->node()) tensors += static_cast<size_t>(node.output_size());
  ShapeInferer inferer(opsets, options, tensors);
  // Moving the container keeps each initializer where it is: the inferer holds pointers to them.
  out.graph.mutable_initializer()->Swap(main->mutable_initializer());
  for (const onnx::TensorProto& init : out.graph.initializer())
    inferer.AddInitializer(init, initializers.at(init.name()));
  for (const onnx::ValueInfoProto& input : main->input()) {
    if (initializers.count(input.name()) > 0) continue;  // an initializer listed as input: its data decides
    RETURN_IF_ERROR(inferer.AddInput(input));
  }
  for (const onnx::ValueInfoProto& info : main->value_info()) inferer.AddDeclared(info);
  for (const onnx::ValueInfoProto& info : main->output()) inferer.AddDeclared(info);
  NameTable names;
  bool control_flow = false;
  for (const onnx::NodeProto& node : main->node()) control_flow = control_flow || HasSubgraph(node);
  if (control_flow) ReserveNames(*main, &names);
  Emitter emitter(&inferer, &names, options, opsets.at(""), &out.graph);
  Scope root;
  out.graph.mutable_node()->Reserve(main->node_size());
  for (int32_t n : index.order) {
    RETURN_IF_ERROR(emitter.EmitMainNode(main->mutable_node(n), &root, n));
  }
  out.graph.mutable_input()->Swap(main->mutable_input());
  for (const onnx::ValueInfoProto& output : main->output()) {
    onnx::ValueInfoProto* renamed = out.graph.add_output();
    *renamed = output;
    renamed->set_name(Emitter::Resolve(root, output.name()));
  }
  bool in_file_order = true;
  for (size_t i = 0; i < index.order.size() && in_file_order; ++i)
    in_file_order = index.order[i] == static_cast<int32_t>(i);
  // Nothing expanded and nothing reordered: the flat graph is the main graph, and so is its index.
  out.index = emitter.plain() && in_file_order ? std::move(index) : IndexInOrder(out.graph);
  out.shapes = std::move(inferer).Finish();
  return out;
}

}  // namespace placement::onnx_import
