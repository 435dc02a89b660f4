#include "graph/onnx/onnx_import.h"

#include <algorithm>
#include <exception>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include <onnx/onnx_pb.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/onnx/attention_fusion.h"
#include "graph/onnx/constant_kernels.h"
#include "graph/onnx/control_flow.h"
#include "graph/onnx/functions.h"
#include "graph/onnx/graph_index.h"
#include "graph/onnx/infer_shapes.h"
#include "graph/onnx/initializers.h"
#include "graph/onnx/layout.h"
#include "graph/onnx/model_reader.h"
#include "graph/onnx/op_costs.h"
#include "graph/onnx/transformer_recognition.h"
#include "graph/onnx/weights.h"
#include "graph/spelling.h"
#include "graph/usage_error.h"

namespace placement {
namespace {

using onnx_import::TensorInfo;

absl::Status CheckOptions(const OnnxImportOptions& options) {
  if (options.batch_size.has_value() && *options.batch_size < 1) {
    return absl::InvalidArgumentError(absl::StrCat("batch_size must be at least 1, not ", *options.batch_size));
  }
  if (options.sequence_length.has_value() && *options.sequence_length < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("sequence_length must be at least 1, not ", *options.sequence_length));
  }
  for (const auto& [name, value] : options.dims) {
    if (value < 0) return absl::InvalidArgumentError(absl::StrCat("dims['", name, "'] is negative: ", value));
  }
  if (options.loop_iterations < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("loop_iterations must not be negative, not ", options.loop_iterations));
  }
  if (options.max_unrolled_nodes < 1 || options.max_nodes < 1) {
    return absl::InvalidArgumentError("max_unrolled_nodes and max_nodes must be positive");
  }
  return absl::OkStatus();
}

// A --dim for a symbol no graph input has would bind nothing: the error names the symbols the model has.
// (TENSOR:AXIS keys name inferred tensors, checked as inference reaches them.)
absl::Status CheckDimSymbols(const onnx::GraphProto& graph, const OnnxImportOptions& options) {
  std::set<std::string> symbols;
  for (const onnx::ValueInfoProto& input : graph.input()) {
    if (!input.type().has_tensor_type() || !input.type().tensor_type().has_shape()) continue;
    for (const auto& dim : input.type().tensor_type().shape().dim()) {
      if (dim.has_dim_param() && !dim.dim_param().empty()) symbols.insert(dim.dim_param());
    }
  }
  for (const auto& [name, value] : options.dims) {
    if (name.find(':') != std::string::npos || symbols.count(name) > 0) continue;
    const std::string nearest = NearestSpelling(name, {symbols.begin(), symbols.end()});
    // The model is fine: the option is what is wrong, as a misspelt flag would be.
    return UsageError(absl::StrCat(
        "--dim '", name, "': the model's inputs have no dimension named '", name, "'",
        nearest.empty() ? "" : absl::StrCat(" (did you mean ", nearest, "?)"), "; ",
        symbols.empty() ? "they have no named dimensions"
                        : absl::StrCat("their named dimensions: ", absl::StrJoin(symbols, ", ")),
        " (a tensor's axis is set as TENSOR:AXIS=VALUE)"));
  }
  return absl::OkStatus();
}

// A floating-point tensor of more than one element: what a shared initializer must be to hold weights.
bool IsWeightTensor(const TensorInfo& t) { return onnx_import::IsRealType(t.elem_type) && t.elements > 1; }

// Turns the checked and inferred graph into operators and edges.
class ProblemBuilder {
 public:
  ProblemBuilder(const onnx::GraphProto& graph, const onnx_import::GraphIndex& index,
                 const onnx_import::InferredShapes& shapes, std::unordered_set<std::string> weights)
      : graph_(graph),
        index_(index),
        shapes_(shapes),
        channels_last_(onnx_import::ChannelsLastNodes(graph, shapes)),
        weights_(std::move(weights)) {
    for (const onnx::TensorProto& init : graph.initializer()) weights_.insert(init.name());
  }

  absl::StatusOr<OnnxImportResult> Build() {
    OnnxImportResult result;
    GraphBuilder builder;
    for (int n = 0; n < graph_.node_size(); ++n) builder.AddOp(MakeOp(n, &result.macs));
    for (int n = 0; n < graph_.node_size(); ++n) {
      // One edge per (producer output, consumer), however often the consumer reads the tensor.
      std::set<std::pair<int32_t, int32_t>> sources;
      for (const std::string& input : graph_.node(n).input()) {
        if (input.empty()) continue;
        const onnx_import::TensorProducer& p = index_.producers.at(input);
        if (p.node >= 0 && sources.emplace(p.node, p.output).second) builder.AddEdge(p.node, p.output, n);
      }
    }
    absl::StatusOr<Graph> graph = std::move(builder).Build();
    if (!graph.ok()) return graph.status();
    result.problem.graph = *std::move(graph);
    for (const auto& [op_type, count] : default_cost_) {
      result.warnings.push_back(absl::StrCat(count, " node", count == 1 ? " " : "s ", "of op type ", op_type, " use",
                                             count == 1 ? "s" : "",
                                             " the default cost (FLOPs = output "
                                             "elements, bytes = inputs + outputs)"));
    }
    return result;
  }

 private:
  const TensorInfo* Info(const std::string& name) const {
    if (name.empty()) return nullptr;
    auto it = shapes_.tensors.find(name);
    return it != shapes_.tensors.end() ? &it->second : nullptr;
  }

  OpSpec MakeOp(int n, double* macs) {
    const onnx::NodeProto& node = graph_.node(n);
    std::vector<const TensorInfo*> inputs, outputs;
    for (const std::string& name : node.input()) inputs.push_back(Info(name));
    for (const std::string& name : node.output()) outputs.push_back(Info(name));
    onnx_import::OpCost cost = onnx_import::ComputeOpCost(node, inputs, outputs);
    if (cost.is_default) {
      std::string type = node.domain().empty() ? node.op_type() : absl::StrCat(node.domain(), ".", node.op_type());
      ++default_cost_[type];
    }
    *macs += cost.macs;
    OpSpec spec;
    spec.name = index_.op_names[n];
    spec.op_type = Folded(node) ? "Constant" : node.op_type();
    spec.flops = cost.flops;
    spec.bytes_accessed = cost.bytes_accessed;
    spec.window = cost.window;
    spec.channels_last = channels_last_[n];
    // A weight is resident where it is first read; later readers share it. The data (graph inputs that are no
    // weights) comes in by no edge: what the operator reads of it is counted apart, once per input.
    std::set<std::string> data;
    for (int k = 0; k < node.input_size(); ++k) {
      const std::string& name = node.input(k);
      if (inputs[k] == nullptr) continue;
      if (weights_.count(name) > 0) {
        if (counted_.insert(name).second) {
          spec.param_bytes += inputs[k]->bytes;
        } else {
          // Weights read again (a packed projection sliced twice, a tied embedding), not the scalar constants a
          // TorchScript export shares between operators (an epsilon, a scale), which need no gradient.
          spec.shared_weights = spec.shared_weights || IsWeightTensor(*inputs[k]);
        }
      } else if (index_.producers.at(name).node < 0 && data.insert(name).second) {
        spec.data_bytes += inputs[k]->bytes;
      }
    }
    for (const TensorInfo* out : outputs) spec.outputs.push_back(OutputTensor{out != nullptr ? out->bytes : 0, -1});
    return spec;
  }

  // A node whose every output the import computed is a constant of the graph, as a runtime's constant folding
  // makes it: the scalar arithmetic an export leaves on Shape (shufflenet_v2 splits its channels with 13 Gathers,
  // Adds and Divs and 26 Muls, eager PyTorch with Python integers) costs no kernel launch.
  bool Folded(const onnx::NodeProto& node) const {
    bool any = false;
    for (const std::string& name : node.output()) {
      if (name.empty()) continue;
      if (shapes_.folded.count(name) == 0) return false;
      any = true;
    }
    return any;
  }

  const onnx::GraphProto& graph_;
  const onnx_import::GraphIndex& index_;
  const onnx_import::InferredShapes& shapes_;
  const std::vector<bool> channels_last_;  // per node
  std::unordered_set<std::string> weights_;  // weight inputs and initializers
  std::unordered_set<std::string> counted_;
  std::map<std::string, int> default_cost_;
};

absl::StatusOr<OnnxImportResult> ImportModel(onnx::ModelProto& model, const OnnxImportOptions& options) {
  absl::Status status = CheckOptions(options);
  if (!status.ok()) return status;
  absl::StatusOr<std::unordered_map<std::string, int>> opsets = onnx_import::CheckModelHeader(model);
  if (!opsets.ok()) return opsets.status();
  std::vector<std::string> warnings;
  status = onnx_import::InlineFunctions(&model, options.max_nodes, &*opsets, &warnings);
  if (!status.ok()) return status;
  onnx::GraphProto& graph = *model.mutable_graph();
  if (absl::Status s = CheckDimSymbols(graph, options); !s.ok()) return s;
  absl::StatusOr<onnx_import::GraphIndex> index = onnx_import::IndexGraph(graph);
  if (!index.ok()) return index.status();
  std::unordered_map<std::string, TensorInfo> initializers;
  for (const onnx::TensorProto& init : graph.initializer()) {
    absl::StatusOr<TensorInfo> info = onnx_import::InitializerInfo(init, options.model_dir);
    if (!info.ok()) return info.status();
    initializers.emplace(init.name(), *std::move(info));
  }
  absl::StatusOr<std::unordered_set<std::string>> weights = onnx_import::WeightInputs(graph, options);
  if (!weights.ok()) return weights.status();
  absl::StatusOr<onnx_import::ExpandedGraph> expanded =
      onnx_import::ExpandGraph(&graph, *std::move(index), *opsets, initializers, options);
  if (!expanded.ok()) return expanded.status();
  std::optional<TransformerSpec> transformer =
      onnx_import::RecognizeTransformer(expanded->graph, expanded->shapes, *weights);
  // After recognition, which reads the attention's Softmax for the heads.
  if (onnx_import::FuseScaledDotProductAttention(&expanded->graph, expanded->index, expanded->shapes) > 0) {
    expanded->index = onnx_import::IndexInOrder(expanded->graph);
  }
  absl::StatusOr<OnnxImportResult> result =
      ProblemBuilder(expanded->graph, expanded->index, expanded->shapes, *std::move(weights)).Build();
  if (!result.ok()) return result.status();
  result->fixed_batch = expanded->shapes.fixed_batch;
  result->batch = result->fixed_batch > 0 ? result->fixed_batch : options.batch_size.value_or(1);
  result->transformer = std::move(transformer);
  for (std::vector<std::string>* more : {&warnings, &expanded->shapes.warnings}) {
    result->warnings.insert(result->warnings.end(), more->begin(), more->end());
  }
  std::sort(result->warnings.begin(), result->warnings.end());
  return result;
}

// Exceptions stop here: protobuf and ONNX may throw (allocation failures, checks inside the library).
absl::StatusOr<OnnxImportResult> Guarded(onnx::ModelProto& model, const OnnxImportOptions& options) {
  try {
    return ImportModel(model, options);
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("the model could not be imported: ", e.what()));
  }
}

}  // namespace

absl::StatusOr<OnnxImportResult> ImportOnnxBytes(absl::string_view bytes, const OnnxImportOptions& options) {
  absl::StatusOr<onnx::ModelProto> model = onnx_import::ParseModelBytes(bytes);
  if (!model.ok()) return model.status();
  return Guarded(*model, options);
}

absl::StatusOr<OnnxImportResult> ImportOnnxFile(const std::string& path, const OnnxImportOptions& options) {
  absl::StatusOr<onnx::ModelProto> model = onnx_import::ReadModelFile(path);
  if (!model.ok()) return model.status();
  OnnxImportOptions with_dir = options;
  if (with_dir.model_dir.empty()) {
    size_t slash = path.rfind('/');
    with_dir.model_dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  }
  absl::StatusOr<OnnxImportResult> result = Guarded(*model, with_dir);
  if (!result.ok()) {
    return absl::Status(result.status().code(), absl::StrCat("'", path, "': ", result.status().message()));
  }
  return result;
}

bool LooksLikeOnnx(absl::string_view bytes) { return onnx_import::SniffModelProto(bytes); }

}  // namespace placement
