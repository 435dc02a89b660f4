// Reads the graph and cluster a command names: the graph file (ONNX, our JSON format, a Tarnawski JSON graph or a
// Hugging Face config.json, told apart by content, not by name), optionally expanded into a training step, and the
// topology from --topology FILE, --devices SPEC, or the devices the graph file itself describes.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/file_io.h"
#include "graph/graph.h"
#include "graph/measured_costs.h"
#include "graph/problem.h"
#include "graph/transformer_spec.h"

namespace placement::cli {

struct GraphLoadOptions {
  int64_t batch = 0;                    // ONNX, hf_config: binds the batch dimension; 0 = the default (1)
  // ONNX: binds dimensions named like a sequence; hf_config: the tokens of each sequence. 0 = the importer's
  // default (for a config, its learned positions, else 2048).
  int64_t sequence_length = 0;
  std::map<std::string, int64_t> dims;  // ONNX: --dim NAME=VALUE, a symbol or "TENSOR:AXIS"
  bool allow_unresolved_dims = false;   // ONNX: count what nothing resolves as 1
  int32_t num_data_inputs = -1;         // ONNX: graph inputs that are data; -1 = the importer's rule
  int64_t loop_iterations = 0;          // ONNX: a data-dependent Loop's iterations; 0 = the importer's default
  int64_t max_unrolled_nodes = 0;       // ONNX: unroll limit of Loop and Scan; 0 = the importer's default
  std::string costs_path;               // --costs: measured per-operator times (graph/measured_costs.h), for messages
  std::string costs_text;               // that file's text, read once (sent as it is to a server)
  std::string costs_kind = "*";         // --costs_kind: the device kind a profiler trace was recorded on
  bool training = false;                // expand the forward graph into a training step
  std::string optimizer = "adam";
  double backward_multiplier = 2.0;
  std::string precision = "fp32";       // graph/precision.h: fp32, tf32, amp_bf16, amp_fp16, bf16, fp16
  std::string runtime = "eager";        // graph/topology.h ForRuntime: eager or graphs
};

struct LoadedGraph {
  Problem problem;
  std::string format;                 // "onnx", "placement.graph/v1", "tarnawski", "pipedream" or "hf_config"
  std::vector<std::string> warnings;  // what the importer assumed
  int64_t fixed_batch = 0;            // ONNX exported with a fixed batch: that batch (OnnxImportResult)
  int64_t samples_per_run = 1;        // ONNX, hf_config: the batch one run holds; 1 otherwise
  CostSources cost_sources;           // how many operators' costs are measured, how many modelled
  // ONNX: the transformer the importer recognized (graph/onnx/transformer_recognition.h), if any.
  std::optional<TransformerSpec> transformer;
};

// Whether a file's text is a Hugging Face config.json: JSON of no graph format the project reads that looks like
// one (graph/transformer_spec.h LooksLikeHfConfig).
bool IsHfConfigText(absl::string_view text);

// Whether any ONNX-only option is set (they are refused for other formats; a Hugging Face config takes --batch
// and --seq).
bool SetsOnnxOptions(const GraphLoadOptions& options);

// "NAME=VALUE" items of --dim into a map; an item without '=' or with a value that is not a non-negative
// integer is an error naming it.
absl::StatusOr<std::map<std::string, int64_t>> ParseDims(const std::vector<std::string>& items);

// The text of a --costs file (a profiler trace recorded on device kind `kind`), refusing one that is empty or does
// not parse: a bad input naming it.
absl::StatusOr<std::string> ReadCostsFile(const std::string& path, const std::string& kind);

absl::StatusOr<LoadedGraph> LoadGraphFile(const std::string& path, const GraphLoadOptions& options = {});

// Chooses the topology: the file, else the shorthand, else the one the graph file carried. Giving both a file and
// a shorthand, or neither for a graph without devices, is an error that says what to pass.
// `runtime`: how the step issues its operators (graph/topology.h ForRuntime); `precision` (graph/precision.h) picks
// a shorthand's device figures (graph/measured_presets.h). The topology's description says whose figures they are.
absl::StatusOr<Topology> ResolveTopology(const Problem& problem, const std::string& topology_file,
                                         const std::string& devices_spec, absl::string_view runtime = "eager",
                                         absl::string_view precision = "fp32");

}  // namespace placement::cli
