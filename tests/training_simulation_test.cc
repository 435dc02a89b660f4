// Training-step graphs go through the cost model and the simulator: the expansion is not only a valid graph
// but one whose simulated step has the work, the order and the memory a training step has.
#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "graph/cost_model.h"
#include "graph/graph_json.h"
#include "graph/placement.h"
#include "graph/topology_json.h"
#include "graph/training.h"
#include "simulator/objectives.h"

namespace placement {
namespace {

// A multilayer perceptron's forward pass: input, then (matmul with weights, relu) per layer, then a loss.
// Matrix products are measured on V100, the rest estimated, so both cost paths are scaled.
Graph Mlp(int layers) {
  GraphBuilder b;
  OpSpec input;
  input.name = "input";
  input.op_type = "Input";
  input.bytes_accessed = 1 << 20;
  input.outputs = {OutputTensor{1 << 20, -1}};
  b.AddOp(input);
  std::string prev = "input";
  for (int i = 0; i < layers; ++i) {
    OpSpec fc;
    fc.name = absl::StrCat("fc", i);
    fc.op_type = "MatMul";
    fc.measured_seconds = {{"V100", 1e-3}};
    fc.param_bytes = 4 << 20;  // 1M fp32 weights: a 1 ms product means a large batch
    fc.temp_bytes = 1 << 20;
    fc.outputs = {OutputTensor{1 << 20, -1}};
    b.AddOp(fc);
    b.AddEdge(prev, 0, fc.name);
    OpSpec relu;
    relu.name = absl::StrCat("relu", i);
    relu.op_type = "Relu";
    relu.flops = 1 << 18;
    relu.bytes_accessed = 2 << 20;
    relu.outputs = {OutputTensor{1 << 20, -1}};
    b.AddOp(relu);
    b.AddEdge(fc.name, 0, relu.name);
    prev = relu.name;
  }
  OpSpec loss;
  loss.name = "loss";
  loss.op_type = "Loss";
  loss.flops = 1 << 18;
  loss.bytes_accessed = 1 << 20;
  loss.outputs = {OutputTensor{4, -1}};
  b.AddOp(loss);
  b.AddEdge(prev, 0, "loss");
  absl::StatusOr<Graph> g = std::move(b).Build();
  EXPECT_TRUE(g.ok()) << g.status();
  return *std::move(g);
}

Topology TwoV100() {
  absl::StatusOr<Topology> t = ParseTopologyShorthand("2xV100");
  EXPECT_TRUE(t.ok()) << t.status();
  return *std::move(t);
}

TEST(TrainingSimulation, AllOnOneDeviceDoesThreeForwardsOfWork) {
  const Graph forward = Mlp(4);
  absl::StatusOr<Graph> training = BuildTrainingGraph(forward, {});
  ASSERT_TRUE(training.ok()) << training.status();
  const Topology topology = TwoV100();
  absl::StatusOr<CostModel> costs = CostModel::Create(*training, topology);
  ASSERT_TRUE(costs.ok()) << costs.status();
  Placement on_gpu0{std::vector<DeviceId>(training->num_ops(), 0)};
  absl::StatusOr<Evaluation> step = Evaluate(*costs, on_gpu0, Objective::kStepTime);
  ASSERT_TRUE(step.ok()) << step.status();

  double forward_time = 0, backward_time = 0, update_time = 0;
  for (OpId u = 0; u < training->num_ops(); ++u) {
    const double t = costs->op_time(u, 0);
    if (!training->is_backward(u)) {
      forward_time += t;
    } else if (absl::EndsWith(training->name(u), "/update")) {
      update_time += t;
    } else {
      backward_time += t;
    }
  }
  // Measured times scale exactly; estimated ones pay the launch overhead once more per extra operator. The first
  // layer reads the data, which needs no gradient: its backward is its weight gradient alone.
  const double first_layer = costs->op_time(training->FindOp("fc0"), 0);
  EXPECT_EQ(costs->op_time(training->FindOp("fc0/grad"), 0), 0);
  EXPECT_NEAR(backward_time, 2 * forward_time - first_layer, 0.01 * forward_time);
  EXPECT_LT(update_time, 0.1 * forward_time);  // elementwise: small next to the matrix products
  const double busy = step->devices[0].busy;
  EXPECT_NEAR(busy, forward_time + backward_time + update_time, 1e-9);
  EXPECT_NEAR(busy, 3 * forward_time - first_layer, 0.1 * forward_time);
  EXPECT_EQ(step->devices[1].busy, 0);
  EXPECT_NEAR(step->value, busy, 1e-9);  // one device, no transfers: nothing waits

  // Memory holds the weights and Adam's two moments, and at the turn from forward to backward every saved
  // activation: the four fc outputs and four relu outputs and the input, 1 MiB each.
  const int64_t weights = 4 * (int64_t{4} << 20);
  EXPECT_GE(step->devices[0].peak_memory, 3 * weights + 9 * (int64_t{1} << 20));
  EXPECT_TRUE(step->fits_memory);
}

TEST(TrainingSimulation, APipelineSplitKeepsBackwardWithForward) {
  const Graph forward = Mlp(4);
  absl::StatusOr<Graph> training = BuildTrainingGraph(forward, {});
  ASSERT_TRUE(training.ok()) << training.status();
  const Topology topology = TwoV100();
  absl::StatusOr<CostModel> costs = CostModel::Create(*training, topology);
  ASSERT_TRUE(costs.ok()) << costs.status();
  // The first half of the layers and their backward operators on gpu0, the rest on gpu1.
  Placement split{std::vector<DeviceId>(training->num_ops(), 0)};
  for (OpId u = 0; u < training->num_ops(); ++u) {
    const absl::string_view name = training->name(u);
    const absl::string_view base = name.substr(0, name.find('/'));
    if (base == "fc2" || base == "relu2" || base == "fc3" || base == "relu3" || base == "loss") split.device[u] = 1;
  }
  ASSERT_TRUE(ValidatePlacement(*costs, split).ok()) << ValidatePlacement(*costs, split);
  absl::StatusOr<Evaluation> step = Evaluate(*costs, split, Objective::kStepTime);
  ASSERT_TRUE(step.ok()) << step.status();
  EXPECT_GT(step->devices[0].busy, 0);
  EXPECT_GT(step->devices[1].busy, 0);
  EXPECT_GT(step->simulation.transfers, 0);  // activations forward, gradients back
  EXPECT_GE(step->value, std::max(step->devices[0].busy, step->devices[1].busy));

  // A placement that separates an operator from its backward operator breaks their colocation group.
  Placement torn = split;
  torn.device[training->FindOp("fc0/grad")] = 1;
  EXPECT_FALSE(ValidatePlacement(*costs, torn).ok());
}

TEST(TrainingSimulation, ExampleTrainingGraphSimulatesOnItsCluster) {
  std::ifstream in(std::string(PLACEMENT_SOURCE_DIR) + "/examples/graphs/mlp_training.json");
  std::stringstream text;
  text << in.rdbuf();
  absl::StatusOr<Problem> problem = ParseGraphJson(text.str());
  ASSERT_TRUE(problem.ok()) << problem.status();
  ASSERT_TRUE(problem->topology.has_value());
  absl::StatusOr<CostModel> costs = CostModel::Create(problem->graph, *problem->topology);
  ASSERT_TRUE(costs.ok()) << costs.status();
  const DeviceId cpu = problem->topology->FindDevice("cpu0");
  ASSERT_GE(cpu, 0);
  Placement placement{std::vector<DeviceId>(problem->graph.num_ops(), 0)};
  placement.device[problem->graph.FindOp("data")] = cpu;
  absl::StatusOr<Evaluation> step = Evaluate(*costs, placement, Objective::kStepTime);
  ASSERT_TRUE(step.ok()) << step.status();
  EXPECT_GT(step->value, 0);
  EXPECT_TRUE(step->fits_memory);
}

}  // namespace
}  // namespace placement
