#include "graph/pipelined_memory.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "graph/graph.h"
#include "graph/tests/graph_test_util.h"
#include "graph/training.h"

namespace placement {
namespace {

OpSpec Op(std::string name, int64_t param_bytes, std::vector<int64_t> outputs, std::string type = "Kernel") {
  OpSpec op;
  op.name = std::move(name);
  op.op_type = std::move(type);  // "Kernel": a type the saved-tensor table does not name, which keeps everything
  op.flops = 1000;
  op.param_bytes = param_bytes;
  for (int64_t b : outputs) op.outputs.push_back(OutputTensor{b, -1});
  return op;
}

// x -> a -> b, a with two outputs; b's output is the model's answer.
Graph Forward() {
  GraphBuilder b;
  b.AddOp(Op("x", 0, {400}));
  b.AddOp(Op("a", 4000, {300, 50}));
  b.AddOp(Op("b", 8000, {20}));
  b.AddEdge("x", 0, "a");
  b.AddEdge("a", 0, "b");
  b.AddEdge("a", 1, "b");
  return testing::BuildOrFail(std::move(b));
}

int64_t Of(const Graph& g, const std::vector<int64_t>& bytes, const char* op) { return bytes[g.FindOp(op)]; }

TEST(PipelinedMemory, KeptActivationsAreTheForwardTensorsTheBackwardReadsOnce) {
  absl::StatusOr<Graph> step = BuildTrainingGraph(Forward(), TrainingOptions{});
  ASSERT_TRUE(step.ok()) << step.status();
  const std::vector<int64_t> kept = KeptForBackwardBytes(*step);
  EXPECT_EQ(Of(*step, kept, "x"), 400);  // a's backward reads its input
  EXPECT_EQ(Of(*step, kept, "a"), 350);  // both outputs, each once although b/grad and b/wgrad read them
  EXPECT_EQ(Of(*step, kept, "b"), 0);    // the answer, which the loss reads
  for (OpId v = 0; v < step->num_ops(); ++v) {
    if (step->is_backward(v)) EXPECT_EQ(kept[v], 0) << step->name(v);
  }
  EXPECT_EQ(KeptForBackwardBytes(Forward()), std::vector<int64_t>(3, 0));  // inference keeps nothing
}

TEST(PipelinedMemory, AFinalOperatorKeepsWhatItSavesBesideTheAnswer) {
  GraphBuilder b;
  b.AddOp(Op("conv", 4000, {800}));
  b.AddOp(Op("pool", 0, {200}, "MaxPool"));  // the model's answer, and its int64 indices beside it
  b.AddEdge("conv", 0, "pool");
  absl::StatusOr<Graph> step = BuildTrainingGraph(testing::BuildOrFail(std::move(b)), TrainingOptions{});
  ASSERT_TRUE(step.ok()) << step.status();
  const std::vector<int64_t> kept = KeptForBackwardBytes(*step);
  EXPECT_EQ(Of(*step, kept, "conv"), 800);  // the pool's input
  EXPECT_EQ(Of(*step, kept, "pool"), 400);  // two bytes of indices per float32 byte of the answer; not the answer
}

TEST(PipelinedMemory, EachDeviceHoldsStateOnceAndActivationsPerMicroBatchInFlight) {
  absl::StatusOr<Graph> step = BuildTrainingGraph(Forward(), TrainingOptions{});  // Adam
  ASSERT_TRUE(step.ok()) << step.status();
  const std::vector<int64_t> held = PipelinedBytes(*step, 3);
  EXPECT_EQ(Of(*step, held, "x"), 3 * 400);
  EXPECT_EQ(Of(*step, held, "a"), 4000 + 3 * 350);
  EXPECT_EQ(Of(*step, held, "a/wgrad"), 4000);      // the gradient, once
  EXPECT_EQ(Of(*step, held, "a/update"), 2 * 4000);  // Adam's two moments
  EXPECT_EQ(Of(*step, held, "b"), 8000);
  int64_t total = 0;
  for (int64_t h : held) total += h;
  EXPECT_EQ(total, 4 * (4000 + 8000) + 3 * (400 + 350));
}

TEST(PipelinedMemory, BackwardNodesNotNamedAsGradientsFoldTheirMemoryIntoTheirSize) {
  // Tarnawski et al.'s training inputs: backward nodes of type "layer" whose size holds what they keep.
  GraphBuilder b;
  b.AddOp(Op("f", 100, {64}, "layer"));
  OpSpec back = Op("g", 100, {64}, "layer");
  back.is_backward = true;
  b.AddOp(std::move(back));
  b.AddEdge("f", 0, "g");
  const Graph g = testing::BuildOrFail(std::move(b));
  EXPECT_EQ(PipelinedBytes(g, 4), (std::vector<int64_t>{100, 100}));
}

}  // namespace
}  // namespace placement
