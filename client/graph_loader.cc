#include "client/graph_loader.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "graph/costs_input.h"
#include "graph/graph_json.h"
#include "graph/measured_costs.h"
#include "graph/measured_presets.h"
#include "graph/onnx/graph_format.h"
#include "graph/onnx/onnx_import.h"
#include "graph/pipedream.h"
#include "graph/precision.h"
#include "graph/tarnawski.h"
#include "graph/topology_json.h"
#include "graph/training.h"
#include "graph/transformer_graph.h"
#include "graph/transformer_spec.h"
#include "graph/usage_error.h"

namespace placement::cli {
namespace {

// `s` with the file it is about in front; its payloads (a usage error's mark) kept.
absl::Status WithPath(const std::string& path, const absl::Status& s) {
  absl::Status with(s.code(), absl::StrCat(path, ": ", s.message()));
  s.ForEachPayload([&](absl::string_view url, const absl::Cord& payload) { with.SetPayload(url, payload); });
  return with;
}

OnnxImportOptions ImportOptions(const GraphLoadOptions& o) {
  OnnxImportOptions options;
  if (o.batch > 0) options.batch_size = o.batch;
  if (o.sequence_length > 0) options.sequence_length = o.sequence_length;
  options.dims = o.dims;
  options.allow_unresolved_dims = o.allow_unresolved_dims;
  options.num_data_inputs = o.num_data_inputs;
  if (o.loop_iterations > 0) options.loop_iterations = o.loop_iterations;
  if (o.max_unrolled_nodes > 0) options.max_unrolled_nodes = o.max_unrolled_nodes;
  return options;
}

// Sequence length of a Hugging Face config read without --seq: the model's learned positions, else this.
constexpr int64_t kDefaultHfSequenceLength = 2048;

// A Hugging Face config.json, expanded into the forward graph at --batch (default 1) and --seq.
absl::StatusOr<LoadedGraph> ImportHfConfig(const std::string& path, const std::string& text,
                                           const GraphLoadOptions& o) {
  GraphLoadOptions other = o;
  other.batch = other.sequence_length = 0;
  if (SetsOnnxOptions(other)) {
    return UsageError(absl::StrCat(
        path, ": --dim and the other ONNX options apply to ONNX models; a Hugging Face config takes --batch and --seq"));
  }
  absl::StatusOr<TransformerSpec> spec = ParseHfConfig(text, path);  // its messages name the file
  // An architecture outside the supported families is a file this command cannot read: a bad input.
  if (absl::IsUnimplemented(spec.status())) return absl::InvalidArgumentError(spec.status().message());
  if (!spec.ok()) return spec.status();
  LoadedGraph loaded;
  const int64_t batch = o.batch > 0 ? o.batch : 1;
  int64_t seq = o.sequence_length;
  if (o.batch <= 0) loaded.warnings.push_back("batch 1 (a Hugging Face config has none; --batch sets it)");
  if (seq <= 0) {
    seq = spec->max_positions > 0 ? spec->max_positions : kDefaultHfSequenceLength;
    loaded.warnings.push_back(
        spec->max_positions > 0
            ? absl::StrCat("sequence length ", seq, ", the model's learned positions (--seq sets it)")
            : absl::StrCat("sequence length ", seq, " (", spec->model_type,
                           " has no learned positions to take it from; --seq sets it)"));
  }
  absl::StatusOr<Problem> problem = BuildTransformerGraph(*spec, batch, seq);
  if (!problem.ok()) return WithPath(path, problem.status());
  loaded.problem = *std::move(problem);
  loaded.format = "hf_config";
  loaded.samples_per_run = batch;
  return loaded;
}

absl::StatusOr<LoadedGraph> Import(const std::string& path, const std::string& text, const GraphLoadOptions& o) {
  LoadedGraph loaded;
  if (IsHfConfigText(text)) return ImportHfConfig(path, text, o);
  const GraphFormat format = DetectGraphFormat(text);
  if (SetsOnnxOptions(o) && format != GraphFormat::kOnnx) {
    // The graph is fine: the flag is what does not fit it.
    return UsageError(absl::StrCat(
        path,
        ": --batch, --seq, --dim and the other ONNX options apply to ONNX models; this graph has its costs fixed"));
  }
  absl::StatusOr<Problem> problem;
  switch (format) {
    case GraphFormat::kOnnx: {
      OnnxImportOptions options = ImportOptions(o);
      const size_t slash = path.find_last_of('/');
      options.model_dir = slash == std::string::npos ? "." : path.substr(0, slash);
      absl::StatusOr<OnnxImportResult> imported = ImportOnnxBytes(text, options);
      if (!imported.ok()) return WithPath(path, imported.status());
      loaded.problem = std::move(imported->problem);
      loaded.warnings = std::move(imported->warnings);
      loaded.fixed_batch = imported->fixed_batch;
      loaded.transformer = imported->transformer;
      loaded.samples_per_run = imported->batch;
      loaded.format = "onnx";
      return loaded;
    }
    case GraphFormat::kGraphJson:
      problem = ParseGraphJson(text), loaded.format = kGraphJsonFormat;
      break;
    case GraphFormat::kPipeDream:
      problem = ParsePipeDreamProfile(text, o.training), loaded.format = "pipedream";
      break;
    case GraphFormat::kTarnawski:
      problem = ParseTarnawskiGraph(text), loaded.format = "tarnawski";
      break;
    case GraphFormat::kUnknown:
      return absl::InvalidArgumentError(absl::StrCat(path, ": ", UnknownGraphFormatMessage(text)));
  }
  if (!problem.ok()) return WithPath(path, problem.status());
  loaded.problem = *std::move(problem);
  return loaded;
}

// An export made in eval mode folds each batch normalization into the convolution before it, and a training step
// of that graph misses what each normalization keeps for its backward (its input, as large as the convolution's
// output): a third to a half of a convolutional network's activations. The warning for a convolutional graph with
// no normalization operator, or none.
std::optional<std::string> FoldedNormalizationWarning(const Graph& g) {
  bool convolutions = false;
  for (OpId u = 0; u < g.num_ops(); ++u) {
    const absl::string_view type = g.op_type(u);
    if (absl::StrContains(type, "Normalization")) return std::nullopt;
    convolutions = convolutions || type == "Conv";
  }
  if (!convolutions) return std::nullopt;
  return "training a convolutional ONNX model without normalization operators: if the model has batch "
         "normalization, an eval-mode export folded it and this step's memory misses what each keeps for the "
         "backward; export with torch.onnx.export(..., training=torch.onnx.TrainingMode.TRAINING) for training";
}

// The graph a step runs: the forward graph's tensors in the options' precision, expanded into a training step
// with `options.training`.
absl::StatusOr<Graph> StepGraph(const Graph& forward, const GraphLoadOptions& options) {
  absl::StatusOr<Precision> precision = ParsePrecision(options.precision);
  if (!precision.ok()) return precision.status();
  absl::StatusOr<Graph> graph = ApplyPrecision(forward, *precision, /*inference=*/!options.training);
  if (!graph.ok() || !options.training) return graph;
  TrainingOptions training;
  training.backward_multiplier = options.backward_multiplier;
  training.precision = *precision;
  absl::StatusOr<Optimizer> optimizer = ParseOptimizer(options.optimizer);
  if (!optimizer.ok()) return optimizer.status();
  training.optimizer = *optimizer;
  return BuildTrainingGraph(*graph, training);
}

}  // namespace

bool IsHfConfigText(absl::string_view text) {
  return DetectGraphFormat(text) == GraphFormat::kUnknown && LooksLikeHfConfig(text);
}

bool SetsOnnxOptions(const GraphLoadOptions& o) {
  return o.batch > 0 || o.sequence_length > 0 || !o.dims.empty() || o.allow_unresolved_dims || o.num_data_inputs >= 0 ||
         o.loop_iterations > 0 || o.max_unrolled_nodes > 0;
}

absl::StatusOr<std::map<std::string, int64_t>> ParseDims(const std::vector<std::string>& items) {
  std::map<std::string, int64_t> dims;
  for (const std::string& item : items) {
    const size_t eq = item.rfind('=');
    int64_t value = 0;
    if (eq == std::string::npos || eq == 0 || !absl::SimpleAtoi(item.substr(eq + 1), &value) || value < 0) {
      return absl::InvalidArgumentError(absl::StrCat("--dim '", item,
                                                     "' is not NAME=VALUE with a non-negative integer "
                                                     "VALUE (NAME: a dimension's symbol, or TENSOR:AXIS)"));
    }
    dims[item.substr(0, eq)] = value;
  }
  return dims;
}

absl::StatusOr<std::string> ReadCostsFile(const std::string& path, const std::string& kind) {
  absl::StatusOr<std::string> text = ReadWholeFile(path);
  if (!text.ok()) return text.status();
  // An empty file would measure nothing, leaving every operator at the model's estimate without a word.
  if (absl::StripAsciiWhitespace(*text).empty()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": the costs file is empty"));
  }
  // Parsed here too for the commands that send it to a server as it is.
  if (absl::Status s = ParseCostsInput(*text, kind).status(); !s.ok()) return WithPath(path, s);
  return text;
}

absl::StatusOr<LoadedGraph> LoadGraphFile(const std::string& path, const GraphLoadOptions& options) {
  absl::StatusOr<std::string> text = ReadWholeFile(path);
  if (!text.ok()) return text.status();
  absl::StatusOr<LoadedGraph> loaded = Import(path, *text, options);
  if (!loaded.ok()) return loaded;
  std::optional<CostsInput> costs;
  if (!options.costs_text.empty()) {
    absl::StatusOr<CostsInput> read = ParseCostsInput(options.costs_text, options.costs_kind);
    if (!read.ok()) return WithPath(options.costs_path, read.status());
    costs = *std::move(read);
  }
  if (absl::Status s = ParsePrecision(options.precision).status(); !s.ok()) return s;
  if (absl::Status s = ParseOptimizer(options.optimizer).status(); !s.ok()) return s;
  std::function<absl::StatusOr<Graph>(const Graph&)> expand;
  // A PipeDream profile times its own backward layers: its importer made the training step already.
  if (loaded->format != "pipedream" && (options.training || options.precision != "fp32")) {
    expand = [&](const Graph& forward) { return StepGraph(forward, options); };
  }
  if (options.training && loaded->format == "onnx") {
    if (std::optional<std::string> w = FoldedNormalizationWarning(loaded->problem.graph)) {
      loaded->warnings.push_back(*std::move(w));
    }
  }
  absl::StatusOr<Graph> graph =
      PrepareGraph(std::move(loaded->problem.graph), costs ? &*costs : nullptr, expand, &loaded->cost_sources);
  if (!graph.ok()) return WithPath(path, graph.status());
  loaded->problem.graph = *std::move(graph);
  for (std::string& w : loaded->cost_sources.warnings) loaded->warnings.push_back(std::move(w));
  loaded->cost_sources.warnings.clear();
  return loaded;
}

namespace {

absl::StatusOr<Topology> ChooseTopology(const Problem& problem, const std::string& topology_file,
                                        const std::string& devices_spec, absl::string_view precision_name) {
  if (!topology_file.empty() && !devices_spec.empty()) {
    return absl::InvalidArgumentError("give either --topology or --devices, not both");
  }
  absl::StatusOr<Precision> precision = ParsePrecision(precision_name);
  if (!precision.ok()) return precision.status();
  if (!topology_file.empty()) {
    absl::StatusOr<Topology> t = LoadTopologyFile(topology_file);
    if (!t.ok()) return t.status();
    return WithPresetFigures(*t, *precision, topology_file);
  }
  if (!devices_spec.empty()) return ParseTopologyShorthand(devices_spec, *precision);
  if (problem.topology.has_value()) return WithPresetFigures(*problem.topology, *precision, "the graph file");
  return absl::InvalidArgumentError(
      "the graph does not describe its devices: pass --devices (e.g. 4xA100) or --topology FILE");
}

}  // namespace

absl::StatusOr<Topology> ResolveTopology(const Problem& problem, const std::string& topology_file,
                                         const std::string& devices_spec, absl::string_view runtime,
                                         absl::string_view precision) {
  absl::StatusOr<Topology> topology = ChooseTopology(problem, topology_file, devices_spec, precision);
  if (!topology.ok()) return topology.status();
  return ForRuntime(*topology, runtime);
}

}  // namespace placement::cli
