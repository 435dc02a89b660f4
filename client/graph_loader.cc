#include "client/graph_loader.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "graph/graph_json.h"
#include "graph/onnx/onnx_import.h"
#include "graph/tarnawski.h"
#include "graph/topology_json.h"
#include "graph/training.h"

namespace placement::cli {
namespace {

absl::Status WithPath(const std::string& path, const absl::Status& s) {
  return absl::Status(s.code(), absl::StrCat(path, ": ", s.message()));
}

absl::StatusOr<LoadedGraph> Import(const std::string& path, const std::string& text, const GraphLoadOptions& o) {
  LoadedGraph loaded;
  const bool onnx = LooksLikeOnnx(text);
  if ((o.batch > 0 || o.sequence_length > 0) && !onnx) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": --batch and --seq apply to ONNX models; this graph has its costs fixed"));
  }
  if (onnx) {
    OnnxImportOptions options;
    if (o.batch > 0) options.batch_size = o.batch;
    if (o.sequence_length > 0) options.sequence_length = o.sequence_length;
    const size_t slash = path.find_last_of('/');
    options.model_dir = slash == std::string::npos ? "." : path.substr(0, slash);
    absl::StatusOr<OnnxImportResult> imported = ImportOnnxBytes(text, options);
    if (!imported.ok()) return WithPath(path, imported.status());
    loaded.problem = std::move(imported->problem);
    loaded.warnings = std::move(imported->warnings);
    loaded.format = "onnx";
  } else if (LooksLikeGraphJson(text)) {
    absl::StatusOr<Problem> problem = ParseGraphJson(text);
    if (!problem.ok()) return WithPath(path, problem.status());
    loaded.problem = *std::move(problem);
    loaded.format = kGraphJsonFormat;
  } else if (LooksLikeTarnawskiGraph(text)) {
    absl::StatusOr<Problem> problem = ParseTarnawskiGraph(text);
    if (!problem.ok()) return WithPath(path, problem.status());
    loaded.problem = *std::move(problem);
    loaded.format = "tarnawski";
  } else {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": not a graph format placectl reads (an ONNX model, a placement.graph/v1 JSON graph, or a Tarnawski "
              "JSON graph with 'nodes', 'edges' and 'maxFPGAs')"));
  }
  return loaded;
}

}  // namespace

absl::StatusOr<LoadedGraph> LoadGraphFile(const std::string& path, const GraphLoadOptions& options) {
  absl::StatusOr<std::string> text = ReadWholeFile(path);
  if (!text.ok()) return text.status();
  absl::StatusOr<LoadedGraph> loaded = Import(path, *text, options);
  if (!loaded.ok() || !options.training) return loaded;

  TrainingOptions training;
  training.backward_multiplier = options.backward_multiplier;
  absl::StatusOr<Optimizer> optimizer = ParseOptimizer(options.optimizer);
  if (!optimizer.ok()) return optimizer.status();
  training.optimizer = *optimizer;
  absl::StatusOr<Graph> step = BuildTrainingGraph(loaded->problem.graph, training);
  if (!step.ok()) return WithPath(path, step.status());
  loaded->problem.graph = *std::move(step);
  return loaded;
}

absl::StatusOr<Topology> ResolveTopology(const Problem& problem, const std::string& topology_file,
                                         const std::string& devices_spec) {
  if (!topology_file.empty() && !devices_spec.empty()) {
    return absl::InvalidArgumentError("give either --topology or --devices, not both");
  }
  if (!topology_file.empty()) return LoadTopologyFile(topology_file);
  if (!devices_spec.empty()) return ParseTopologyShorthand(devices_spec);
  if (problem.topology.has_value()) return *problem.topology;
  return absl::InvalidArgumentError("the graph does not describe its devices: pass --devices (e.g. 4xA100) or --topology FILE");
}

}  // namespace placement::cli
