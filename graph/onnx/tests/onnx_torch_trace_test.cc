// A real profiler trace (tests/data/torch_trace: resnet18, batch 1, one thread, one profiled step, recorded from
// Debian's python3-torch by scripts/profile_model.py) matched onto the ONNX graph exported with it.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "graph/costs_input.h"
#include "graph/onnx/onnx_import.h"

namespace placement {
namespace {

const std::string kData = std::string(PLACEMENT_SOURCE_DIR) + "/tests/data/torch_trace/";

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(OnnxTorchTrace, EveryResnetOperatorGetsItsModulesMeasuredTime) {
  absl::StatusOr<OnnxImportResult> model = ImportOnnxFile(kData + "resnet18_b1.onnx", {});
  ASSERT_TRUE(model.ok()) << model.status();
  absl::StatusOr<CostsInput> costs = ParseCostsInput(ReadFile(kData + "resnet18_b1_cpu1.trace.json"), "cpu");
  ASSERT_TRUE(costs.ok()) << costs.status();
  ASSERT_TRUE(costs->trace.has_value());
  EXPECT_EQ(costs->trace->steps, 1);
  CostSources sources;
  absl::StatusOr<Graph> graph = PrepareGraph(model->problem.graph, &*costs, nullptr, &sources);
  ASSERT_TRUE(graph.ok()) << graph.status();
  EXPECT_EQ(sources.modelled_ops, 0) << (sources.warnings.empty() ? "" : sources.warnings[0]);
  EXPECT_EQ(sources.measured_ops, graph->num_ops());

  // The operators' times add up to the forward pass the trace measured (74.3 ms for the profiled step), less
  // the profiler's own bookkeeping between modules.
  double total = 0;
  for (OpId op = 0; op < graph->num_ops(); ++op) total += graph->measured(op)[0].seconds;
  EXPECT_GT(total, 0.8 * 74.27e-3);
  EXPECT_LE(total, 74.27e-3);
  // The second relu call of the first block has its own time, not the first call's.
  const OpId first = graph->FindOp("/layer1/layer1.0/relu/Relu");
  const OpId second = graph->FindOp("/layer1/layer1.0/relu_1/Relu");
  ASSERT_NE(first, kNone);
  ASSERT_NE(second, kNone);
  EXPECT_NE(graph->measured(first)[0].seconds, graph->measured(second)[0].seconds);
}

}  // namespace
}  // namespace placement
