// Sequence operators (emitter.h): lists of tensors resolved while importing.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "graph/onnx/attributes.h"
#include "graph/onnx/emitter.h"
#include "graph/onnx/graph_index.h"
#include "graph/onnx/newer_ops.h"

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

}  // namespace

bool IsSequenceOp(const onnx::NodeProto& node) {
  static const char* const kOps[] = {"SequenceEmpty", "SequenceConstruct", "SequenceInsert", "SequenceErase",
                                     "SequenceAt",    "SequenceLength",    "ConcatFromSequence", "SplitToSequence"};
  if (!node.domain().empty() && node.domain() != "ai.onnx") return false;
  return std::find(std::begin(kOps), std::end(kOps), node.op_type()) != std::end(kOps);
}

std::string Emitter::OutputName(const Scope& scope, const std::string& local) {
  return scope.parent == nullptr ? local : scope.names.at(local);
}

absl::Status Emitter::EmitSequenceOp(onnx::NodeProto node, Scope* scope, int32_t index) {
  const std::string& op = node.op_type();
  auto fail = [&](const std::string& why) {
    return absl::InvalidArgumentError(absl::StrCat("node ", NodeLabel(node, index), ": ", why));
  };
  if (node.output_size() != 1 || node.output(0).empty()) return fail("a sequence operator needs its one output");
  // Inputs each operator needs (the rest are optional): reading past them would index past the node's inputs.
  const int needed = op == "SequenceInsert" || op == "SequenceAt" ? 2
                     : op == "SequenceEmpty" || op == "SequenceConstruct" ? 0 : 1;
  for (int k = 0; k < needed; ++k) {
    if (k >= node.input_size() || node.input(k).empty()) return fail(absl::StrCat("input ", k, " is missing"));
  }
  auto list = [&](int k) -> const std::vector<std::string>* {
    if (k >= node.input_size()) return nullptr;
    auto it = sequences_.find(node.input(k));
    return it == sequences_.end() ? nullptr : &it->second;
  };
  const std::string out = OutputName(*scope, node.output(0));
  if (op == "SequenceEmpty") {
    sequences_[out] = {};
    return absl::OkStatus();
  }
  if (op == "SequenceConstruct") {
    for (const std::string& t : node.input()) {
      if (t.empty()) return fail("an element of the sequence is missing");
    }
    sequences_[out] = std::vector<std::string>(node.input().begin(), node.input().end());
    return absl::OkStatus();
  }
  const std::vector<std::string>* items = list(0);
  if (op != "SplitToSequence" && items == nullptr) {
    return fail(absl::StrCat("input '", node.input_size() > 0 ? node.input(0) : "", "' is not a sequence the "
                             "importer could follow (one built by SequenceEmpty, SequenceConstruct, "
                             "SequenceInsert or SplitToSequence)"));
  }
  const int64_t size = items == nullptr ? 0 : static_cast<int64_t>(items->size());
  const ConstValue* position = node.input_size() > 1 && !node.input(1).empty() ? inferer_.Value(node.input(1)) : nullptr;
  const bool positioned = node.input_size() > 1 && !node.input(1).empty() && op != "SequenceInsert";
  if (op == "SequenceInsert" || op == "SequenceErase") {
    const bool given = op == "SequenceInsert" ? node.input_size() > 2 && !node.input(2).empty() : positioned;
    const ConstValue* at_value = op == "SequenceInsert" && given ? inferer_.Value(node.input(2)) : position;
    std::optional<int64_t> at = given ? Position(at_value, size, op == "SequenceInsert")
                                      : std::optional<int64_t>(op == "SequenceInsert" ? size : size - 1);
    if (!at || (op == "SequenceErase" && size == 0)) return fail("the position depends on the data or is out of range");
    std::vector<std::string> next = *items;
    if (op == "SequenceInsert") next.insert(next.begin() + *at, node.input(1));
    else next.erase(next.begin() + *at);
    sequences_[out] = std::move(next);
    return absl::OkStatus();
  }
  if (op == "SequenceAt") {
    std::optional<int64_t> at = Position(position, size, false);
    if (!at) return fail("the position depends on the data or is out of range");
    scope->names[node.output(0)] = (*items)[*at];  // the tensor itself: no operator
    return absl::OkStatus();
  }
  onnx::NodeProto made;
  made.set_name(node.name().empty() ? absl::StrCat(op, "_", index) : node.name());
  made.add_output(out);
  if (op == "SequenceLength") {
    made.set_op_type("Constant");
    onnx::AttributeProto* a = made.add_attribute();
    a->set_name("value_int");
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(size);
    return Append(std::move(made), index);
  }
  if (op == "ConcatFromSequence") {
    if (size == 0) return fail("the sequence is empty");
    const bool new_axis = IntAttr(node, "new_axis", 0) != 0;
    made.set_op_type(new_axis ? "Stack" : "Concat");
    if (new_axis) made.set_domain(kInternalDomain);
    for (const std::string& t : *items) made.add_input(t);
    SetIntAttribute(&made, "axis", IntAttr(node, "axis", 0));
    return Append(std::move(made), index);
  }
  return EmitSplitToSequence(std::move(node), std::move(made), index);
}

// SplitToSequence: a Split into the parts (each squeezed when keepdims is 0 and no split is given); the
// sequence is the list of them.
absl::Status Emitter::EmitSplitToSequence(onnx::NodeProto node, onnx::NodeProto split, int32_t index) {
  const std::string sequence = split.output(0);
  split.clear_output();
  const TensorInfo* info = inferer_.Info(node.input(0));
  const int64_t rank = info == nullptr ? 0 : static_cast<int64_t>(info->dims.size());
  int64_t axis = IntAttr(node, "axis", 0);
  if (axis < 0) axis += rank;
  if (info == nullptr || axis < 0 || axis >= rank) {
    return absl::InvalidArgumentError(absl::StrCat("node ", NodeLabel(node, index), ": axis out of range"));
  }
  const int64_t n = info->dims[axis];
  std::vector<int64_t> sizes;
  const bool given = node.input_size() > 1 && !node.input(1).empty();
  if (given) {
    const ConstValue* v = inferer_.Value(node.input(1));
    if (v == nullptr || v->is_real || (v->dims.size() == 0 && v->ints[0] < 1)) {
      return absl::InvalidArgumentError(absl::StrCat("node ", NodeLabel(node, index), ": the split depends on the data"));
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
  if (absl::Status s = Append(std::move(split), index); !s.ok()) return s;
  if (!given && IntAttr(node, "keepdims", 1) == 0) {
    absl::StatusOr<std::string> axes = opset_ >= 13 ? EmitInts(base + "/axes", {axis}) : std::string();
    if (!axes.ok()) return axes.status();
    for (std::string& part : parts) {
      onnx::NodeProto squeeze;
      squeeze.set_op_type("Squeeze");
      squeeze.set_name(part + "/squeeze");
      squeeze.add_input(part);
      if (opset_ >= 13) squeeze.add_input(*axes);
      else SetIntsAttribute(&squeeze, "axes", {axis});
      part = names_.Fresh(squeeze.name());
      squeeze.add_output(part);
      if (absl::Status s = Append(std::move(squeeze), -1); !s.ok()) return s;
    }
  }
  sequences_[sequence] = std::move(parts);
  return absl::OkStatus();
}

}  // namespace placement::onnx_import
