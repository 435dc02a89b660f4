#include "graph/saved_tensors.h"

#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "graph/tests/graph_test_util.h"
#include "graph/training.h"

namespace placement {
namespace {

using testing::AddEdges;
using testing::TypedOp;

OpSpec Op(std::string name, std::string type, int64_t param_bytes, std::vector<int64_t> outputs) {
  return TypedOp(std::move(name), std::move(type), param_bytes, std::move(outputs));
}

Graph Build(GraphBuilder&& b) { return testing::BuildOrFail(std::move(b)); }

// conv1 -> bn -> relu -> conv2 -> add(relu) -> pool -> fc: a residual block as torchvision writes it.
Graph ResidualBlock() {
  GraphBuilder b;
  b.AddOp(Op("conv1", "Conv", 4096, {1000}));
  b.AddOp(Op("bn", "BatchNormalization", 64, {1000}));
  b.AddOp(Op("relu", "Relu", 0, {1000}));
  b.AddOp(Op("conv2", "Conv", 4096, {1000}));
  b.AddOp(Op("add", "Add", 0, {1000}));
  b.AddOp(Op("pool", "MaxPool", 0, {250}));
  b.AddOp(Op("fc", "Gemm", 800, {40}));
  b.AddEdge("conv1", 0, "bn");
  b.AddEdge("bn", 0, "relu");
  b.AddEdge("relu", 0, "conv2");
  b.AddEdge("conv2", 0, "add");
  b.AddEdge("relu", 0, "add");
  b.AddEdge("add", 0, "pool");
  b.AddEdge("pool", 0, "fc");
  return Build(std::move(b));
}

TEST(SavedTensors, ResidualBlockKeepsWhatAutogradKeeps) {
  const Graph g = ResidualBlock();
  const SavedTensors saved = PlanSavedTensors(g);
  // bn saves conv1's output, relu its own output (which conv2 saves too: one tensor), pool its input (add's
  // output) and int64 indices (2 x 250), fc its input. conv2's output, read only by the add, is not kept.
  EXPECT_EQ(saved.TotalBytes(g), 1000 + 1000 + 1000 + 500 + 250);
  EXPECT_FALSE(saved.output_saved[g.first_output(g.FindOp("conv2"))]);
  EXPECT_TRUE(saved.output_saved[g.first_output(g.FindOp("relu"))]);
  EXPECT_EQ(saved.extra_bytes[g.FindOp("pool")], 500);
}

TEST(SavedTensors, ProductByAConstantKeepsOnlyTheConstantAndSiluItsInput) {
  GraphBuilder b;
  b.AddOp(Op("fc", "MatMul", 400, {1000}));
  b.AddOp(Op("scale", "Constant", 0, {4}));
  b.AddOp(Op("mul", "Mul", 0, {1000}));
  b.AddOp(Op("gate", "Sigmoid", 0, {1000}));
  b.AddOp(Op("glu", "Mul", 0, {1000}));
  b.AddEdge("fc", 0, "mul");
  b.AddEdge("scale", 0, "mul");
  b.AddEdge("mul", 0, "gate");
  b.AddEdge("mul", 0, "glu");
  b.AddEdge("gate", 0, "glu");
  const Graph g = Build(std::move(b));
  const SavedTensors saved = PlanSavedTensors(g);
  EXPECT_FALSE(saved.requires_grad[g.first_output(g.FindOp("scale"))]);
  // mul keeps the 4-byte constant (for fc's gradient) and not fc's output, which requires a gradient of its own
  // but the constant does not. gate and glu are silu(mul) as an exporter spells it, x * sigmoid(x): one autograd
  // node, which keeps only its input, not the gate.
  EXPECT_EQ(saved.TotalBytes(g), 4 + 1000);
}

// gelu(x) as torch's exporter writes it before opset 20, between two linear layers.
TEST(SavedTensors, SpelledOutGeluKeepsOnlyItsInput) {
  GraphBuilder b;
  b.AddOp(Op("fc1", "Gemm", 400, {1000}));
  for (const char* c : {"sqrt2", "one", "half"}) b.AddOp(Op(c, "Constant", 0, {4}));
  b.AddOp(Op("div", "Div", 0, {1000}));
  b.AddOp(Op("erf", "Erf", 0, {1000}));
  b.AddOp(Op("add", "Add", 0, {1000}));
  b.AddOp(Op("mul", "Mul", 0, {1000}));
  b.AddOp(Op("mul_half", "Mul", 0, {1000}));
  b.AddOp(Op("fc2", "Gemm", 400, {10}));
  AddEdges(b, {{"fc1", "div"}, {"sqrt2", "div"}, {"div", "erf"}, {"erf", "add"}, {"one", "add"}, {"fc1", "mul"},
              {"add", "mul"}, {"mul", "mul_half"}, {"half", "mul_half"}, {"mul_half", "fc2"}});
  const Graph g = Build(std::move(b));
  // Operator by operator the Erf would keep its input, the product both operands and the Div its constant; as the
  // one function gelu is, only x (fc1's output) is kept, and fc2 keeps its own input.
  EXPECT_EQ(PlanSavedTensors(g).TotalBytes(g), 1000 + 1000);
}

// layer_norm(x) with its affine, spelled out as before opset 17.
TEST(SavedTensors, SpelledOutLayerNormKeepsOnlyItsInput) {
  GraphBuilder b;
  b.AddOp(Op("fc", "Gemm", 400, {1000}));
  b.AddOp(Op("two", "Constant", 0, {4}));
  b.AddOp(Op("eps", "Constant", 0, {4}));
  b.AddOp(Op("mean", "ReduceMean", 0, {10}));
  b.AddOp(Op("sub", "Sub", 0, {1000}));
  b.AddOp(Op("pow", "Pow", 0, {1000}));
  b.AddOp(Op("var", "ReduceMean", 0, {10}));
  b.AddOp(Op("add_eps", "Add", 0, {10}));
  b.AddOp(Op("sqrt", "Sqrt", 0, {10}));
  b.AddOp(Op("div", "Div", 0, {1000}));
  b.AddOp(Op("scale", "Mul", 400, {1000}));
  b.AddOp(Op("shift", "Add", 400, {1000}));
  AddEdges(b, {{"fc", "mean"}, {"fc", "sub"}, {"mean", "sub"}, {"sub", "pow"}, {"two", "pow"}, {"pow", "var"},
              {"var", "add_eps"}, {"eps", "add_eps"}, {"add_eps", "sqrt"}, {"sub", "div"}, {"sqrt", "div"},
              {"div", "scale"}, {"scale", "shift"}});
  const Graph g = Build(std::move(b));
  // Operator by operator: pow keeps sub's output, div both operands, scale its input (2 x 1000 + 10 + ...); as
  // layer_norm, only fc's output.
  EXPECT_EQ(PlanSavedTensors(g).TotalBytes(g), 1000);
}

// A second reader of one initializer (a decoder's cross-attention slicing its packed key/value weights from the
// projection the self-attention reads first): the import credits the weights to the first reader, and the second
// still keeps its activation operand for the weights' gradient, and what it writes needs a gradient.
TEST(SavedTensors, ASecondReaderOfSharedWeightsKeepsItsOperandForTheirGradient) {
  GraphBuilder b;
  OpSpec data = Op("data", "Relu", 0, {1000});  // needs no gradient: reads the data alone
  b.AddOp(data);
  OpSpec second = Op("second", "MatMul", 0, {1000});
  second.shared_weights = true;
  b.AddOp(second);
  AddEdges(b, {{"data", "second"}});
  const Graph g = Build(std::move(b));
  const SavedTensors saved = PlanSavedTensors(g);
  EXPECT_TRUE(saved.requires_grad[g.first_output(g.FindOp("second"))]);
  EXPECT_EQ(saved.TotalBytes(g), 1000);
  EXPECT_TRUE(saved.output_saved[g.first_output(g.FindOp("data"))] || saved.edge_saved[0]);
}

TEST(SavedTensors, NothingIsSavedWhereNothingNeedsAGradient) {
  GraphBuilder b;
  b.AddOp(Op("shape", "Shape", 0, {32}));
  b.AddOp(Op("exp", "Exp", 0, {32}));
  b.AddOp(Op("custom", "MyKernel", 0, {64}));
  b.AddEdge("shape", 0, "exp");
  b.AddEdge("exp", 0, "custom");
  const Graph g = Build(std::move(b));
  EXPECT_EQ(PlanSavedTensors(g).TotalBytes(g), 0);
}

TEST(SavedTensors, UnknownTypeKeepsItsInputsAndOutputs) {
  GraphBuilder b;
  b.AddOp(Op("fc", "Gemm", 400, {100}));
  b.AddOp(Op("custom", "MyKernel", 0, {64}));
  b.AddOp(Op("fc2", "Gemm", 400, {8}));
  b.AddEdge("fc", 0, "custom");
  b.AddEdge("custom", 0, "fc2");
  const Graph g = Build(std::move(b));
  EXPECT_EQ(PlanSavedTensors(g).TotalBytes(g), 100 + 64);
}

TEST(SavedTensors, TrainingStepHoldsOnlySavedActivationsUntilTheBackward) {
  const Graph f = ResidualBlock();
  absl::StatusOr<Graph> t = BuildTrainingGraph(f);
  ASSERT_TRUE(t.ok()) << t.status();
  auto reads = [&](absl::string_view src, absl::string_view dst) {
    const OpId s = t->FindOp(src), d = t->FindOp(dst);
    for (const Edge& e : t->out_edges(s)) {
      if (e.dst == d) return true;
    }
    return false;
  };
  EXPECT_FALSE(reads("conv2", "add/grad"));     // the add keeps nothing
  EXPECT_FALSE(reads("conv2", "conv2/grad"));   // a convolution keeps its input, not its output
  EXPECT_TRUE(reads("relu", "conv2/wgrad"));    // ... which is the ReLU's output
  EXPECT_TRUE(reads("fc", "fc/grad"));          // a graph output seeds the backward
  // The pool's indices are one more output of the pool, read by its backward only.
  const OpId pool = t->FindOp("pool");
  ASSERT_EQ(t->num_outputs(pool), 2);
  EXPECT_EQ(t->tensor(t->first_output(pool) + 1).bytes, 500);
  EXPECT_TRUE(reads("pool", "pool/grad"));
  // The size formula counts exactly these edges.
  const TrainingGraphSize size = TrainingGraphSizeOf(f);
  EXPECT_EQ(size.ops, t->num_ops());
  EXPECT_EQ(size.edges, t->num_edges());
}

}  // namespace
}  // namespace placement
