// Time to import each model of the committed ONNX corpus (tests/data/corpus): parse, shape inference with
// shape computations evaluated, costs and graph construction. Batch 1, sequence length 128.
#include <string>

#include "benchmark/benchmark.h"
#include "graph/onnx/onnx_import.h"

namespace placement {
namespace {

void Import(benchmark::State& state, const std::string& path, const OnnxImportOptions& options) {
  int32_t ops = 0;
  for (auto _ : state) {
    absl::StatusOr<OnnxImportResult> result = ImportOnnxFile(path, options);
    if (!result.ok()) {
      state.SkipWithError(std::string(result.status().message()).c_str());
      return;
    }
    ops = result->problem.graph.num_ops();
    benchmark::DoNotOptimize(result);
  }
  state.counters["ops"] = ops;
  state.counters["ops_per_second"] =
      benchmark::Counter(static_cast<double>(ops) * state.iterations(), benchmark::Counter::kIsRate);
}

void BM_ImportOnnxFile(benchmark::State& state, const std::string& file) {
  Import(state, std::string(PLACEMENT_SOURCE_DIR) + "/tests/data/corpus/" + file, OnnxImportOptions{});
}

// tests/data/onnx_coverage: control flow expanded, sequences followed, data-dependent sizes bounded, functions
// inlined. The detection models' image size is symbolic: 320 x 320, as the coverage test gives it.
void BM_ImportCoverageFile(benchmark::State& state, const std::string& file) {
  OnnxImportOptions options;
  options.dims = {{"height", 320}, {"width", 320}};
  Import(state, std::string(PLACEMENT_SOURCE_DIR) + "/tests/data/onnx_coverage/" + file, options);
}

BENCHMARK_CAPTURE(BM_ImportOnnxFile, resnet50, std::string("resnet50.onnx"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ImportOnnxFile, inception_v3, std::string("inception_v3.onnx"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ImportOnnxFile, vgg16, std::string("vgg16.onnx"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ImportOnnxFile, mobilenet_v3_large, std::string("mobilenet_v3_large.onnx"))
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ImportOnnxFile, transformer_encoder, std::string("transformer_encoder.onnx"))
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ImportOnnxFile, transformer_decoder, std::string("transformer_decoder.onnx"))
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ImportOnnxFile, lstm_seq2seq, std::string("lstm_seq2seq.onnx"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ImportOnnxFile, gru_seq2seq, std::string("gru_seq2seq.onnx"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ImportCoverageFile, swin_t, std::string("swin_t_op17_fold.onnx"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ImportCoverageFile, ssdlite320, std::string("ssdlite320_mobilenet_v3_large_op17_fold.onnx"))
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ImportCoverageFile, fasterrcnn_mobilenet,
                  std::string("fasterrcnn_mobilenet_v3_large_320_fpn_op17_fold.onnx"))
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ImportCoverageFile, maskrcnn_resnet50, std::string("maskrcnn_resnet50_fpn_op13_fold.onnx"))
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ImportCoverageFile, mvit_v2_s, std::string("mvit_v2_s_op17_fold.onnx"))
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ImportCoverageFile, raft_small, std::string("raft_small_op17_fold.onnx"))
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace placement

BENCHMARK_MAIN();
