// A real profiler trace (tests/data/torch_trace: resnet18, batch 1, one thread, one profiled step, recorded from
// Debian's python3-torch by scripts/profile_model.py) matched onto the ONNX graph exported with it.
#include <gtest/gtest.h>

#include "graph/costs_input.h"
#include "graph/file_io.h"
#include "graph/onnx/onnx_import.h"

namespace placement {
namespace {

const std::string kData = std::string(PLACEMENT_SOURCE_DIR) + "/tests/data/torch_trace/";

TEST(OnnxTorchTrace, EveryScopedOperatorGetsItsModulesMeasuredTime) {
  absl::StatusOr<OnnxImportResult> model = ImportOnnxFile(kData + "resnet18_b1.onnx", {});
  ASSERT_TRUE(model.ok()) << model.status();
  absl::StatusOr<std::string> trace = ReadWholeFile(kData + "resnet18_b1_cpu1.trace.json");
  ASSERT_TRUE(trace.ok()) << trace.status();
  absl::StatusOr<CostsInput> costs = ParseCostsInput(*trace, "cpu");
  ASSERT_TRUE(costs.ok()) << costs.status();
  ASSERT_TRUE(costs->trace.has_value());
  EXPECT_EQ(costs->trace->steps, 1);
  CostSources sources;
  absl::StatusOr<Graph> graph = PrepareGraph(model->problem.graph, &*costs, nullptr, &sources);
  ASSERT_TRUE(graph.ok()) << graph.status();
  // Every operator in a module's scope is measured; the 16 "Identity_N" the exporter adds for shared weights
  // have no scope and are left to the model, as the warning says.
  EXPECT_EQ(sources.measured_ops, 49);
  EXPECT_EQ(sources.modelled_ops, 16);
  EXPECT_DOUBLE_EQ(sources.measured_flops_share, 1.0);
  ASSERT_EQ(sources.warnings.size(), 1u);
  EXPECT_NE(sources.warnings[0].find("16 operators have no module in the trace"), std::string::npos);

  // The operators' times add up to the forward pass the trace measured (74.3 ms for the profiled step), less
  // the profiler's own bookkeeping between modules.
  double total = 0;
  for (OpId op = 0; op < graph->num_ops(); ++op) {
    if (!graph->measured(op).empty()) total += graph->measured(op)[0].seconds;
  }
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
