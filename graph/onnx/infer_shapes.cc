#include "graph/onnx/infer_shapes.h"

#include <deque>
#include <exception>
#include <optional>
#include <unordered_set>

#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/onnx/constant_folding.h"
#include "graph/onnx/einsum.h"

namespace placement::onnx_import {
namespace {

// The value bound to a symbolic dimension of a graph input, by the rules of docs/onnx.md.
std::optional<int64_t> BindSymbol(const std::string& symbol, const OnnxImportOptions& options) {
  if (auto it = options.dims.find(symbol); it != options.dims.end()) return it->second;
  std::string lower = absl::AsciiStrToLower(symbol);
  if (lower == "n" || lower.find("batch") != std::string::npos) return options.batch_size;
  if (lower.find("seq") != std::string::npos) return options.sequence_length;
  return std::nullopt;
}

// Attributes that are sizes or divisors in every standard op that has them. ONNX's inference functions
// divide by some of them unchecked (a stride of 0 in a Conv is a division by zero), so they are checked first.
absl::Status CheckPositiveAttributes(const onnx::GraphProto& graph, int32_t n) {
  static const char* const kPositive[] = {"strides", "dilations", "kernel_shape", "group", "blocksize", "hidden_size"};
  for (const onnx::AttributeProto& a : graph.node(n).attribute()) {
    for (const char* name : kPositive) {
      if (a.name() != name) continue;
      bool bad = (a.has_i() && a.i() < 1);
      for (int64_t v : a.ints()) bad = bad || v < 1;
      if (bad) {
        return absl::InvalidArgumentError(
            absl::StrCat("node ", NodeLabel(graph, n), " attribute '", name, "' must be positive"));
      }
    }
  }
  return absl::OkStatus();
}

// The rank of a tensor whose shape is known, else -1.
int RankOf(const std::unordered_map<std::string, onnx::TypeProto*>& types, const std::string& name) {
  const auto it = types.find(name);
  if (it == types.end() || it->second == nullptr || !it->second->tensor_type().has_shape()) return -1;
  return it->second->tensor_type().shape().dim_size();
}

// ONNX 1.12's shape inference for convolutions and pooling sizes its per-axis vectors by the input's rank and
// then indexes them by the kernel's: a 2-D input with a 4-D kernel (or a kernel_shape, pads, strides or
// dilations of the wrong length) reads past their end and crashes the process (found by fuzzing, see
// tests/fuzz/corpus/onnx_import/regression_*). The ranks are checked here before ONNX sees the node.
absl::Status CheckConvPoolRanks(const onnx::GraphProto& graph, int32_t n,
                                const std::unordered_map<std::string, onnx::TypeProto*>& types) {
  const onnx::NodeProto& node = graph.node(n);
  const std::string& op = node.op_type();
  int weight = -1;  // the input that holds the kernel, if any
  if (op == "Conv" || op == "ConvInteger" || op == "ConvTranspose") {
    weight = 1;
  } else if (op == "QLinearConv") {
    weight = 3;
  } else if (op != "MaxPool" && op != "AveragePool" && op != "LpPool") {
    return absl::OkStatus();
  }
  if (node.input_size() == 0) return absl::OkStatus();  // the schema check names the missing input
  const int rank = RankOf(types, node.input(0));
  if (rank < 0) return absl::OkStatus();
  if (rank < 2) {
    return absl::InvalidArgumentError(absl::StrCat("node ", NodeLabel(graph, n), ": input '", node.input(0),
                                                   "' has rank ", rank, "; it needs a batch and a channel axis"));
  }
  if (weight >= 0 && weight < node.input_size()) {
    const int weight_rank = RankOf(types, node.input(weight));
    if (weight_rank >= 0 && weight_rank != rank) {
      return absl::InvalidArgumentError(absl::StrCat("node ", NodeLabel(graph, n), ": input '", node.input(0),
                                                     "' has rank ", rank, " but weight '", node.input(weight),
                                                     "' has rank ", weight_rank));
    }
  }
  const int spatial = rank - 2;
  for (const onnx::AttributeProto& a : node.attribute()) {
    int want = -1;
    if (a.name() == "kernel_shape" || a.name() == "strides" || a.name() == "dilations" || a.name() == "output_padding") {
      want = spatial;
    } else if (a.name() == "pads") {
      want = 2 * spatial;
    }
    if (want >= 0 && a.ints_size() != want) {
      return absl::InvalidArgumentError(absl::StrCat("node ", NodeLabel(graph, n), ": attribute '", a.name(), "' has ",
                                                     a.ints_size(), " values; an input of rank ", rank, " needs ", want));
    }
  }
  return absl::OkStatus();
}

// Carries what the node-by-node inference needs: types by name (ONNX's inference context reads them through
// pointers), constant values and their TensorProto form, and the unresolved-dimension bookkeeping.
class ShapeInferer {
 public:
  ShapeInferer(onnx::GraphProto& graph, const std::unordered_map<std::string, int>& opsets,
               const OnnxImportOptions& options)
      : graph_(graph), opsets_(opsets), options_(options) {
    size_t tensors = static_cast<size_t>(graph.input_size() + graph.initializer_size());
    for (const onnx::NodeProto& node : graph.node()) tensors += static_cast<size_t>(node.output_size());
    type_store_.reserve(tensors);
    types_.reserve(tensors);
    result_.tensors.reserve(tensors);
  }

  void AddInitializer(const onnx::TensorProto& init, const TensorInfo& info) {
    onnx::TypeProto type;
    type.mutable_tensor_type()->set_elem_type(info.elem_type);
    onnx::TensorShapeProto* shape = type.mutable_tensor_type()->mutable_shape();
    for (int64_t d : info.dims) shape->add_dim()->set_dim_value(d);
    SetType(init.name(), std::move(type));
    result_.tensors[init.name()] = info;
    if (std::optional<ConstValue> value = DecodeTensor(init)) {
      data_[init.name()] = &init;
      consts_[init.name()] = std::move(*value);
    }
  }

  absl::Status AddInput(const onnx::ValueInfoProto& input) {
    std::string what = absl::StrCat("graph input '", input.name(), "'");
    if (!input.type().has_tensor_type() || input.type().tensor_type().elem_type() == 0) {
      return absl::InvalidArgumentError(absl::StrCat(what, " is not a tensor with an element type"));
    }
    onnx::TypeProto type = input.type();
    onnx::TypeProto_Tensor* tensor = type.mutable_tensor_type();
    if (!tensor->has_shape()) {
      if (!options_.allow_unresolved_dims) {
        return absl::InvalidArgumentError(absl::StrCat(what, " has no shape (not even a rank)"));
      }
      Unresolved(input.name(), "its rank");
    }
    for (int d = 0; d < tensor->shape().dim_size(); ++d) {
      onnx::TensorShapeProto_Dimension* dim = tensor->mutable_shape()->mutable_dim(d);
      if (dim->has_dim_value()) {
        if (dim->dim_value() < 0) {
          return absl::InvalidArgumentError(absl::StrCat(what, " has a negative dimension ", dim->dim_value(),
                                                         " at index ", d));
        }
        continue;
      }
      std::optional<int64_t> value;
      if (dim->has_dim_param() && !dim->dim_param().empty()) {
        value = BindSymbol(dim->dim_param(), options_);
        if (!value && !options_.allow_unresolved_dims) {
          return absl::InvalidArgumentError(absl::StrCat(
              what, " dimension ", d, " is the symbol '", dim->dim_param(),
              "', which no rule binds: give its value in the import options' dims"));
        }
        if (value) symbols_[dim->dim_param()] = *value;
      } else if (d == 0) {
        value = options_.batch_size;  // an unnamed leading dimension is the batch by convention
      } else if (!options_.allow_unresolved_dims) {
        return absl::InvalidArgumentError(
            absl::StrCat(what, " dimension ", d, " has neither a value nor a name, so it cannot be bound"));
      }
      if (!value) {
        Unresolved(input.name(), absl::StrCat("dimension ", d));
        value = 1;
      }
      dim->set_dim_value(*value);
    }
    std::vector<int64_t> dims;
    for (const auto& dim : tensor->shape().dim()) dims.push_back(dim.dim_value());
    absl::StatusOr<TensorInfo> info = MakeTensorInfo(tensor->elem_type(), std::move(dims), what);
    if (!info.ok()) return info.status();
    result_.tensors[input.name()] = *info;
    SetType(input.name(), std::move(type));
    return absl::OkStatus();
  }

  // Declared types (value_info and graph outputs) fill in what a node's inference leaves unknown, e.g. the
  // outputs of an operator from a domain this ONNX build has no schema for.
  void AddDeclared(const onnx::ValueInfoProto& info) {
    if (info.type().has_tensor_type()) declared_[info.name()] = &info.type();
  }

  absl::Status InferNode(int32_t n) {
    onnx::NodeProto& node = *graph_.mutable_node(n);
    std::string domain = node.domain() == "ai.onnx" ? "" : node.domain();
    auto opset = opsets_.find(domain);
    if (opset == opsets_.end()) {
      return absl::InvalidArgumentError(absl::StrCat("node ", NodeLabel(graph_, n), " uses domain '", domain,
                                                     "', which the model's opset_import does not list"));
    }
    const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(node.op_type(), opset->second, domain);
    if (schema == nullptr && domain.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("node ", NodeLabel(graph_, n), ": op type '", node.op_type(),
                                                     "' does not exist in opset ", opset->second));
    }
    if (domain.empty()) {
      absl::Status status = CheckPositiveAttributes(graph_, n);
      if (status.ok()) status = CheckConvPoolRanks(graph_, n, types_);
      if (!status.ok()) return status;
    }
    try {
      if (schema != nullptr) schema->Verify(node);
    } catch (const std::exception& e) {
      return absl::InvalidArgumentError(absl::StrCat("node ", NodeLabel(graph_, n), " is invalid: ", e.what()));
    }
    onnx::shape_inference::InferenceContextImpl ctx(node, types_, data_, {}, nullptr, nullptr);
    try {
      if (schema != nullptr) {
        schema->CheckInputOutputType(ctx);
        if (schema->has_type_and_shape_inference_function()) {
          schema->GetTypeAndShapeInferenceFunction()(ctx);
        } else if (schema->HasFunction()) {
          onnx::shape_inference::InferShapeForFunctionNode(*schema->GetFunction(), onnx::OpSchemaRegistry::Instance(),
                                                           ctx);
        }
      }
    } catch (const std::exception& e) {
      return absl::InvalidArgumentError(absl::StrCat("node ", NodeLabel(graph_, n), ": shape inference failed: ",
                                                     e.what(), " (inputs: ", InputShapes(node), ")"));
    }
    for (int o = 0; o < node.output_size(); ++o) {
      const std::string& name = node.output(o);
      if (name.empty()) continue;
      onnx::TypeProto type = ctx.allOutputTypes_[o];
      if (auto it = declared_.find(name); it != declared_.end()) FillFromDeclared(*it->second, &type);
      if (o == 0) Fold(node, opset->second, &type);
      if (o == 0 && node.op_type() == "Einsum" && domain.empty()) EinsumShape(node, &type);
      absl::Status status = Resolve(n, o, std::move(type));
      if (!status.ok()) return status;
    }
    return absl::OkStatus();
  }

  InferredShapes Finish() && {
    if (unresolved_count_ > 0) {
      result_.warnings.push_back(absl::StrCat(unresolved_count_, " tensors have shapes shape inference could not "
                                              "fully resolve; unknown dimensions count as 1 (first: ",
                                              first_unresolved_, ")"));
    }
    return std::move(result_);
  }

 private:
  void SetType(const std::string& name, onnx::TypeProto type) {
    onnx::TypeProto& stored = type_store_[name];
    stored = std::move(type);
    types_[name] = &stored;
  }

  void Unresolved(const std::string& tensor, const std::string& part) {
    unresolved_.insert(tensor);  // its sizes are a guess: never evaluate Shape on it
    if (unresolved_count_++ == 0) first_unresolved_ = absl::StrCat("'", tensor, "' ", part);
  }

  void FillFromDeclared(const onnx::TypeProto& declared, onnx::TypeProto* type) {
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
  std::string InputShapes(const onnx::NodeProto& node) const {
    std::vector<std::string> parts;
    for (const std::string& input : node.input()) {
      auto it = result_.tensors.find(input);
      parts.push_back(absl::StrCat("'", input, "' ", it != result_.tensors.end() ? DimsString(it->second.dims) : "?"));
    }
    return absl::StrJoin(parts, ", ");
  }

  // Evaluates output 0 when its inputs are constants; the value also gives its shape when inference did not.
  void Fold(const onnx::NodeProto& node, int opset, onnx::TypeProto* type) {
    std::vector<FoldInput> inputs;
    for (const std::string& input : node.input()) {
      FoldInput in;
      if (auto it = consts_.find(input); it != consts_.end()) in.value = &it->second;
      auto it = result_.tensors.find(input);
      if (it != result_.tensors.end() && unresolved_.count(input) == 0) in.dims = &it->second.dims;
      inputs.push_back(in);
    }
    std::vector<int64_t> out_dims;
    bool known = type->has_tensor_type() && type->tensor_type().has_shape();
    for (int d = 0; known && d < type->tensor_type().shape().dim_size(); ++d) {
      known = type->tensor_type().shape().dim(d).has_dim_value();
      out_dims.push_back(type->tensor_type().shape().dim(d).dim_value());
    }
    std::optional<ConstValue> value = FoldNode(node, opset, inputs, known ? &out_dims : nullptr);
    if (!value) return;
    if (!known) {
      onnx::TypeProto_Tensor* tensor = type->mutable_tensor_type();
      if (tensor->elem_type() == 0) tensor->set_elem_type(value->elem_type);
      tensor->mutable_shape()->clear_dim();
      for (int64_t d : value->dims) tensor->mutable_shape()->add_dim()->set_dim_value(d);
    }
    const std::string& name = node.output(0);
    if (std::optional<onnx::TensorProto> encoded = EncodeTensor(*value, name)) {
      encoded_.push_back(std::move(*encoded));
      data_[name] = &encoded_.back();
    }
    consts_[name] = std::move(*value);
  }

  // ONNX 1.12 infers only the rank of an Einsum's output.
  void EinsumShape(const onnx::NodeProto& node, onnx::TypeProto* type) {
    std::vector<std::vector<int64_t>> operands;
    for (const std::string& input : node.input()) {
      auto it = result_.tensors.find(input);
      if (it == result_.tensors.end()) return;
      operands.push_back(it->second.dims);
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

  absl::Status Resolve(int32_t n, int o, onnx::TypeProto type) {
    const std::string& name = graph_.node(n).output(o);
    std::string where = absl::StrCat("tensor '", name, "' (output ", o, " of node ", NodeLabel(graph_, n), ")");
    if (!type.has_tensor_type() && type.value_case() != onnx::TypeProto::VALUE_NOT_SET) {
      return absl::InvalidArgumentError(absl::StrCat(where, " is not a tensor (sequences and maps are not supported)"));
    }
    onnx::TypeProto_Tensor* tensor = type.mutable_tensor_type();
    std::string missing;
    if (tensor->elem_type() == 0) {
      missing = "its element type";
      tensor->set_elem_type(onnx::TensorProto::FLOAT);
    }
    // Unknown dims count as 1 for sizes but stay unknown in the type that later nodes are inferred from, so
    // that their inference does not build on a made-up rank.
    std::vector<int64_t> dims;
    if (!tensor->has_shape() && missing.empty()) missing = "its shape";
    for (int d = 0; d < tensor->shape().dim_size(); ++d) {
      const onnx::TensorShapeProto_Dimension& dim = tensor->shape().dim(d);
      if (!dim.has_dim_value() && missing.empty()) missing = absl::StrCat("dimension ", d);
      dims.push_back(dim.has_dim_value() ? dim.dim_value() : 1);
    }
    if (!missing.empty()) {
      if (!options_.allow_unresolved_dims) {
        return absl::InvalidArgumentError(absl::StrCat(
            where, ": shape inference could not resolve ", missing,
            " (a data-dependent size or an op without a schema); set allow_unresolved_dims to count it as 1"));
      }
      Unresolved(name, missing);
    }
    absl::StatusOr<TensorInfo> info = MakeTensorInfo(tensor->elem_type(), std::move(dims), where);
    if (!info.ok()) return info.status();
    result_.tensors[name] = *std::move(info);
    SetType(name, std::move(type));
    return absl::OkStatus();
  }

  onnx::GraphProto& graph_;
  const std::unordered_map<std::string, int>& opsets_;
  const OnnxImportOptions& options_;
  std::unordered_map<std::string, onnx::TypeProto> type_store_;  // node-based: pointers stay valid
  std::unordered_map<std::string, onnx::TypeProto*> types_;
  std::unordered_map<std::string, const onnx::TensorProto*> data_;
  std::deque<onnx::TensorProto> encoded_;
  std::unordered_map<std::string, ConstValue> consts_;
  std::unordered_map<std::string, const onnx::TypeProto*> declared_;
  std::unordered_map<std::string, int64_t> symbols_;
  std::unordered_set<std::string> unresolved_;
  int64_t unresolved_count_ = 0;
  std::string first_unresolved_;
  InferredShapes result_;
};

}  // namespace

absl::StatusOr<InferredShapes> InferShapes(onnx::GraphProto& graph, const GraphIndex& index,
                                           const std::unordered_map<std::string, int>& opsets,
                                           const std::unordered_map<std::string, TensorInfo>& initializers,
                                           const OnnxImportOptions& options) {
  ShapeInferer inferer(graph, opsets, options);
  for (const onnx::TensorProto& init : graph.initializer()) inferer.AddInitializer(init, initializers.at(init.name()));
  for (const onnx::ValueInfoProto& input : graph.input()) {
    if (initializers.count(input.name()) > 0) continue;  // an initializer listed as input: its data decides
    absl::Status status = inferer.AddInput(input);
    if (!status.ok()) return status;
  }
  for (const onnx::ValueInfoProto& info : graph.value_info()) inferer.AddDeclared(info);
  for (const onnx::ValueInfoProto& info : graph.output()) inferer.AddDeclared(info);
  for (int32_t n : index.order) {
    absl::Status status = inferer.InferNode(n);
    if (!status.ok()) return status;
  }
  return std::move(inferer).Finish();
}

}  // namespace placement::onnx_import
