#include "graph/training.h"

#include <chrono>
#include <cmath>
#include <limits>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "graph/canonical.h"
#include "graph/cost_model.h"
#include "graph/tests/graph_test_util.h"
#include "graph/topology_json.h"

namespace placement {
namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAddressSanitized = true;
#elif defined(__has_feature)
constexpr bool kAddressSanitized = __has_feature(address_sanitizer);
#else
constexpr bool kAddressSanitized = false;
#endif

using ::testing::HasSubstr;

OpSpec Op(std::string name, double flops, int64_t param_bytes, std::vector<int64_t> outputs = {1000}) {
  OpSpec op;
  op.name = std::move(name);
  op.op_type = "Kernel";  // a type the saved-tensor table does not name: its backward keeps every input and output
  op.flops = flops;
  op.bytes_accessed = flops / 10;
  op.param_bytes = param_bytes;
  op.temp_bytes = 64;
  for (int64_t b : outputs) op.outputs.push_back(OutputTensor{b, -1});
  return op;
}

Graph Build(GraphBuilder&& b) { return testing::BuildOrFail(std::move(b)); }

Graph Training(const Graph& forward, const TrainingOptions& options = {}) {
  absl::StatusOr<Graph> t = BuildTrainingGraph(forward, options);
  EXPECT_TRUE(t.ok()) << t.status();
  return *std::move(t);
}

// The edge src:src_output -> dst, or nullptr.
const Edge* FindEdge(const Graph& g, absl::string_view src, int32_t src_output, absl::string_view dst) {
  const OpId s = g.FindOp(src), d = g.FindOp(dst);
  if (s == kNone || d == kNone) return nullptr;
  for (const Edge& e : g.out_edges(s)) {
    if (e.src_output == src_output && e.dst == d) return &e;
  }
  return nullptr;
}

// x -> a -> b, with a second output of a (a:1 -> b) and a parameter-free x.
//   x (no params), a (params, two outputs), b (params)
Graph Small() {
  GraphBuilder b;
  b.AddOp(Op("x", 100, 0, {400}));
  b.AddOp(Op("a", 1000, 4000, {300, 50}));
  b.AddOp(Op("b", 2000, 8000, {20}));
  b.AddEdge("x", 0, "a");
  b.AddEdge("a", 0, "b");
  b.AddEdge("a", 1, "b", 40);
  return Build(std::move(b));
}

TEST(Training, SizeFollowsTheFormula) {
  const Graph f = Small();
  const Graph t = Training(f);
  // n = 3, E = 3, W = {a, b}; x needs no gradient (no parameters, no inputs), so its backward reads only the
  // gradient of its use, r(x) = 1; a keeps its 2 outputs and 1 input and gets 2 gradients, r(a) = 5; b keeps its
  // output (a graph output) and 2 inputs, r(b) = 3.
  // ops = 2n + 2|W| = 10; edges = E + |W| + r(x) + 2 r(a) + 2 r(b) = 3 + 2 + 1 + 10 + 6.
  EXPECT_EQ(t.num_ops(), 10);
  EXPECT_EQ(t.num_edges(), 22);
  const TrainingGraphSize size = TrainingGraphSizeOf(f);
  EXPECT_EQ(size.ops, t.num_ops());
  EXPECT_EQ(size.edges, t.num_edges());

  TrainingOptions no_weights;
  no_weights.include_weight_gradients = false;
  const Graph t2 = Training(f, no_weights);
  EXPECT_EQ(t2.num_ops(), 6);
  EXPECT_EQ(t2.num_edges(), 12);
  EXPECT_EQ(TrainingGraphSizeOf(f, no_weights).edges, 12);
}

TEST(Training, ForwardOperatorsKeepTheirIdsAndFields) {
  const Graph f = Small();
  const Graph t = Training(f);
  for (OpId u = 0; u < f.num_ops(); ++u) {
    EXPECT_EQ(t.name(u), f.name(u));
    EXPECT_EQ(t.flops(u), f.flops(u));
    EXPECT_EQ(t.param_bytes(u), f.param_bytes(u));
    EXPECT_FALSE(t.is_backward(u));
  }
  // Backward operators in reverse topological order of the forward ones, as autograd runs them.
  EXPECT_EQ(t.name(3), "b/grad");
  EXPECT_EQ(t.name(4), "b/wgrad");
  EXPECT_EQ(t.name(5), "b/update");
  EXPECT_EQ(t.name(6), "a/grad");
  EXPECT_EQ(t.name(7), "a/wgrad");
  EXPECT_EQ(t.name(8), "a/update");
  EXPECT_EQ(t.name(9), "x/grad");
  for (absl::string_view name : {"x/grad", "a/grad", "a/wgrad", "a/update", "b/grad", "b/wgrad", "b/update"}) {
    ASSERT_NE(t.FindOp(name), kNone) << name;
    EXPECT_TRUE(t.is_backward(t.FindOp(name))) << name;
  }
  EXPECT_EQ(t.FindOp("x/wgrad"), kNone);  // no parameters, no weight gradient
  EXPECT_EQ(t.op_type(t.FindOp("a/grad")), "KernelGrad");
  EXPECT_EQ(t.op_type(t.FindOp("a/wgrad")), "KernelWeightGrad");
  EXPECT_EQ(t.op_type(t.FindOp("a/update")), "ApplyAdam");
}

TEST(Training, EdgesFollowReverseModeDataflow) {
  const Graph t = Training(Small());
  // Forward edges stay.
  EXPECT_NE(FindEdge(t, "x", 0, "a"), nullptr);
  // Saved activations: of a type the table does not name, every output and input of u feed u/grad (and u/wgrad).
  EXPECT_NE(FindEdge(t, "a", 0, "a/grad"), nullptr);
  EXPECT_NE(FindEdge(t, "a", 1, "a/grad"), nullptr);
  EXPECT_NE(FindEdge(t, "x", 0, "a/grad"), nullptr);
  EXPECT_NE(FindEdge(t, "x", 0, "a/wgrad"), nullptr);
  EXPECT_NE(FindEdge(t, "b", 0, "b/grad"), nullptr);
  ASSERT_NE(FindEdge(t, "a", 1, "b/grad"), nullptr);
  EXPECT_EQ(FindEdge(t, "a", 1, "b/grad")->bytes, 40);  // the forward edge's bytes
  // Gradients flow back: b's in-edges are (a:0, a:1), so b/grad has outputs 300 and 40 bytes feeding a/grad.
  const OpId bg = t.FindOp("b/grad");
  ASSERT_EQ(t.num_outputs(bg), 2);
  EXPECT_EQ(t.tensor(t.first_output(bg)).bytes, 300);
  EXPECT_EQ(t.tensor(t.first_output(bg) + 1).bytes, 40);
  EXPECT_NE(FindEdge(t, "b/grad", 0, "a/grad"), nullptr);
  EXPECT_NE(FindEdge(t, "b/grad", 1, "a/grad"), nullptr);
  EXPECT_NE(FindEdge(t, "b/grad", 0, "a/wgrad"), nullptr);
  EXPECT_NE(FindEdge(t, "b/grad", 1, "a/wgrad"), nullptr);
  EXPECT_NE(FindEdge(t, "a/grad", 0, "x/grad"), nullptr);
  EXPECT_EQ(t.tensor(t.first_output(t.FindOp("a/grad"))).bytes, 0);  // x needs no gradient
  EXPECT_EQ(FindEdge(t, "x", 0, "x/grad"), nullptr);                // nor keeps anything for one
  EXPECT_EQ(t.num_outputs(t.FindOp("x/grad")), 0);  // x has no inputs
  // Weight gradients feed the update, which has no output.
  const OpId wg = t.FindOp("a/wgrad");
  ASSERT_EQ(t.num_outputs(wg), 1);
  EXPECT_EQ(t.tensor(t.first_output(wg)).bytes, 4000);
  EXPECT_NE(FindEdge(t, "a/wgrad", 0, "a/update"), nullptr);
  EXPECT_EQ(t.num_outputs(t.FindOp("a/update")), 0);
  // Backward runs after forward: every backward operator comes later in the topological order.
  EXPECT_GT(t.topo_rank(t.FindOp("x/grad")), t.topo_rank(t.FindOp("b")));
  EXPECT_GT(t.topo_rank(t.FindOp("a/grad")), t.topo_rank(t.FindOp("b/grad")));
}

// a -> b -> c, b's time measured on a V100.
Graph Chain(OpSpec a, OpSpec b, OpSpec c) {
  b.measured_seconds = {{"V100", 2e-3}};
  GraphBuilder builder;
  builder.AddEdge(a.name, 0, b.name);
  builder.AddEdge(b.name, 0, c.name);
  for (OpSpec* op : {&a, &b, &c}) builder.AddOp(std::move(*op));
  return Build(std::move(builder));
}

TEST(Training, BackwardCostsMultiplierTimesForward) {
  // w holds parameters: what it writes needs a gradient.
  const Graph f = Chain(Op("w", 1e6, 400), Op("m", 1e9, 4000), Op("r", 1e6, 0));
  TrainingOptions options;
  options.backward_multiplier = 3;
  const Graph t = Training(f, options);
  // With a weight gradient the work is split evenly between grad and wgrad.
  for (absl::string_view name : {"m/grad", "m/wgrad"}) {
    const OpId u = t.FindOp(name);
    EXPECT_DOUBLE_EQ(t.flops(u), 1.5e9) << name;
    EXPECT_DOUBLE_EQ(t.bytes_accessed(u), 1.5e8) << name;
    ASSERT_EQ(t.measured(u).size(), 1u);
    EXPECT_DOUBLE_EQ(t.measured(u)[0].seconds, 3e-3) << name;
    EXPECT_EQ(t.temp_bytes(u), 64);
  }
  EXPECT_DOUBLE_EQ(t.flops(t.FindOp("r/grad")), 3e6);  // no parameters: all of it in grad
  double forward = 0, backward = 0;
  for (OpId u = 0; u < t.num_ops(); ++u) {
    if (t.op_type(u) == "ApplyAdam") continue;
    (t.is_backward(u) ? backward : forward) += t.flops(u);
  }
  // w reads no input that needs a gradient: its backward is its weight gradient only, half of its share.
  EXPECT_DOUBLE_EQ(t.flops(t.FindOp("w/grad")), 0);
  EXPECT_DOUBLE_EQ(backward, 3 * forward - 1.5e6);

  options.include_weight_gradients = false;
  const Graph folded = Training(f, options);
  EXPECT_DOUBLE_EQ(folded.flops(folded.FindOp("m/grad")), 3e9);
  EXPECT_DOUBLE_EQ(folded.measured(folded.FindOp("m/grad"))[0].seconds, 6e-3);
}

TEST(Training, TheFirstLayerComputesNoGradientForTheDataItReads) {
  OpSpec data = Op("data", 0, 0);
  data.op_type = "Input";
  const Graph t = Training(Chain(std::move(data), Op("stem", 1e9, 4000), Op("next", 1e9, 4000)), {});
  // As autograd runs it: the first convolution's backward computes its weight gradient, not the data's gradient.
  const OpId stem_grad = t.FindOp("stem/grad");
  EXPECT_EQ(t.flops(stem_grad), 0);
  EXPECT_EQ(t.bytes_accessed(stem_grad), 0);
  ASSERT_EQ(t.measured(stem_grad).size(), 1u);
  EXPECT_EQ(t.measured(stem_grad)[0].seconds, 0);
  EXPECT_EQ(t.flops(t.FindOp("stem/wgrad")), 1e9);
  EXPECT_EQ(t.flops(t.FindOp("next/grad")), 1e9);  // the stem's output needs one
  absl::StatusOr<Topology> topology = ParseTopologyShorthand("1xV100");
  ASSERT_TRUE(topology.ok()) << topology.status();
  absl::StatusOr<CostModel> costs = CostModel::Create(t, *topology);
  ASSERT_TRUE(costs.ok()) << costs.status();
  EXPECT_EQ(costs->op_time(stem_grad, 0), 0);  // no kernel: not even a launch
  EXPECT_GT(costs->op_time(t.FindOp("next/grad"), 0), 0);
}

TEST(Training, OptimizerStateAndUpdateCost) {
  const Graph f = Small();  // 12,000 parameter bytes: 3,000 fp32 parameters
  struct Case {
    Optimizer optimizer;
    int copies;
    double flops_per_param;
  };
  for (const Case& c : {Case{Optimizer::kSgd, 0, 2}, Case{Optimizer::kMomentum, 1, 4}, Case{Optimizer::kAdam, 2, 10}}) {
    TrainingOptions options;
    options.optimizer = c.optimizer;
    const Graph t = Training(f, options);
    EXPECT_EQ(t.total_param_bytes(), f.total_param_bytes() * (1 + c.copies)) << OptimizerName(c.optimizer);
    const OpId update = t.FindOp("b/update");
    EXPECT_EQ(t.param_bytes(update), 8000 * c.copies);
    EXPECT_DOUBLE_EQ(t.flops(update), c.flops_per_param * 2000);
    EXPECT_DOUBLE_EQ(t.bytes_accessed(update), (3 + 2 * c.copies) * 8000.0);
    EXPECT_TRUE(t.measured(update).empty());
  }
  EXPECT_EQ(*ParseOptimizer("Adam"), Optimizer::kAdam);
  EXPECT_EQ(*ParseOptimizer("momentum"), Optimizer::kMomentum);
  EXPECT_EQ(OptimizerName(Optimizer::kSgd), "sgd");
  EXPECT_THAT(ParseOptimizer("lbfgs").status().message(), HasSubstr("unknown optimizer 'lbfgs'"));
}

TEST(Training, BackwardOperatorsLiveWithTheirForwardOperator) {
  GraphBuilder b;
  OpSpec a = Op("a", 1, 4);
  a.colocation_group = "stage0";
  a.pinned_device = "gpu3";
  b.AddOp(a);
  b.AddOp(Op("b", 1, 4));
  OpSpec c = Op("c", 1, 0);
  c.colocation_group = "b";  // an existing group that has the name of another operator
  b.AddOp(c);
  b.AddEdge("a", 0, "b");
  b.AddEdge("b", 0, "c");
  const Graph t = Training(Build(std::move(b)));
  const auto group = [&t](absl::string_view op) {
    const int32_t gi = t.colocation_group(t.FindOp(op));
    return gi == kNone ? std::string("<none>") : t.colocation_groups()[gi];
  };
  for (absl::string_view op : {"a", "a/grad", "a/wgrad", "a/update"}) {
    EXPECT_EQ(group(op), "stage0") << op;
    EXPECT_EQ(t.pinned_devices()[t.pinned(t.FindOp(op))], "gpu3") << op;
  }
  for (absl::string_view op : {"b", "b/grad", "b/wgrad", "b/update"}) EXPECT_EQ(group(op), "b#2") << op;
  EXPECT_EQ(group("c"), "b");
  EXPECT_EQ(group("c/grad"), "b");
  EXPECT_EQ(t.pinned(t.FindOp("b/grad")), kNone);
}

TEST(Training, RejectsWhatIsNotAForwardGraph) {
  GraphBuilder b;
  b.AddOp(Op("a", 1, 0));
  OpSpec back = Op("a_backward", 1, 0);
  back.is_backward = true;
  b.AddOp(back);
  b.AddEdge("a", 0, "a_backward");
  EXPECT_THAT(BuildTrainingGraph(Build(std::move(b))).status().message(),
              HasSubstr("operator 'a_backward' is already a backward operator"));

  GraphBuilder clash;
  clash.AddOp(Op("a", 1, 4));
  clash.AddOp(Op("a/update", 1, 0));
  EXPECT_THAT(BuildTrainingGraph(Build(std::move(clash))).status().message(),
              HasSubstr("operator 'a/update' has the name of a backward operator of 'a'"));

  GraphBuilder one;
  one.AddOp(Op("a", 1, 0));
  const Graph g = Build(std::move(one));
  for (double m : {-1.0, std::numeric_limits<double>::infinity(), std::nan("")}) {
    TrainingOptions options;
    options.backward_multiplier = m;
    EXPECT_THAT(BuildTrainingGraph(g, options).status().message(), HasSubstr("backward_multiplier must be finite"));
  }
}

TEST(Training, AutogradSumsTheGradientsOfATensorReadByEveryKernelPastTheFirst) {
  // a's output (1000 bytes, requiring a gradient) is read by b, c, and a SiLU spelled as Sigmoid and Mul: three
  // kernels, so autograd adds three gradients with two kernels before a's backward. The data x is read twice
  // but requires no gradient: nothing is summed for it.
  GraphBuilder b;
  b.AddOp(Op("x", 100, 0, {400}));
  b.AddOp(Op("a", 1000, 4000));
  b.AddOp(Op("b", 1000, 4000));
  b.AddOp(Op("c", 1000, 4000));
  OpSpec sigmoid = Op("s", 10, 0), mul = Op("m", 10, 0);
  sigmoid.op_type = "Sigmoid";
  mul.op_type = "Mul";
  b.AddOp(sigmoid);
  b.AddOp(mul);
  b.AddOp(Op("d", 10, 0));
  b.AddEdge("x", 0, "a");
  b.AddEdge("x", 0, "b");
  for (absl::string_view reader : {"b", "c", "s", "m"}) b.AddEdge("a", 0, reader);
  b.AddEdge("s", 0, "m");
  for (absl::string_view joined : {"b", "c", "m"}) b.AddEdge(joined, 0, "d");
  const Graph t = Training(Build(std::move(b)));
  const ExtraKernels& sums = t.extra_kernels(t.FindOp("a/grad"));
  EXPECT_EQ(sums.kernels, 2);
  EXPECT_DOUBLE_EQ(sums.bytes, 2 * 3 * 1000.0);
  // d's output is read by nothing; b's and c's by one kernel each; x requires no gradient.
  for (absl::string_view op : {"d/grad", "b/grad", "c/grad", "x/grad"}) {
    const OpId grad = t.FindOp(op);
    if (grad != kNone) EXPECT_EQ(t.extra_kernels(grad).kernels, 0) << op;
  }
}

TEST(Training, IsDeterministic) {
  const Graph f = Small();
  EXPECT_EQ(GraphHash(Training(f)), GraphHash(Training(f)));
}

TEST(Training, ExpandsALongChainInLinearTime) {
  constexpr int kOps = 20000;
  GraphBuilder b;
  for (int i = 0; i < kOps; ++i) {
    b.AddOp(Op(absl::StrCat("layer", i), 1e9, i % 2 == 0 ? 4096 : 0, {1 << 16}));
    if (i > 0) b.AddEdge(i - 1, 0, i);
  }
  const Graph f = Build(std::move(b));
  const auto start = std::chrono::steady_clock::now();
  const Graph t = Training(f);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // Chain: E = n - 1, O = n, |W| = n / 2 with in + out = 2 apart from the first, so the sums follow.
  const TrainingGraphSize size = TrainingGraphSizeOf(f);
  EXPECT_EQ(t.num_ops(), 2 * kOps + 2 * (kOps / 2));
  EXPECT_EQ(size.ops, t.num_ops());
  EXPECT_EQ(size.edges, t.num_edges());
  EXPECT_EQ(t.num_edges(), 3 * (kOps - 1) + kOps + (kOps / 2) * (1 + 2 + 1) - 1);
  // A guard against a quadratic pass (minutes at this size), not a speed target; generous for a loaded or
  // instrumented build.
  EXPECT_LT(seconds, kAddressSanitized ? 120.0 : 20.0);
}

}  // namespace
}  // namespace placement
