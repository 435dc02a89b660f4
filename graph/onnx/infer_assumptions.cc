// ShapeInferer's assumptions (infer_shapes.h): sizes the data decides, the bounds of values computed from the
// data, Concats of assumed parts, and warnings said once for every iteration of an unrolled loop.
#include <algorithm>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "graph/onnx/attributes.h"
#include "graph/onnx/constant_kernels.h"
#include "graph/onnx/data_dependent.h"
#include "graph/onnx/graph_index.h"
#include "graph/onnx/infer_shapes.h"

namespace placement::onnx_import {

std::string EveryIteration(const std::string& name) {
  std::string out;
  out.reserve(name.size());
  for (size_t i = 0; i < name.size();) {
    const size_t at = name.find("/iter", i);
    if (at == std::string::npos) {
      out.append(name, i, std::string::npos);
      break;
    }
    size_t end = at + 5;
    while (end < name.size() && absl::ascii_isdigit(static_cast<unsigned char>(name[end]))) ++end;
    const bool numbered = end > at + 5 && (end == name.size() || name[end] == '/');
    out.append(name, i, at - i);
    out.append(numbered ? "/iter*" : name.substr(at, end - at));
    i = end;
  }
  return out;
}

std::vector<std::string> CollapseIterations(std::vector<std::string> warnings) {
  std::vector<std::string> keys;
  std::unordered_map<std::string, std::pair<size_t, int>> first;  // key -> (index in out, repeats)
  std::vector<std::string> out;
  for (std::string& w : warnings) {
    std::string key = EveryIteration(w);
    auto [it, added] = first.emplace(key, std::make_pair(out.size(), 0));
    if (added) {
      out.push_back(key == w ? std::move(w) : std::move(key));
    } else {
      ++it->second.second;
    }
  }
  for (const auto& [key, at] : first) {
    if (at.second > 0) absl::StrAppend(&out[at.first], " (in each of ", at.second + 1, " iterations)");
  }
  return out;
}

bool ShapeInferer::ReadsAssumed(const onnx::NodeProto& node) const {
  if (assumed_.empty()) return false;
  for (const std::string& input : node.input()) {
    if (assumed_.count(input) > 0) return true;
  }
  return false;
}

// Parts whose sizes were assumed from the data (each at its own bound) need not agree off the concatenation axis,
// as the real sizes would: the larger size is taken there, with a warning.
absl::Status ShapeInferer::ConcatOfAssumed(const onnx::NodeProto& node, int32_t index,
                                           std::vector<onnx::TypeProto>* outputs) {
  const TensorInfo* first = node.input_size() > 0 ? Info(node.input(0)) : nullptr;
  const int64_t rank = first == nullptr ? 0 : static_cast<int64_t>(first->dims.size());
  int64_t axis = IntAttr(node, "axis", 0);
  if (axis < 0) axis += rank;
  if (first == nullptr || axis < 0 || axis >= rank) {
    return absl::InvalidArgumentError(absl::StrCat("node ", NodeLabel(node, index), ": axis out of range"));
  }
  std::vector<int64_t> dims = first->dims;
  dims[axis] = 0;
  for (const std::string& input : node.input()) {
    const TensorInfo* info = Info(input);
    if (info == nullptr || static_cast<int64_t>(info->dims.size()) != rank) {
      return absl::InvalidArgumentError(absl::StrCat("node ", NodeLabel(node, index), ": inputs of different ranks"));
    }
    for (int64_t d = 0; d < rank; ++d) dims[d] = d == axis ? dims[d] + info->dims[d] : std::max(dims[d], info->dims[d]);
  }
  Warn(absl::StrCat("node ", NodeLabel(node, index),
                    ": Concat of parts whose sizes were assumed from the data "
                    "disagree off its axis (inputs: ",
                    InputShapes(node), "); the larger sizes are taken"));
  onnx::TypeProto_Tensor* t = (*outputs)[0].mutable_tensor_type();
  t->set_elem_type(first->elem_type);
  t->mutable_shape()->clear_dim();
  for (int64_t d : dims) t->mutable_shape()->add_dim()->set_dim_value(d);
  return absl::OkStatus();
}

void ShapeInferer::Bound(const onnx::NodeProto& node, int opset, const std::vector<int64_t>* output_dims) {
  if (!HasBoundRule(node.op_type())) return;
  std::vector<Bounds> made;  // for constants and unknown values; reserved so that pointers into it stay valid
  made.reserve(node.input_size());
  std::vector<const Bounds*> inputs;
  bool known = false;
  for (const std::string& name : node.input()) {
    if (name.empty()) {
      inputs.push_back(nullptr);
    } else if (const ConstValue* v = Value(name)) {
      made.push_back(ExactBounds(*v));
      inputs.push_back(&made.back());
      known = true;
    } else if (auto it = bounds_.find(name); it != bounds_.end()) {
      inputs.push_back(&it->second);
      known = true;
    } else {
      made.push_back(UnknownBounds());
      inputs.push_back(&made.back());
    }
  }
  if (!known || node.output_size() == 0) return;
  if (node.op_type() == "Split" && inputs[0] != nullptr) {  // every part is within the whole's range
    Bounds whole = Uniform(*inputs[0]);
    if (!whole.Informative()) return;
    for (const std::string& part : node.output()) {
      if (!part.empty()) bounds_[part] = whole;
    }
    return;
  }
  if (node.output(0).empty()) return;
  std::optional<Bounds> b = BoundOutput(node, opset, inputs, output_dims);
  if (!b || !b->Informative()) return;
  // A small tensor of known shape keeps per-element bounds, so that exact elements beside bounded ones (the
  // [1, 1] of a Resize's sizes before a computed height and width) stay exact where it is concatenated.
  if (b->uniform && output_dims != nullptr) {
    if (std::optional<int64_t> n = FoldableElements(*output_dims)) {
      b = Bounds{Reals(onnx::TensorProto::DOUBLE, *output_dims, std::vector<double>(*n, b->lo.reals[0])),
                 Reals(onnx::TensorProto::DOUBLE, *output_dims, std::vector<double>(*n, b->hi.reals[0])), false};
    }
  }
  bounds_[node.output(0)] = *std::move(b);
}

std::vector<InputView> ShapeInferer::Views(const onnx::NodeProto& node) const {
  std::vector<InputView> views;
  views.reserve(node.input_size());
  for (const std::string& name : node.input()) {
    auto b = bounds_.find(name);
    views.push_back(InputView{Info(name), Value(name), b == bounds_.end() ? nullptr : &b->second});
  }
  return views;
}

// A dimension inference left open: the user's value for "tensor:axis", else the bound data_dependent.h states,
// else it stays unknown and `missing` names it.
absl::Status ShapeInferer::ResolveDim(const onnx::NodeProto& node, int o, int d, onnx::TensorShapeProto_Dimension* dim,
                                      std::string* missing) {
  const std::string& name = node.output(o);
  for (const std::string& key : {absl::StrCat(name, ":", d), absl::StrCat(EveryIteration(name), ":", d)}) {
    if (auto it = options_.dims.find(key); it != options_.dims.end()) {
      dim->set_dim_value(it->second);
      return absl::OkStatus();
    }
  }
  std::optional<DimAssumption> assumed = DataDependentDim(node, o, d, Views(node));
  if (assumed) {
    dim->set_dim_value(assumed->value);
    if (assumed->exact) return absl::OkStatus();
    assumed_.insert(name);
    Warn(absl::StrCat("tensor '", name, "' dimension ", d, " depends on the data (", assumed->reason, "): assumed ",
                      assumed->value, "; set it with --dim '", name, ":", d, "=VALUE'"));
    return absl::OkStatus();
  }
  if (missing->empty()) *missing = absl::StrCat("dimension ", d);
  return absl::OkStatus();
}

}  // namespace placement::onnx_import
