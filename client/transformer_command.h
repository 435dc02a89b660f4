// placectl's layer-level plans of a transformer described by a Hugging Face config.json: `simulate --plan
// "tp=..,pp=..,dp=..,mbs=.."` scores the plan, `place` (--parallelism auto or tensor, a training step) searches the
// plan space (policy/parallel/transformer_search.h). Both answer in practitioners' terms: iteration time at the
// global batch, tokens per second, MFU, memory per GPU by kind, communication by kind and link.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace placement::cli {

struct TransformerCommandOptions {
  std::string config_path;  // a config.json, or an ONNX export of a transformer
  int64_t global_batch = 0;  // --batch: sequences per iteration
  int64_t seq = 0;           // --seq; 0: the config's positions, else 2048
  std::string precision = "fp32";
  std::string topology_file;
  std::string devices;  // --devices: a cluster shorthand, up to 1,000,000 GPUs here
  std::string plan;     // simulate: the plan; place: the keys held fixed
  std::string parallelism;  // place: "", auto or tensor
  std::string deadline = "10s";
  std::string output = "table";
  std::string chart_path;  // when set, one pipeline's chart (HTML) is written there
  absl::Time started = absl::InfinitePast();
};

// Whether the file is a Hugging Face config.json, or an ONNX model (by their content). An ONNX export of a
// transformer the importer recognizes (BERT, GPT-2, Llama-style) is planned like its config.json.
bool IsHfConfigFile(const std::string& path);
bool IsOnnxFile(const std::string& path);

absl::StatusOr<std::string> RunTransformerSimulate(const TransformerCommandOptions& options);
absl::StatusOr<std::string> RunTransformerPlace(const TransformerCommandOptions& options);

}  // namespace placement::cli
