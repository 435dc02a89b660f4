// Time to import each model of the committed ONNX corpus (tests/data/corpus): parse, shape inference with
// shape computations evaluated, costs and graph construction. Batch 1, sequence length 128.
#include <string>

#include "benchmark/benchmark.h"
#include "graph/onnx/onnx_import.h"

namespace placement {
namespace {

void BM_ImportOnnxFile(benchmark::State& state, const std::string& file) {
  const std::string path = std::string(PLACEMENT_SOURCE_DIR) + "/tests/data/corpus/" + file;
  int32_t ops = 0;
  for (auto _ : state) {
    absl::StatusOr<OnnxImportResult> result = ImportOnnxFile(path, OnnxImportOptions{});
    if (!result.ok()) {
      state.SkipWithError(std::string(result.status().message()).c_str());
      return;
    }
    ops = result->problem.graph.num_ops();
    benchmark::DoNotOptimize(result);
  }
  state.counters["ops"] = ops;
  state.counters["ops_per_second"] = benchmark::Counter(static_cast<double>(ops) * state.iterations(),
                                                        benchmark::Counter::kIsRate);
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

}  // namespace
}  // namespace placement

BENCHMARK_MAIN();
