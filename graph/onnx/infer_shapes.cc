#include "graph/onnx/infer_shapes.h"

#include <algorithm>
#include <exception>
#include <optional>

#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/onnx/data_dependent.h"
#include "graph/onnx/einsum.h"
#include "graph/onnx/graph_index.h"
#include "graph/onnx/input_binding.h"
#include "graph/onnx/model_reader.h"
#include "graph/onnx/newer_ops.h"
#include "graph/onnx/node_checks.h"
#include "graph/status_macros.h"

namespace placement::onnx_import {
namespace {

std::vector<int64_t> KnownDims(const onnx::TypeProto& type, bool* all_known) {
  std::vector<int64_t> dims;
  *all_known = type.has_tensor_type() && type.tensor_type().has_shape();
  if (!*all_known) return dims;
  for (const auto& dim : type.tensor_type().shape().dim()) {
    *all_known = *all_known && dim.has_dim_value();
    dims.push_back(dim.has_dim_value() ? dim.dim_value() : -1);
  }
  return dims;
}

onnx::TypeProto TensorType(int32_t elem_type, const std::vector<int64_t>& dims) {
  onnx::TypeProto type;
  type.mutable_tensor_type()->set_elem_type(elem_type);
  onnx::TensorShapeProto* shape = type.mutable_tensor_type()->mutable_shape();
  for (int64_t d : dims) shape->add_dim()->set_dim_value(d);
  return type;
}

}  // namespace

ShapeInferer::ShapeInferer(const std::unordered_map<std::string, int>& opsets, const OnnxImportOptions& options,
                           size_t expected_tensors)
    : options_(options) {
  for (const auto& [domain, opset] : opsets) domains_[domain] = DomainOpsets{opset, MaxLibraryOpset(domain)};
  type_store_.reserve(expected_tensors);
  types_.reserve(expected_tensors);
  result_.tensors.reserve(expected_tensors);
}

void ShapeInferer::AddInitializer(const onnx::TensorProto& init, const TensorInfo& info) {
  SetType(init.name(), TensorType(info.elem_type, info.dims));
  result_.tensors[init.name()] = info;
  if (std::optional<ConstValue> value = DecodeTensor(init)) {
    data_[init.name()] = &init;
    consts_[init.name()] = std::move(*value);
  }
}

absl::Status ShapeInferer::AddInput(const onnx::ValueInfoProto& input) {
  absl::StatusOr<BoundInput> bound = BindInput(input, options_);
  if (!bound.ok()) return bound.status();
  for (const auto& [symbol, value] : bound->symbols) symbols_[symbol] = value;
  for (const std::string& part : bound->unresolved) Unresolved(input.name(), part);
  batch_bound_ = batch_bound_ || bound->used_batch;
  if (first_input_batch_ == 0) first_input_batch_ = bound->info.dims.empty() ? 1 : std::max<int64_t>(bound->info.dims[0], 1);
  sequence_bound_ = sequence_bound_ || bound->used_sequence;
  result_.tensors[input.name()] = bound->info;
  SetType(input.name(), std::move(bound->type));
  return absl::OkStatus();
}

void ShapeInferer::AddDeclared(const onnx::ValueInfoProto& info) {
  if (info.type().has_tensor_type()) declared_[info.name()] = &info.type();
}

const TensorInfo* ShapeInferer::Info(const std::string& name) const {
  auto it = result_.tensors.find(name);
  return it == result_.tensors.end() ? nullptr : &it->second;
}

const ConstValue* ShapeInferer::Value(const std::string& name) const {
  auto it = consts_.find(name);
  return it == consts_.end() ? nullptr : &it->second;
}

absl::Status ShapeInferer::InferNode(onnx::NodeProto& node, int32_t index) {
  static const std::string kDefaultDomain;
  const std::string& domain = node.domain() == "ai.onnx" ? kDefaultDomain : node.domain();
  int opset = 1;
  std::vector<onnx::TypeProto> outputs(node.output_size());
  absl::Status status;
  if (domain == kInternalDomain) {
    status = InferWithOwnRule(node, index, InternalOp(node.op_type()), &outputs);
  } else {
    auto it = domains_.find(domain);
    if (it == domains_.end()) {
      return absl::InvalidArgumentError(absl::StrCat("node ", NodeLabel(node, index), " uses domain '", domain,
                                                     "', which the model's opset_import does not list"));
    }
    opset = it->second.opset;
    const int library = it->second.library;
    std::optional<NewerOpRule> newer =
        domain.empty() && opset > kLibraryOpset ? NewerOp(node.op_type(), opset) : std::nullopt;
    if (newer && newer->own != nullptr) {
      status = InferWithOwnRule(node, index, newer->own, &outputs);
    } else {
      status =
          InferWithSchema(node, index, opset, std::min(opset, library), newer.has_value() || opset > library, &outputs);
    }
  }
  if (!status.ok()) return status;
  for (int o = 0; o < node.output_size(); ++o) {
    if (auto it = declared_.find(node.output(o)); it != declared_.end()) FillFromDeclared(*it->second, &outputs[o]);
  }
  if (domain.empty()) {
    Fold(node, opset, &outputs);
    if (node.op_type() == "Einsum" && !outputs.empty()) EinsumShape(node, &outputs[0]);
  }
  return SetOutputs(node, index, std::move(outputs));
}

absl::Status ShapeInferer::SetOutputs(const onnx::NodeProto& node, int32_t index,
                                      std::vector<onnx::TypeProto> outputs) {
  for (int o = 0; o < node.output_size() && o < static_cast<int>(outputs.size()); ++o) {
    if (node.output(o).empty()) continue;
    RETURN_IF_ERROR(Resolve(node, index, o, std::move(outputs[o])));
  }
  return absl::OkStatus();
}

// The schema of the node's opset (the library's last where the model's is newer): its checks, then its
// inference. A type the schema does not list (Sqrt over int64, as some exporters write) is a warning, not a
// refusal: the inference functions propagate types and shapes all the same.
absl::Status ShapeInferer::InferWithSchema(onnx::NodeProto& node, int32_t index, int opset, int schema_opset,
                                           bool lenient, std::vector<onnx::TypeProto>* outputs) {
  const bool standard = node.domain().empty() || node.domain() == "ai.onnx";
  const onnx::OpSchema* schema =
      onnx::OpSchemaRegistry::Schema(node.op_type(), schema_opset, standard ? std::string() : node.domain());
  if (schema == nullptr && standard) {
    return absl::InvalidArgumentError(absl::StrCat("node ", NodeLabel(node, index), ": op type '", node.op_type(),
                                                   "' does not exist in opset ", opset));
  }
  if (standard) {
    RETURN_IF_ERROR(CheckNodeAttributes(node, index, types_));
  }
  if (schema == nullptr) return absl::OkStatus();  // a custom op: declared types may say more
  try {
    if (!lenient) schema->Verify(node);
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("node ", NodeLabel(node, index), " is invalid: ", e.what()));
  }
  onnx::shape_inference::InferenceContextImpl ctx(node, types_, data_, {}, nullptr, nullptr);
  if (!lenient) {
    try {
      schema->CheckInputOutputType(ctx);
    } catch (const std::exception& e) {
      TypeWarning& warning = type_warnings_[node.op_type()];
      if (warning.count++ == 0) warning.first = absl::StrCat(NodeLabel(node, index), ": ", e.what());
    }
  }
  try {
    if (schema->has_type_and_shape_inference_function()) {
      schema->GetTypeAndShapeInferenceFunction()(ctx);
    } else if (schema->HasFunction()) {
      onnx::shape_inference::InferShapeForFunctionNode(*schema->GetFunction(), onnx::OpSchemaRegistry::Instance(), ctx);
    }
  } catch (const std::exception& e) {
    if (node.op_type() == "Concat" && ReadsAssumed(node)) return ConcatOfAssumed(node, index, outputs);
    return absl::InvalidArgumentError(absl::StrCat(
        "node ", NodeLabel(node, index), ": shape inference failed: ", e.what(), " (inputs: ", InputShapes(node), ")"));
  }
  *outputs = std::move(ctx.allOutputTypes_);
  outputs->resize(node.output_size());
  return absl::OkStatus();
}

absl::Status ShapeInferer::InferWithOwnRule(const onnx::NodeProto& node, int32_t index, ShapeFn rule,
                                            std::vector<onnx::TypeProto>* outputs) {
  if (rule == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("node ", NodeLabel(node, index), ": op type '", node.op_type(),
                                                   "' of domain '", node.domain(), "' is not one the importer knows"));
  }
  absl::Status status = rule(node, Views(node), outputs);
  if (!status.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("node ", NodeLabel(node, index), ": ", status.message(), " (inputs: ", InputShapes(node), ")"));
  }
  return absl::OkStatus();
}

void ShapeInferer::SetType(const std::string& name, onnx::TypeProto type) {
  onnx::TypeProto& stored = type_store_[name];
  stored = std::move(type);
  types_[name] = &stored;
}

void ShapeInferer::Unresolved(const std::string& tensor, const std::string& part) {
  unresolved_.insert(tensor);  // its sizes are a guess: never evaluate Shape on it
  if (unresolved_count_++ == 0) first_unresolved_ = absl::StrCat("'", tensor, "' ", part);
}

void ShapeInferer::FillFromDeclared(const onnx::TypeProto& declared, onnx::TypeProto* type) {
  const onnx::TypeProto_Tensor& from = declared.tensor_type();
  onnx::TypeProto_Tensor* to = type->mutable_tensor_type();
  if (to->elem_type() == 0) to->set_elem_type(from.elem_type());
  if (!from.has_shape()) return;
  if (!to->has_shape()) *to->mutable_shape() = from.shape();
  if (to->shape().dim_size() != from.shape().dim_size()) return;
  for (int d = 0; d < from.shape().dim_size(); ++d) {
    onnx::TensorShapeProto_Dimension* dim = to->mutable_shape()->mutable_dim(d);
    if (dim->has_dim_value()) continue;
    const onnx::TensorShapeProto_Dimension& known = from.shape().dim(d);
    if (known.has_dim_value()) {
      dim->set_dim_value(known.dim_value());
    } else if (auto it = symbols_.find(known.dim_param()); known.has_dim_param() && it != symbols_.end()) {
      dim->set_dim_value(it->second);
    }
  }
}

// "'a' [1,4], 'b' [5,3]" for error messages.
std::string ShapeInferer::InputShapes(const onnx::NodeProto& node) const {
  std::vector<std::string> parts;
  for (const std::string& input : node.input()) {
    const TensorInfo* info = Info(input);
    parts.push_back(absl::StrCat("'", input, "' ", info != nullptr ? DimsString(info->dims) : "?"));
  }
  return absl::StrJoin(parts, ", ");
}

// Evaluates the outputs when the inputs are constants; a value also gives its output's shape where inference
// did not.
void ShapeInferer::Fold(const onnx::NodeProto& node, int opset, std::vector<onnx::TypeProto>* outputs) {
  std::vector<FoldInput> inputs;
  inputs.reserve(node.input_size());
  for (const std::string& input : node.input()) {
    FoldInput in;
    in.value = Value(input);
    const TensorInfo* info = Info(input);
    if (info != nullptr && unresolved_.count(input) == 0) in.dims = &info->dims;
    in.elem_type = info != nullptr ? info->elem_type : 0;
    inputs.push_back(in);
  }
  bool known = false;
  std::vector<int64_t> out_dims = outputs->empty() ? std::vector<int64_t>() : KnownDims((*outputs)[0], &known);
  std::vector<ConstValue> values = FoldNode(node, opset, inputs, known ? &out_dims : nullptr);
  if (values.empty() && !outputs->empty()) Bound(node, opset, known ? &out_dims : nullptr);
  for (size_t o = 0; o < values.size() && o < outputs->size(); ++o) {
    ConstValue& value = values[o];
    onnx::TypeProto_Tensor* tensor = (*outputs)[o].mutable_tensor_type();
    bool shape_known = false;
    KnownDims((*outputs)[o], &shape_known);
    if (!shape_known) {
      if (tensor->elem_type() == 0) tensor->set_elem_type(value.elem_type);
      tensor->mutable_shape()->clear_dim();
      for (int64_t d : value.dims) tensor->mutable_shape()->add_dim()->set_dim_value(d);
    }
    const std::string& name = node.output(static_cast<int>(o));
    if (name.empty()) continue;
    if (std::optional<onnx::TensorProto> encoded = EncodeTensor(value, name)) {
      encoded_.push_back(std::move(*encoded));
      data_[name] = &encoded_.back();
    }
    consts_[name] = std::move(value);
  }
}

// ONNX 1.12 infers only the rank of an Einsum's output.
void ShapeInferer::EinsumShape(const onnx::NodeProto& node, onnx::TypeProto* type) {
  std::vector<std::vector<int64_t>> operands;
  for (const std::string& input : node.input()) {
    const TensorInfo* info = Info(input);
    if (info == nullptr) return;
    operands.push_back(info->dims);
  }
  std::string equation;
  for (const onnx::AttributeProto& a : node.attribute()) {
    if (a.name() == "equation") equation = a.s();
  }
  std::optional<onnx_import::EinsumShape> shape = AnalyzeEinsum(equation, operands);
  if (!shape) return;
  onnx::TensorShapeProto* dims = type->mutable_tensor_type()->mutable_shape();
  dims->clear_dim();
  for (int64_t d : shape->output) dims->add_dim()->set_dim_value(d);
}

absl::Status ShapeInferer::Resolve(const onnx::NodeProto& node, int32_t index, int o, onnx::TypeProto type) {
  const std::string& name = node.output(o);
  std::string where = absl::StrCat("tensor '", name, "' (output ", o, " of node ", NodeLabel(node, index), ")");
  if (!type.has_tensor_type() && type.value_case() != onnx::TypeProto::VALUE_NOT_SET) {
    return absl::InvalidArgumentError(absl::StrCat(where, " is not a tensor (sequences and maps are not supported)"));
  }
  onnx::TypeProto_Tensor* tensor = type.mutable_tensor_type();
  std::string missing;
  if (tensor->elem_type() == 0) {
    // An output without a type is one nothing could say anything about (an optional output the schema leaves
    // untyped); it takes the type of the node's first input, which is right for every standard op that has one.
    const TensorInfo* first = node.input_size() > 0 ? Info(node.input(0)) : nullptr;
    tensor->set_elem_type(first != nullptr ? first->elem_type : onnx::TensorProto::FLOAT);
    Warn(absl::StrCat(where, " has no inferred element type; assumed ", DataTypeName(tensor->elem_type())));
  }
  if (!tensor->has_shape()) {
    if (std::optional<int64_t> rank = DataDependentRank(node, o, Views(node))) {
      for (int64_t d = 0; d < *rank; ++d) tensor->mutable_shape()->add_dim();
    } else {
      missing = "its shape";
    }
  }
  // Unknown dims count as 1 for sizes but stay unknown in the type later nodes are inferred from, so that their
  // inference does not build on a made-up rank.
  std::vector<int64_t> dims;
  for (int d = 0; d < tensor->shape().dim_size(); ++d) {
    onnx::TensorShapeProto_Dimension* dim = tensor->mutable_shape()->mutable_dim(d);
    if (!dim->has_dim_value()) {
      RETURN_IF_ERROR(ResolveDim(node, o, d, dim, &missing));
    }
    dims.push_back(dim->has_dim_value() ? dim->dim_value() : 1);
  }
  if (!missing.empty()) {
    if (!options_.allow_unresolved_dims) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": shape inference could not resolve ", missing,
                       " (a data-dependent size or an op without a "
                       "schema); give it with --dim '",
                       name,
                       ":AXIS=VALUE' (dims in the RPC options), or set "
                       "--allow_unresolved_dims (allow_unresolved_dims) to count it as 1"));
    }
    Unresolved(name, missing);
  }
  absl::StatusOr<TensorInfo> info = MakeTensorInfo(tensor->elem_type(), std::move(dims), where);
  if (!info.ok()) return info.status();
  if (assumed_.count(name) == 0 && ReadsAssumed(node)) assumed_.insert(name);
  result_.tensors[name] = *std::move(info);
  SetType(name, std::move(type));
  return absl::OkStatus();
}

InferredShapes ShapeInferer::Finish() && {
  for (const auto& [name, value] : consts_) result_.folded.insert(name);
  result_.warnings = CollapseIterations(std::move(result_.warnings));
  if (unresolved_count_ > 0) {
    result_.warnings.push_back(absl::StrCat(unresolved_count_,
                                            " tensors have shapes shape inference could not "
                                            "fully resolve; unknown dimensions count as 1 (first: ",
                                            first_unresolved_, ")"));
  }
  for (const auto& [op, warning] : type_warnings_) {
    result_.warnings.push_back(absl::StrCat(warning.count, " node", warning.count == 1 ? " " : "s ", "of op type ", op,
                                            " read input types the schema does not list; imported as written ",
                                            "(first: ", warning.first, ")"));
  }
  if (!batch_bound_) result_.fixed_batch = std::max<int64_t>(first_input_batch_, 1);
  if (options_.batch_size.has_value() && !batch_bound_) {
    result_.warnings.push_back(absl::StrCat("batch size ", *options_.batch_size,
                                            " binds no dimension: every graph "
                                            "input's batch axis is fixed in the model, which is placed as exported"));
  }
  if (options_.sequence_length.has_value() && !sequence_bound_) {
    result_.warnings.push_back(absl::StrCat("sequence length ", *options_.sequence_length,
                                            " binds no dimension: no "
                                            "graph input has a symbolic sequence axis"));
  }
  return std::move(result_);
}

}  // namespace placement::onnx_import
