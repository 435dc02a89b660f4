#include "graph/fused_costs.h"

#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "graph/cost_model.h"
#include "graph/tests/graph_test_util.h"
#include "graph/topology_json.h"
#include "graph/training.h"

namespace placement {
namespace {

using testing::AddEdges;

constexpr int64_t kElements = 1 << 20;
constexpr int64_t kBytes = 4 * kElements;

// An operator as the ONNX importer costs it: `flops_per_element` per output element, its inputs read and its
// output written once.
OpSpec Elementwise(std::string name, std::string type, int64_t flops_per_element, int64_t read) {
  OpSpec op = testing::TypedOp(std::move(name), std::move(type), 0, {kBytes});
  op.flops = static_cast<double>(flops_per_element * kElements);
  op.bytes_accessed = static_cast<double>(read + kBytes);
  return op;
}

OpSpec Linear(std::string name) {
  OpSpec op = testing::TypedOp(std::move(name), "Gemm", 4096, {kBytes});
  op.flops = 2.0 * 1024 * kElements;
  op.bytes_accessed = 2.0 * kBytes + 4096;
  return op;
}

// fc1 -> gelu -> fc2, with GELU as opset 20's operator or as torch's exporter spells it before.
Graph Mlp(bool spelled_out) {
  GraphBuilder b;
  b.AddOp(Linear("fc1"));
  if (spelled_out) {
    for (const char* c : {"sqrt2", "one", "half"}) b.AddOp(testing::TypedOp(c, "Constant", 0, {4}));
    b.AddOp(Elementwise("div", "Div", 1, kBytes + 4));
    b.AddOp(Elementwise("erf", "Erf", 1, kBytes));
    b.AddOp(Elementwise("add", "Add", 1, kBytes + 4));
    b.AddOp(Elementwise("mul", "Mul", 1, 2 * kBytes));
    b.AddOp(Elementwise("gelu", "Mul", 1, kBytes + 4));
    AddEdges(b, {{"fc1", "div"},
                 {"sqrt2", "div"},
                 {"div", "erf"},
                 {"erf", "add"},
                 {"one", "add"},
                 {"fc1", "mul"},
                 {"add", "mul"},
                 {"mul", "gelu"},
                 {"half", "gelu"}});
  } else {
    b.AddOp(Elementwise("gelu", "Gelu", 8, kBytes));
    AddEdges(b, {{"fc1", "gelu"}});
  }
  b.AddOp(Linear("fc2"));
  AddEdges(b, {{"gelu", "fc2"}});
  return testing::BuildOrFail(std::move(b));
}

double TotalTime(const Graph& g, const Topology& t) {
  const absl::StatusOr<CostModel> costs = CostModel::Create(g, t);
  EXPECT_TRUE(costs.ok()) << costs.status();
  double sum = 0;
  for (OpId op = 0; costs.ok() && op < g.num_ops(); ++op) sum += costs->op_time(op, 0);
  return sum;
}

TEST(FusedCosts, SpelledOutGeluCostsWhatTheGeluOperatorCosts) {
  const absl::StatusOr<Topology> t = ParseTopologyShorthand("1xH100");
  ASSERT_TRUE(t.ok()) << t.status();
  const Graph fused = Mlp(false), spelled = Mlp(true);
  // The same but for the three scalar constants' bytes.
  EXPECT_NEAR(TotalTime(spelled, *t), TotalTime(fused, *t), 1e-5 * TotalTime(fused, *t));
  const absl::StatusOr<CostModel> costs = CostModel::Create(spelled, *t);
  ASSERT_TRUE(costs.ok());
  EXPECT_EQ(costs->op_time(spelled.FindOp("erf"), 0), 0);  // one kernel: the last operator carries it
  EXPECT_GT(costs->op_time(spelled.FindOp("gelu"), 0), 0);
}

TEST(FusedCosts, TheTrainingStepsGeluGradientIsOneKernelToo) {
  const absl::StatusOr<Topology> t = ParseTopologyShorthand("1xH100");
  ASSERT_TRUE(t.ok()) << t.status();
  const absl::StatusOr<Graph> fused = BuildTrainingGraph(Mlp(false));
  const absl::StatusOr<Graph> spelled = BuildTrainingGraph(Mlp(true));
  ASSERT_TRUE(fused.ok() && spelled.ok());
  EXPECT_NEAR(TotalTime(*spelled, *t), TotalTime(*fused, *t), 1e-5 * TotalTime(*fused, *t));
  const absl::StatusOr<CostModel> costs = CostModel::Create(*spelled, *t);
  ASSERT_TRUE(costs.ok());
  EXPECT_EQ(costs->op_time(spelled->FindOp("div/grad"), 0), 0);
  EXPECT_GT(costs->op_time(spelled->FindOp("gelu/grad"), 0), 0);
}

// relu -> Linear with a bias, as one Gemm or as an exporter writes it on an input of more than two dimensions:
// MatMul by the weight, then Add of the bias. The relu holds weights (a PReLU's slope), so that what the Linear reads
// needs a gradient, as a hidden layer's input does.
Graph LinearWithBias(bool spelled_out) {
  constexpr int64_t kWeightBytes = 4096, kBiasBytes = 64;
  GraphBuilder b;
  OpSpec relu = Elementwise("relu", "Relu", 1, kBytes);
  relu.param_bytes = 64;
  b.AddOp(std::move(relu));
  const double product_flops = 2.0 * 1024 * kElements;
  if (spelled_out) {
    OpSpec matmul = testing::TypedOp("fc/MatMul", "MatMul", kWeightBytes, {kBytes});
    matmul.flops = product_flops;
    matmul.bytes_accessed = 2.0 * kBytes + kWeightBytes;
    b.AddOp(std::move(matmul));
    OpSpec add = testing::TypedOp("fc/Add", "Add", kBiasBytes, {kBytes});
    add.flops = static_cast<double>(kElements);
    add.bytes_accessed = 2.0 * kBytes + kBiasBytes;
    b.AddOp(std::move(add));
    AddEdges(b, {{"relu", "fc/MatMul"}, {"fc/MatMul", "fc/Add"}});
  } else {
    OpSpec gemm = testing::TypedOp("fc", "Gemm", kWeightBytes + kBiasBytes, {kBytes});
    gemm.flops = product_flops + static_cast<double>(kElements);
    gemm.bytes_accessed = 2.0 * kBytes + kWeightBytes + kBiasBytes;
    b.AddOp(std::move(gemm));
    AddEdges(b, {{"relu", "fc"}});
  }
  return testing::BuildOrFail(std::move(b));
}

TEST(FusedCosts, ALinearsBiasAddIsPartOfItsMatrixProduct) {
  const absl::StatusOr<Topology> t = ParseTopologyShorthand("1xH100");
  ASSERT_TRUE(t.ok()) << t.status();
  const Graph gemm = LinearWithBias(false), spelled = LinearWithBias(true);
  EXPECT_NEAR(TotalTime(spelled, *t), TotalTime(gemm, *t), 1e-6 * TotalTime(gemm, *t));
  const absl::StatusOr<CostModel> costs = CostModel::Create(spelled, *t);
  ASSERT_TRUE(costs.ok());
  EXPECT_EQ(costs->op_time(spelled.FindOp("fc/MatMul"), 0), 0);
  EXPECT_GT(costs->op_time(spelled.FindOp("fc/Add"), 0), 0);
  // The backward: the product's input gradient once (not the Add's share of it), its weight gradient as it is.
  const absl::StatusOr<Graph> gemm_step = BuildTrainingGraph(gemm);
  const absl::StatusOr<Graph> spelled_step = BuildTrainingGraph(spelled);
  ASSERT_TRUE(gemm_step.ok() && spelled_step.ok());
  // The spelled-out step has two more operators, the bias's own gradient (the reduction of the output's gradient
  // that addmm's backward runs beside its products) and its own update.
  const absl::StatusOr<CostModel> step_costs = CostModel::Create(*spelled_step, *t);
  ASSERT_TRUE(step_costs.ok());
  const double bias_gradient = step_costs->op_time(spelled_step->FindOp("fc/Add/wgrad"), 0);
  const double bias_update = step_costs->op_time(spelled_step->FindOp("fc/Add/update"), 0);
  EXPECT_GT(bias_gradient, 0);
  EXPECT_EQ(step_costs->op_time(spelled_step->FindOp("fc/MatMul/grad"), 0), 0);
  EXPECT_NEAR(TotalTime(*spelled_step, *t) - bias_gradient - bias_update, TotalTime(*gemm_step, *t),
              1e-4 * TotalTime(*gemm_step, *t));  // the Gemm's update moves the bias too
}

TEST(FusedCosts, AFirstLinearOnTheDataRunsNoInputGradientWhateverItsSpelling) {
  const absl::StatusOr<Topology> t = ParseTopologyShorthand("1xH100");
  ASSERT_TRUE(t.ok()) << t.status();
  // relu -> Linear, where the relu holds no weights: the Linear's input needs no gradient.
  for (bool spelled_out : {false, true}) {
    const absl::StatusOr<Graph> forward = RebuildGraph(LinearWithBias(spelled_out), [](OpId, OpSpec& op) {
      if (op.name == "relu") op.param_bytes = 0;
    });
    ASSERT_TRUE(forward.ok()) << forward.status();
    const absl::StatusOr<Graph> step = BuildTrainingGraph(*forward);
    ASSERT_TRUE(step.ok()) << step.status();
    const absl::StatusOr<CostModel> costs = CostModel::Create(*step, *t);
    ASSERT_TRUE(costs.ok()) << costs.status();
    for (const char* name : {"fc/grad", "fc/MatMul/grad", "fc/Add/grad", "relu/grad"}) {
      const OpId u = step->FindOp(name);
      if (u != kNone) EXPECT_EQ(costs->op_time(u, 0), 0) << name << (spelled_out ? " (spelled out)" : "");
    }
  }
}

// A pattern with a measured operator keeps its measured times: nothing says what the fused kernel would take.
TEST(FusedCosts, MeasuredOperatorsKeepTheirTimes) {
  const absl::StatusOr<Topology> t = ParseTopologyShorthand("1xH100");
  ASSERT_TRUE(t.ok()) << t.status();
  Graph spelled = Mlp(true);
  GraphBuilder b;
  for (OpId op = 0; op < spelled.num_ops(); ++op) {
    OpSpec spec = testing::TypedOp(std::string(spelled.name(op)), std::string(spelled.op_type(op)),
                                   spelled.param_bytes(op), {spelled.tensor(spelled.first_output(op)).bytes});
    spec.flops = spelled.flops(op);
    spec.bytes_accessed = spelled.bytes_accessed(op);
    if (spelled.name(op) == "erf") spec.measured_seconds.emplace_back("H100", 1e-3);
    b.AddOp(std::move(spec));
  }
  for (EdgeId e = 0; e < spelled.num_edges(); ++e) {
    const Edge& edge = spelled.edge(e);
    b.AddEdge(edge.src, edge.src_output, edge.dst, edge.bytes);
  }
  const Graph measured = testing::BuildOrFail(std::move(b));
  const absl::StatusOr<CostModel> costs = CostModel::Create(measured, *t);
  ASSERT_TRUE(costs.ok()) << costs.status();
  EXPECT_EQ(costs->op_time(measured.FindOp("erf"), 0), 1e-3);
  EXPECT_GT(costs->op_time(measured.FindOp("div"), 0), 0);
}

}  // namespace
}  // namespace placement
