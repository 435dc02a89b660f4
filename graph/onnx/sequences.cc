// Sequence operators (emitter.h): lists of tensors resolved while importing.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "graph/onnx/attributes.h"
#include "graph/onnx/emitter.h"
#include "graph/onnx/graph_index.h"
#include "graph/onnx/newer_ops.h"
#include "graph/status_macros.h"

namespace placement::onnx_import {
namespace {

// A position input folded to an index into a list of `size` (negative from the end; `insert` allows size).
std::optional<int64_t> Position(const ConstValue* v, int64_t size, bool insert) {
  if (v == nullptr || v->size() != 1 || v->is_real) return std::nullopt;
  int64_t p = v->ints[0];
  if (p < 0) p += size;
  if (p < 0 || p > size || (!insert && p == size)) return std::nullopt;
  return p;
}

absl::Status SequenceError(const onnx::NodeProto& node, int32_t index, const std::string& why) {
  return absl::InvalidArgumentError(absl::StrCat("node ", NodeLabel(node, index), ": ", why));
}

}  // namespace

bool IsSequenceOp(const onnx::NodeProto& node) {
  static const char* const kOps[] = {"SequenceEmpty", "SequenceConstruct", "SequenceInsert",     "SequenceErase",
                                     "SequenceAt",    "SequenceLength",    "ConcatFromSequence", "SplitToSequence"};
  if (!node.domain().empty() && node.domain() != "ai.onnx") return false;
  return std::find(std::begin(kOps), std::end(kOps), node.op_type()) != std::end(kOps);
}

std::string Emitter::OutputName(const Scope& scope, const std::string& local) {
  return scope.parent == nullptr ? local : scope.names.at(local);
}

absl::Status Emitter::EmitSequenceOp(onnx::NodeProto node, Scope* scope, int32_t index) {
  const std::string& op = node.op_type();
  if (node.output_size() != 1 || node.output(0).empty()) {
    return SequenceError(node, index, "a sequence operator needs its one output");
  }
  // Inputs each operator needs (the rest are optional): reading past them would index past the node's inputs.
  const int needed = op == "SequenceInsert" || op == "SequenceAt"         ? 2
                     : op == "SequenceEmpty" || op == "SequenceConstruct" ? 0
                                                                          : 1;
  for (int k = 0; k < needed; ++k) {
    if (k >= node.input_size() || node.input(k).empty()) {
      return SequenceError(node, index, absl::StrCat("input ", k, " is missing"));
    }
  }
  const std::string out = OutputName(*scope, node.output(0));
  if (op == "SequenceEmpty" || op == "SequenceConstruct") {
    for (const std::string& t : node.input()) {
      if (t.empty()) return SequenceError(node, index, "an element of the sequence is missing");
    }
    sequences_[out] = std::vector<std::string>(node.input().begin(), node.input().end());
    return absl::OkStatus();
  }
  if (op == "SplitToSequence") return EmitSplitToSequence(std::move(node), out, index);
  auto it = sequences_.find(node.input(0));
  if (it == sequences_.end()) {
    return SequenceError(node, index,
                         absl::StrCat("input '", node.input(0),
                                      "' is not a sequence the importer could "
                                      "follow (one built by SequenceEmpty, SequenceConstruct, "
                                      "SequenceInsert or SplitToSequence)"));
  }
  const std::vector<std::string> items = it->second;
  if (op == "SequenceLength" || op == "ConcatFromSequence") return ReadSequence(node, items, out, index);
  return EditSequence(node, items, out, scope, index);
}

// SequenceInsert, SequenceErase: a new list; SequenceAt: the tensor itself, with no operator.
absl::Status Emitter::EditSequence(const onnx::NodeProto& node, const std::vector<std::string>& items,
                                   const std::string& out, Scope* scope, int32_t index) {
  const std::string& op = node.op_type();
  const int64_t size = static_cast<int64_t>(items.size());
  const int at_slot = op == "SequenceInsert" ? 2 : 1;
  const bool given = node.input_size() > at_slot && !node.input(at_slot).empty();
  std::optional<int64_t> at = given ? Position(inferer_.Value(node.input(at_slot)), size, op == "SequenceInsert")
                                    : std::optional<int64_t>(op == "SequenceInsert" ? size : size - 1);
  if (!at || (op != "SequenceInsert" && (size == 0 || *at >= size))) {
    return SequenceError(node, index, "the position depends on the data or is out of range");
  }
  if (op == "SequenceAt") {
    scope->names[node.output(0)] = items[*at];
    return absl::OkStatus();
  }
  std::vector<std::string> next = items;
  if (op == "SequenceInsert")
    next.insert(next.begin() + *at, node.input(1));
  else
    next.erase(next.begin() + *at);
  sequences_[out] = std::move(next);
  return absl::OkStatus();
}

// SequenceLength: a Constant; ConcatFromSequence: a Concat of the tensors (a Stack with new_axis).
absl::Status Emitter::ReadSequence(const onnx::NodeProto& node, const std::vector<std::string>& items,
                                   const std::string& out, int32_t index) {
  onnx::NodeProto made;
  made.set_name(node.name().empty() ? absl::StrCat(node.op_type(), "_", index) : node.name());
  made.add_output(out);
  if (node.op_type() == "SequenceLength") {
    made.set_op_type("Constant");
    SetIntAttribute(&made, "value_int", static_cast<int64_t>(items.size()));
    return Append(std::move(made), index);
  }
  if (items.empty()) return SequenceError(node, index, "the sequence is empty");
  const bool new_axis = IntAttr(node, "new_axis", 0) != 0;
  made.set_op_type(new_axis ? "Stack" : "Concat");
  if (new_axis) made.set_domain(kInternalDomain);
  for (const std::string& t : items) made.add_input(t);
  SetIntAttribute(&made, "axis", IntAttr(node, "axis", 0));
  return Append(std::move(made), index);
}

// SplitToSequence: a Split into the parts (each squeezed when keepdims is 0 and no split is given); the
// sequence is the list of them.
absl::Status Emitter::EmitSplitToSequence(onnx::NodeProto node, const std::string& sequence, int32_t index) {
  onnx::NodeProto split;
  split.set_name(node.name().empty() ? absl::StrCat(node.op_type(), "_", index) : node.name());
  const TensorInfo* info = inferer_.Info(node.input(0));
  const int64_t rank = info == nullptr ? 0 : static_cast<int64_t>(info->dims.size());
  int64_t axis = IntAttr(node, "axis", 0);
  if (axis < 0) axis += rank;
  if (info == nullptr || axis < 0 || axis >= rank) {
    return SequenceError(node, index, "axis out of range");
  }
  const int64_t n = info->dims[axis];
  std::vector<int64_t> sizes;
  const bool given = node.input_size() > 1 && !node.input(1).empty();
  if (given) {
    const ConstValue* v = inferer_.Value(node.input(1));
    if (v == nullptr || v->is_real || (v->dims.size() == 0 && v->ints[0] < 1)) {
      return SequenceError(node, index, "the split depends on the data");
    }
    if (v->dims.empty()) {
      for (int64_t start = 0; start < n; start += v->ints[0]) sizes.push_back(std::min(v->ints[0], n - start));
    } else {
      sizes = v->ints;
    }
  } else {
    sizes.assign(n, 1);
  }
  split.set_op_type("Split");
  split.add_input(node.input(0));
  if (given) {
    absl::StatusOr<std::string> constant = EmitInts(split.name() + "/split", sizes);
    if (!constant.ok()) return constant.status();
    split.add_input(*constant);
  }
  SetIntAttribute(&split, "axis", axis);
  std::vector<std::string> parts;
  for (size_t k = 0; k < sizes.size(); ++k) {
    parts.push_back(names_.Fresh(absl::StrCat(split.name(), "/part", k)));
    split.add_output(parts.back());
  }
  const std::string base = split.name();
  RETURN_IF_ERROR(Append(std::move(split), index));
  if (!given && IntAttr(node, "keepdims", 1) == 0) {
    absl::StatusOr<std::string> axes = opset_ >= 13 ? EmitInts(base + "/axes", {axis}) : std::string();
    if (!axes.ok()) return axes.status();
    for (std::string& part : parts) {
      onnx::NodeProto squeeze;
      squeeze.set_op_type("Squeeze");
      squeeze.set_name(part + "/squeeze");
      squeeze.add_input(part);
      if (opset_ >= 13)
        squeeze.add_input(*axes);
      else
        SetIntsAttribute(&squeeze, "axes", {axis});
      part = names_.Fresh(squeeze.name());
      squeeze.add_output(part);
      RETURN_IF_ERROR(Append(std::move(squeeze), -1));
    }
  }
  sequences_[sequence] = std::move(parts);
  return absl::OkStatus();
}

}  // namespace placement::onnx_import
