// If, Loop and Scan expanded into the operators that run (control_flow.h): taken branches, unrolled loops,
// the stated assumptions where the data decides, and the limits that keep a hostile model bounded.
#include <algorithm>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "graph/onnx/onnx_import.h"
#include "graph/onnx/tests/test_models.h"

namespace placement {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using namespace onnx_testing;  // NOLINT: model-building helpers

// x [4, 16] and an If whose then branch is a Relu of x and whose else branch a 16x16 MatMul of x, both reading
// x from the enclosing graph; `cond` decides.
onnx::ModelProto IfModel(const std::string& cond) {
  onnx::ModelProto m = NewModel(17);
  AddInput(m, "x", {4, 16});
  AddInitializer(m, "w", {16, 16});
  onnx::NodeProto& branch = AddNode(m, "If", {cond}, {"y"}, "choose");
  onnx::GraphProto& then_branch = AddGraph(branch, "then_branch");
  AddNode(then_branch, "Relu", {"x"}, {"r"}, "relu");
  AddOutput(then_branch, "r");
  onnx::GraphProto& else_branch = AddGraph(branch, "else_branch");
  AddNode(else_branch, "MatMul", {"x", "w"}, {"p"}, "matmul");
  AddOutput(else_branch, "p");
  AddNode(m, "Sigmoid", {"y"}, {"z"}, "after");
  AddOutput(m, "z");
  return m;
}

std::vector<std::string> OpNames(const Graph& g) {
  std::vector<std::string> names;
  for (OpId op = 0; op < g.num_ops(); ++op) names.emplace_back(g.name(op));
  return names;
}

// Whether `dst` reads an output of `src`.
bool Reads(const Graph& g, OpId dst, OpId src) {
  if (dst == kNone || src == kNone) return false;
  for (EdgeId e : g.in_edges(dst)) {
    if (g.edge(e).src == src) return true;
  }
  return false;
}

TEST(OnnxControlFlow, IfWithAFoldedConditionBecomesTheBranchItTakes) {
  for (int64_t value : {1, 0}) {
    onnx::ModelProto m = IfModel("c");
    // The condition is computed from a shape: Size(x) > 0 is true, Size(x) < 0 false.
    m.mutable_graph()->mutable_node()->Clear();
    AddNode(m, "Size", {"x"}, {"size"}, "size");
    AddScalar(*m.mutable_graph(), "zero", 0);
    AddNode(m, value ? "Greater" : "Less", {"size", "zero"}, {"c"}, "compare");
    onnx::ModelProto full = IfModel("c");
    for (const onnx::NodeProto& n : full.graph().node()) *m.mutable_graph()->add_node() = n;
    absl::StatusOr<OnnxImportResult> r = Import(m);
    ASSERT_TRUE(r.ok()) << r.status();
    const Graph& g = r->problem.graph;
    EXPECT_THAT(r->warnings, IsEmpty());
    const std::string taken = value ? "choose/then/relu" : "choose/else/matmul";
    const std::string other = value ? "choose/else/matmul" : "choose/then/relu";
    EXPECT_THAT(OpNames(g), Contains(taken));
    EXPECT_EQ(g.FindOp(other), kNone);
    OpId after = g.FindOp("after");
    ASSERT_NE(after, kNone);
    ASSERT_EQ(g.in_edges(after).size(), 1u);
    EXPECT_TRUE(Reads(g, after, g.FindOp(taken)));
  }
}

TEST(OnnxControlFlow, IfOnDataPlacesTheCostlierBranchAndSaysSo) {
  onnx::ModelProto m = IfModel("flag");
  AddInput(m, "flag", {}, onnx::TensorProto::BOOL);
  absl::StatusOr<OnnxImportResult> r = Import(m);
  ASSERT_TRUE(r.ok()) << r.status();
  const Graph& g = r->problem.graph;
  EXPECT_NE(g.FindOp("choose/else/matmul"), kNone);
  EXPECT_EQ(g.FindOp("choose/then/relu"), kNone);
  EXPECT_THAT(r->warnings, Contains(HasSubstr("If 'choose': its condition 'flag' depends on the data; both branches "
                                              "were imported and the costlier, else")));
  EXPECT_DOUBLE_EQ(g.flops(g.FindOp("choose/else/matmul")), 2.0 * 4 * 16 * 16);
}

// acc [4] carried through `trips` iterations of acc + w (w read from the enclosing graph), each iteration also
// giving Relu(acc) as a scan output.
onnx::ModelProto LoopModel(const std::string& trips) {
  onnx::ModelProto m = NewModel(17);
  AddInput(m, "x", {4});
  AddInitializer(m, "w", {4});
  onnx::NodeProto& loop = AddNode(m, "Loop", {trips, "", "x"}, {"final", "history"}, "loop");
  onnx::GraphProto& body = AddGraph(loop, "body");
  AddInput(body, "i", {}, onnx::TensorProto::INT64);
  AddInput(body, "cond_in", {}, onnx::TensorProto::BOOL);
  AddInput(body, "acc", {4});
  AddNode(body, "Identity", {"cond_in"}, {"cond_out"}, "keep_going");
  AddNode(body, "Add", {"acc", "w"}, {"next"}, "add");
  AddNode(body, "Relu", {"next"}, {"seen"}, "relu");
  AddOutput(body, "cond_out");
  AddOutput(body, "next");
  AddOutput(body, "seen");
  AddNode(m, "Sigmoid", {"final"}, {"out"}, "after");
  AddOutput(m, "out");
  AddOutput(m, "history");
  return m;
}

TEST(OnnxControlFlow, LoopWithAFoldedTripCountIsUnrolled) {
  onnx::ModelProto m = LoopModel("three");
  AddScalar(*m.mutable_graph(), "three", 3);
  std::rotate(m.mutable_graph()->mutable_node()->rbegin(), m.mutable_graph()->mutable_node()->rbegin() + 1,
              m.mutable_graph()->mutable_node()->rend());  // the constant first, as exporters order it
  absl::StatusOr<OnnxImportResult> r = Import(m);
  ASSERT_TRUE(r.ok()) << r.status();
  const Graph& g = r->problem.graph;
  for (int i = 0; i < 3; ++i) {
    EXPECT_NE(g.FindOp("loop/iter" + std::to_string(i) + "/add"), kNone) << i;
    EXPECT_NE(g.FindOp("loop/iter" + std::to_string(i) + "/relu"), kNone) << i;
  }
  EXPECT_EQ(g.FindOp("loop/iter3/add"), kNone);
  // Iteration 1 reads iteration 0's sum; the node after the loop reads the last one.
  EXPECT_TRUE(Reads(g, g.FindOp("loop/iter1/add"), g.FindOp("loop/iter0/add")));
  OpId after = g.FindOp("after");
  ASSERT_EQ(g.in_edges(after).size(), 1u);
  EXPECT_TRUE(Reads(g, after, g.FindOp("loop/iter2/add")));
  // The scan output stacks three [4] values: [3, 4] floats.
  OpId stack = g.FindOp("loop/history");
  ASSERT_NE(stack, kNone);
  EXPECT_EQ(g.op_type(stack), "Stack");
  EXPECT_EQ(OutputBytes(g, "loop/history"), 3 * 4 * 4);
  EXPECT_THAT(r->warnings, IsEmpty());
}

TEST(OnnxControlFlow, LoopWithATripCountFromTheDataTakesTheStatedDefault) {
  onnx::ModelProto m = LoopModel("n");
  AddInput(m, "n", {}, onnx::TensorProto::INT64);
  OnnxImportOptions options;
  options.num_data_inputs = 2;
  options.loop_iterations = 5;
  absl::StatusOr<OnnxImportResult> r = Import(m, options);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_NE(r->problem.graph.FindOp("loop/iter4/add"), kNone);
  EXPECT_EQ(r->problem.graph.FindOp("loop/iter5/add"), kNone);
  EXPECT_THAT(r->warnings, Contains(HasSubstr("Loop 'loop': its trip count depends on the data, so 5 iterations "
                                              "are assumed (loop_iterations)")));
}

TEST(OnnxControlFlow, LoopPastTheUnrollLimitIsOneOperatorCostingEveryIteration) {
  onnx::ModelProto m = LoopModel("many");
  onnx::TensorProto& trips = AddInt64s(m, "many", {1000000});
  trips.clear_dims();  // a scalar
  OnnxImportOptions options;
  options.max_unrolled_nodes = 100;
  absl::StatusOr<OnnxImportResult> r = Import(m, options);
  ASSERT_TRUE(r.ok()) << r.status();
  const Graph& g = r->problem.graph;
  OpId unit = g.FindOp("loop");
  ASSERT_NE(unit, kNone);
  EXPECT_EQ(g.op_type(unit), "Loop");
  // Per iteration: the Add and Relu of 4 elements (the condition's Constant and Identity cost nothing).
  EXPECT_DOUBLE_EQ(g.flops(unit), 1000000.0 * (4 + 4));
  EXPECT_EQ(OutputBytes(g, "loop", 1), int64_t{1000000} * 4 * 4);
  EXPECT_LT(g.num_ops(), 5);
  EXPECT_THAT(r->warnings, Contains(HasSubstr("Loop 'loop': 1000000 iterations of a 4-node body exceed "
                                              "max_unrolled_nodes 100; kept as one operator")));
}

TEST(OnnxControlFlow, LoopEndsWhereItsConditionFoldsToFalse) {
  onnx::ModelProto m = LoopModel("");
  // The body continues while i + 1 < 2: two iterations, with no trip count at all.
  onnx::GraphProto& body = *m.mutable_graph()->mutable_node(0)->mutable_attribute(0)->mutable_g();
  body.mutable_node(0)->Clear();
  *body.mutable_node(0) = AddScalar(body, "one", 1);
  body.mutable_node()->RemoveLast();
  AddScalar(body, "two", 2);
  AddNode(body, "Add", {"i", "one"}, {"i1"}, "next_i");
  AddNode(body, "Less", {"i1", "two"}, {"cond_out"}, "keep_going");
  m.mutable_graph()->mutable_node(0)->set_input(0, "");
  absl::StatusOr<OnnxImportResult> r = Import(m);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_NE(r->problem.graph.FindOp("loop/iter1/add"), kNone);
  EXPECT_EQ(r->problem.graph.FindOp("loop/iter2/add"), kNone);
  EXPECT_THAT(r->warnings, IsEmpty());
}

TEST(OnnxControlFlow, ScanIsUnrolledOverItsAxis) {
  onnx::ModelProto m = NewModel(17);
  AddInput(m, "init", {8});
  AddInput(m, "seq", {5, 8});
  onnx::NodeProto& scan = AddNode(m, "Scan", {"init", "seq"}, {"state", "outs"}, "scan");
  SetInt(scan, "num_scan_inputs", 1);
  onnx::GraphProto& body = AddGraph(scan, "body");
  AddInput(body, "s", {8});
  AddInput(body, "x", {8});
  AddNode(body, "Add", {"s", "x"}, {"s2"}, "add");
  AddNode(body, "Tanh", {"s2"}, {"y"}, "tanh");
  AddOutput(body, "s2");
  AddOutput(body, "y");
  AddOutput(m, "state");
  AddOutput(m, "outs");
  OnnxImportOptions options;
  options.num_data_inputs = 2;
  absl::StatusOr<OnnxImportResult> r = Import(m, options);
  ASSERT_TRUE(r.ok()) << r.status();
  const Graph& g = r->problem.graph;
  EXPECT_NE(g.FindOp("scan/iter4/tanh"), kNone);
  EXPECT_EQ(g.FindOp("scan/iter5/tanh"), kNone);
  EXPECT_EQ(OutputBytes(g, "scan/outs"), 5 * 8 * 4);
  EXPECT_EQ(OutputBytes(g, "scan/iter0/slice0"), 8 * 4);
}

TEST(OnnxControlFlow, AnIfInsideALoopReadsBothEnclosingScopes) {
  onnx::ModelProto m = LoopModel("two");
  onnx::TensorProto& trips = AddInt64s(m, "two", {2});
  trips.clear_dims();
  onnx::GraphProto& body = *m.mutable_graph()->mutable_node(0)->mutable_attribute(0)->mutable_g();
  AddScalar(body, "t", 1, onnx::TensorProto::BOOL);
  onnx::NodeProto& inner = AddNode(body, "If", {"t"}, {"chosen"}, "inner");
  onnx::GraphProto& then_branch = AddGraph(inner, "then_branch");
  AddNode(then_branch, "Mul", {"next", "w"}, {"m"}, "mul");  // `next` from the body, `w` from the main graph
  AddOutput(then_branch, "m");
  onnx::GraphProto& else_branch = AddGraph(inner, "else_branch");
  AddNode(else_branch, "Identity", {"next"}, {"e"}, "same");
  AddOutput(else_branch, "e");
  body.mutable_output(1)->set_name("chosen");
  absl::StatusOr<OnnxImportResult> r = Import(m);
  ASSERT_TRUE(r.ok()) << r.status();
  const Graph& g = r->problem.graph;
  OpId mul1 = g.FindOp("loop/iter1/inner/then/mul");
  ASSERT_NE(mul1, kNone);
  EXPECT_TRUE(Reads(g, mul1, g.FindOp("loop/iter1/add")));
  // The second iteration's sum starts from the first one's If output.
  EXPECT_TRUE(Reads(g, g.FindOp("loop/iter1/add"), g.FindOp("loop/iter0/inner/then/mul")));
}

// x [6, 8]: a Loop of three iterations appends row i to a sequence (as MViT's exports do); the rows are read
// back one by one, stacked, counted, and the input also split into a sequence of two halves.
TEST(OnnxControlFlow, SequencesOfAStaticLengthAreFollowed) {
  onnx::ModelProto m = NewModel(17);
  AddInput(m, "x", {6, 8});
  onnx::TensorProto& three = AddInt64s(m, "three", {3});
  three.clear_dims();
  onnx::TensorProto& one = AddInt64s(m, "one", {1});
  one.clear_dims();
  AddNode(m, "SequenceEmpty", {}, {"empty"}, "empty");
  onnx::GraphProto& body = AddGraph(AddNode(m, "Loop", {"three", "", "empty"}, {"rows"}, "loop"), "body");
  AddInput(body, "i", {}, onnx::TensorProto::INT64);
  AddInput(body, "c", {}, onnx::TensorProto::BOOL);
  AddInput(body, "seq", {});
  body.mutable_input(2)->mutable_type()->Clear();  // a sequence: no tensor type
  AddNode(body, "Identity", {"c"}, {"c2"});
  SetInt(AddNode(body, "Gather", {"x", "i"}, {"row"}, "row"), "axis", 0);
  AddNode(body, "SequenceInsert", {"seq", "row"}, {"seq2"}, "append");
  AddOutput(body, "c2");
  AddOutput(body, "seq2");
  AddNode(m, "SequenceAt", {"rows", "one"}, {"second"}, "at");
  AddNode(m, "Relu", {"second"}, {"r"}, "relu");
  onnx::NodeProto& stack = AddNode(m, "ConcatFromSequence", {"rows"}, {"stacked"}, "stack");
  SetInt(stack, "axis", 0);
  SetInt(stack, "new_axis", 1);
  AddNode(m, "SequenceLength", {"rows"}, {"n"}, "count");
  SetInt(AddNode(m, "SplitToSequence", {"x", "three"}, {"halves"}, "halve"), "axis", 0);
  SetInt(AddNode(m, "ConcatFromSequence", {"halves"}, {"again"}, "join"), "axis", 0);
  for (const char* out : {"r", "stacked", "n", "again"}) AddOutput(m, out);
  absl::StatusOr<OnnxImportResult> r = Import(m);
  ASSERT_TRUE(r.ok()) << r.status();
  const Graph& g = r->problem.graph;
  // No operator for the sequence bookkeeping; the row Relu reads is the second iteration's.
  EXPECT_EQ(g.FindOp("empty"), kNone);
  EXPECT_EQ(g.FindOp("loop/iter1/append"), kNone);
  EXPECT_TRUE(Reads(g, g.FindOp("relu"), g.FindOp("loop/iter1/row")));
  EXPECT_EQ(g.op_type(g.FindOp("stack")), "Stack");
  EXPECT_EQ(OutputBytes(g, "stack"), 3 * 8 * 4);
  EXPECT_EQ(g.op_type(g.FindOp("count")), "Constant");
  EXPECT_EQ(OutputBytes(g, "join"), 6 * 8 * 4);
  EXPECT_EQ(g.num_outputs(g.FindOp("halve")), 2);
}

TEST(OnnxControlFlow, MalformedSubgraphsAreRefusedWithTheNodeNamed) {
  onnx::ModelProto reads_nothing = IfModel("flag");
  AddInput(reads_nothing, "flag", {}, onnx::TensorProto::BOOL);
  reads_nothing.mutable_graph()->mutable_node(0)->mutable_attribute(0)->mutable_g()->mutable_node(0)->set_input(
      0, "ghost");
  absl::StatusOr<OnnxImportResult> r = Import(reads_nothing);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("'ghost'"));

  onnx::ModelProto wrong_arity = LoopModel("three");
  AddScalar(*wrong_arity.mutable_graph(), "three", 3);
  wrong_arity.mutable_graph()->mutable_node(0)->mutable_output()->RemoveLast();  // the scan output
  wrong_arity.mutable_graph()->mutable_output()->RemoveLast();
  r = Import(wrong_arity);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("Loop 'loop' is malformed"));
}

TEST(OnnxControlFlow, AnAbsurdExpansionIsRefusedNotAttempted) {
  // Loops nested three deep, each of 1,000 iterations, unroll to a billion nodes.
  onnx::ModelProto m = NewModel(17);
  AddInput(m, "x", {4});
  onnx::TensorProto& trips = AddInt64s(m, "k", {1000});
  trips.clear_dims();
  onnx::GraphProto* graph = m.mutable_graph();
  std::string carried = "x";
  for (int depth = 0; depth < 3; ++depth) {
    const std::string d = std::to_string(depth);
    onnx::NodeProto& loop = AddNode(*graph, "Loop", {"k", "", carried}, {"out" + d}, "loop" + d);
    AddOutput(*graph, "out" + d);  // the enclosing body gives it back as its carried value
    onnx::GraphProto& body = AddGraph(loop, "body");
    AddInput(body, "i", {}, onnx::TensorProto::INT64);
    AddInput(body, "c", {}, onnx::TensorProto::BOOL);
    AddInput(body, "v" + d, {4});
    AddNode(body, "Identity", {"c"}, {"c" + d + "_next"});
    AddOutput(body, "c" + d + "_next");
    graph = &body;
    carried = "v" + d;
  }
  AddNode(*graph, "Relu", {carried}, {"r"}, "relu");
  AddOutput(*graph, "r");
  OnnxImportOptions options;
  options.max_nodes = 100000;
  absl::StatusOr<OnnxImportResult> r = Import(m, options);
  // Either the limit on unrolling keeps the inner loops as operators, or the node budget stops the import.
  if (r.ok()) {
    EXPECT_LE(r->problem.graph.num_ops(), options.max_nodes);
  } else {
    EXPECT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted) << r.status().message();
  }
}

}  // namespace
}  // namespace placement
