// ONNX models as placement problems: every node becomes an operator with FLOPs, bytes touched, parameter bytes
// and output tensor sizes taken from shape inference, and every (producer output, consumer) pair an edge.
//
// docs/onnx.md is the user's reference: how symbolic dimensions are bound, which graph inputs count as
// weights, the cost of each op type, external data and the errors. Everything here takes untrusted input:
// failures come back as absl::Status naming the node, tensor or field, and no exception leaves this API.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/problem.h"
#include "graph/transformer_spec.h"

namespace placement {

inline constexpr int64_t kDefaultSequenceLength = 128;

struct OnnxImportOptions {
  // Bound to symbolic graph-input dimensions named like a batch ("batch", "batch_size", "N") and to the first
  // dimension of an input when it has neither a value nor a name. Unset: 1. Set and binding nothing (every
  // input's batch axis is fixed), the result says so in a warning.
  std::optional<int64_t> batch_size;
  // Bound to symbolic dimensions whose name contains "seq" ("seq", "seq_len", "memory_seq"). Unset:
  // kDefaultSequenceLength; set and binding nothing, a warning.
  std::optional<int64_t> sequence_length;
  // Values by name; they win over the two rules above. A name is either a symbol of a graph input's dimension
  // ("height") or "TENSOR:AXIS" for a dimension that depends on the data ("/NonZero_output_0:1"), which
  // the warnings name wherever the importer assumed a value.
  std::map<std::string, int64_t> dims;
  // Folder that external-data locations are relative to. ImportOnnxFile defaults it to the model's folder;
  // ImportOnnxBytes needs it for a model with external data.
  std::string model_dir;
  // How many graph inputs without an initializer are real inputs; the rest are weights (a model exported
  // without its parameters lists them as inputs). -1: decide by the rule in docs/onnx.md.
  int32_t num_data_inputs = -1;
  // A dimension that nothing resolves (an op without a schema or declared shape, a data-dependent size with
  // no stated bound) is an error naming the tensor and dimension; with this set it counts as 1 and a warning
  // says where.
  bool allow_unresolved_dims = false;
  // Iterations counted for a Loop whose trip count depends on the data (neither its trip count nor its
  // condition folds); the warning states the value.
  int64_t loop_iterations = 8;
  // A Loop or Scan whose unrolled body would exceed this many nodes is kept as one operator costing the trip
  // count times its body, with a warning.
  int64_t max_unrolled_nodes = 20000;
  // The most nodes the imported graph may hold after functions are inlined and control flow expanded;
  // beyond it the import fails with RESOURCE_EXHAUSTED rather than use unbounded memory.
  int64_t max_nodes = 2000000;
};

struct OnnxImportResult {
  Problem problem;
  // Multiply-accumulates of the matrix ops (Conv, ConvTranspose, Gemm, MatMul, Einsum, LSTM/GRU/RNN), the
  // figure model zoos publish as "FLOPs" or "MACs".
  double macs = 0;
  // What the import assumed, e.g. "3 nodes of op type Foo use the default cost (...)". Sorted.
  std::vector<std::string> warnings;
  // The batch every graph input was exported at when none has a batch axis to bind (--batch changes nothing);
  // 0 when the batch was bound.
  int64_t fixed_batch = 0;
  // The samples one run of the graph holds: the batch bound, or the fixed one.
  int64_t batch = 1;
  // The Hugging Face architecture the graph computes, when the import recognizes one (BERT, GPT-2, Llama and
  // the Llama-named Mistral and Qwen2, from either PyTorch exporter; graph/onnx/transformer_recognition.h says
  // how), so that the model can be planned layer by layer as its config.json is. nullopt for anything else.
  std::optional<TransformerSpec> transformer;
};

// Reads the model at `path`. Files over 2 GiB are refused: protobuf cannot represent them, so such models
// keep their weights as external data.
absl::StatusOr<OnnxImportResult> ImportOnnxFile(const std::string& path, const OnnxImportOptions& options);

// Imports a serialized ModelProto held in memory.
absl::StatusOr<OnnxImportResult> ImportOnnxBytes(absl::string_view bytes, const OnnxImportOptions& options);

// A cheap sniff for callers choosing between formats: true when the bytes start like a serialized
// ModelProto (a known field with the right wire type; never text such as JSON). Not a validation.
bool LooksLikeOnnx(absl::string_view bytes);

}  // namespace placement
