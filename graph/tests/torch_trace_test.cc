// Profiler traces as measured costs: self times of module calls, GPU kernels credited to the module that
// launched them, scopes of the exporter's node names led back to module calls, and malformed traces refused.
#include "graph/torch_trace.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/costs_input.h"

namespace placement {
namespace {

using ::testing::HasSubstr;

std::string Event(const std::string& name, double ts, double dur, const std::string& extra = "") {
  return absl::StrCat(R"({"ph": "X", "pid": 1, "tid": 1, "name": ")", name, R"(", "ts": )", ts, R"(, "dur": )", dur,
                      extra, "}");
}

// Two profiled steps of a model whose block calls its relu twice; the model's own scope holds a flatten.
std::string TwoStepCpuTrace() {
  std::vector<std::string> events;
  for (int step = 0; step < 2; ++step) {
    const double t = step * 1000.0;
    events.push_back(Event(absl::StrCat("ProfilerStep#", step), t, 900));
    events.push_back(Event("module:#0", t + 10, 800));
    events.push_back(Event("module:block#0", t + 20, 500));
    events.push_back(Event("module:block.conv#0", t + 30, 200 + step * 100));  // 200 then 300: mean 250
    events.push_back(Event("module:block.relu#0", t + 350, 40));
    events.push_back(Event("module:block.relu#1", t + 400, 60));
    events.push_back(Event("aten::relu", t + 401, 50));  // an operator inside a module changes nothing
  }
  return absl::StrCat(R"({"traceEvents": [)", absl::StrJoin(events, ","), "]}");
}

Graph ExportedBlock() {
  GraphBuilder builder;
  const char* names[] = {"/block/conv/Conv", "/block/relu/Relu", "/block/relu_1/Relu",
                         "/Flatten",         "/head/MatMul",     "/head/Add"};
  const double flops[] = {1e9, 1e6, 1e6, 0, 3e6, 1e6};
  std::string previous;
  for (int i = 0; i < 6; ++i) {
    OpSpec op;
    op.name = names[i];
    op.op_type = "Op";
    op.flops = flops[i];
    op.bytes_accessed = 1e5;
    op.outputs.push_back(OutputTensor{.bytes = 1024});
    builder.AddOp(op);
    if (!previous.empty()) builder.AddEdge(previous, 0, names[i]);
    previous = names[i];
  }
  absl::StatusOr<Graph> g = std::move(builder).Build();
  EXPECT_TRUE(g.ok()) << g.status();
  return *std::move(g);
}

TEST(TorchTrace, SelfTimeIsTheRangeLessItsNestedModulesAveragedOverSteps) {
  absl::StatusOr<ModuleTimes> times = ParseTorchTrace(TwoStepCpuTrace());
  ASSERT_TRUE(times.ok()) << times.status();
  EXPECT_EQ(times->steps, 2);
  EXPECT_NEAR(times->step_seconds, 900e-6, 1e-12);
  EXPECT_NEAR(times->self_seconds.at("block.conv#0"), 250e-6, 1e-12);
  EXPECT_NEAR(times->self_seconds.at("block.relu#1"), 60e-6, 1e-12);
  EXPECT_NEAR(times->self_seconds.at("block#0"), (500 - 250 - 40 - 60) * 1e-6, 1e-12);
  EXPECT_NEAR(times->self_seconds.at("#0"), 300e-6, 1e-12);
}

TEST(TorchTrace, BackwardFunctionsAndTheOptimizerAreTimedByFunctionPerStep) {
  std::vector<std::string> events;
  for (int step = 0; step < 2; ++step) {
    const double t = step * 1000.0;
    events.push_back(Event(absl::StrCat("ProfilerStep#", step), t, 900));
    events.push_back(Event("Optimizer.zero_grad#Adam.zero_grad", t + 1, 9));
    events.push_back(Event("module:#0", t + 10, 100));
    events.push_back(Event("module:conv#0", t + 20, 80));
    events.push_back(Event("autograd::engine::evaluate_function: ConvolutionBackward0", t + 200, 150 + step * 50));
    events.push_back(Event("aten::convolution_backward", t + 201, 140));  // inside: changes nothing
    events.push_back(Event("autograd::engine::evaluate_function: ConvolutionBackward0", t + 400, 100));
    events.push_back(Event("autograd::engine::evaluate_function: torch::autograd::AccumulateGrad", t + 510, 20));
    events.push_back(Event("Optimizer.step#Adam.step", t + 600, 200));
  }
  absl::StatusOr<ModuleTimes> times =
      ParseTorchTrace(absl::StrCat(R"({"traceEvents": [)", absl::StrJoin(events, ","), "]}"));
  ASSERT_TRUE(times.ok()) << times.status();
  EXPECT_NEAR(times->backward_seconds.at("ConvolutionBackward0"), (175 + 100) * 1e-6, 1e-12);  // both calls, mean
  EXPECT_NEAR(times->backward_seconds.at("torch::autograd::AccumulateGrad"), 20e-6, 1e-12);
  EXPECT_NEAR(times->optimizer_seconds, 209e-6, 1e-12);
  EXPECT_NEAR(times->self_seconds.at("conv#0"), 80e-6, 1e-12);
  EXPECT_EQ(times->self_seconds.size(), 2u);  // the modules alone
}

TEST(TorchTrace, ExporterScopesLeadBackToModuleCalls) {
  absl::StatusOr<ModuleTimes> times = ParseTorchTrace(TwoStepCpuTrace());
  ASSERT_TRUE(times.ok()) << times.status();
  std::vector<std::string> warnings;
  const MeasuredCosts costs = MatchModuleTimes(ExportedBlock(), *times, "cpu", &warnings);
  EXPECT_NEAR(costs.times.at("/block/relu/Relu")[0].second, 40e-6, 1e-12);
  EXPECT_NEAR(costs.times.at("/block/relu_1/Relu")[0].second, 60e-6, 1e-12);  // the second call
  EXPECT_NEAR(costs.times.at("/Flatten")[0].second, 300e-6, 1e-12);           // the model's own scope
  EXPECT_EQ(costs.times.at("/block/conv/Conv")[0].first, "cpu");
  // "head" has no range: its operators stay with the model, and the answer says so.
  EXPECT_EQ(costs.times.count("/head/MatMul"), 0u);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_THAT(warnings[0], HasSubstr("2 operators have no module in the trace"));
  EXPECT_THAT(warnings[0], HasSubstr("/head/MatMul"));
}

TEST(TorchTrace, AModuleWithSeveralOperatorsSharesItsTimeByFlops) {
  const std::string trace = absl::StrCat("[", Event("module:#0", 0, 100), ",", Event("module:head#0", 10, 80), "]");
  absl::StatusOr<ModuleTimes> times = ParseTorchTrace(trace);
  ASSERT_TRUE(times.ok()) << times.status();
  EXPECT_EQ(times->steps, 1);
  std::vector<std::string> warnings;
  const MeasuredCosts costs = MatchModuleTimes(ExportedBlock(), *times, "*", &warnings);
  EXPECT_NEAR(costs.times.at("/head/MatMul")[0].second, 60e-6, 1e-12);
  EXPECT_NEAR(costs.times.at("/head/Add")[0].second, 20e-6, 1e-12);
}

TEST(TorchTrace, GpuKernelsCountForTheModuleThatLaunchedThem) {
  const std::vector<std::string> events = {
      Event("ProfilerStep#3", 0, 1000),
      Event("module:#0", 1, 900),
      Event("module:block.conv#0", 10, 100),
      R"({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 20, "dur": 5,)"
      R"( "args": {"correlation": 7}})",
      R"({"ph": "X", "cat": "kernel", "name": "implicit_gemm", "pid": 0, "tid": 7, "ts": 400, "dur": 3000,)"
      R"( "args": {"correlation": 7}})",
      R"({"ph": "X", "cat": "Runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 300, "dur": 5,)"
      R"( "args": {"correlation": 8}})",
      R"({"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy DtoD", "pid": 0, "tid": 7, "ts": 3500, "dur": 40,)"
      R"( "args": {"correlation": 8}})",
  };
  absl::StatusOr<ModuleTimes> times = ParseTorchTrace(absl::StrCat("[", absl::StrJoin(events, ","), "]"));
  ASSERT_TRUE(times.ok()) << times.status();
  // Device time, not the host's 100 us of queueing: the conv's kernel ran 3 ms.
  EXPECT_NEAR(times->self_seconds.at("block.conv#0"), 3000e-6, 1e-12);
  EXPECT_NEAR(times->self_seconds.at("#0"), 40e-6, 1e-12);
}

TEST(TorchTrace, MalformedTracesAreRefusedWithTheEvent) {
  const std::pair<std::string, const char*> cases[] = {
      {R"({"traceEvents": 3})", "no array of events"},
      {R"([{"ph": "X", "name": "module:#0", "ts": 1}])", "trace event 0: a complete event needs a name, ts and dur"},
      {absl::StrCat("[", Event("module:#0", 0, 1), ",", Event("module:a#0", 0, -4), "]"),
       "trace event 1 ('module:a#0'): negative duration"},
      {absl::StrCat("[", Event("aten::mm", 0, 1), "]"), "no \"module:\" range"},
      {R"([{"ph": "X", "name": "module:#0", "ts": 1, "dur": 2})", "not valid JSON"},
  };
  for (const auto& [text, message] : cases) {
    ASSERT_TRUE(LooksLikeTorchTrace(text)) << text;
    absl::StatusOr<ModuleTimes> parsed = ParseTorchTrace(text);
    ASSERT_FALSE(parsed.ok()) << text;
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(parsed.status().message(), HasSubstr(message)) << text;
  }
}

TEST(CostsInput, TellsTracesFromCostsFilesByTheirContent) {
  absl::StatusOr<CostsInput> trace = ParseCostsInput(TwoStepCpuTrace(), "");
  ASSERT_TRUE(trace.ok()) << trace.status();
  EXPECT_TRUE(trace->trace.has_value());
  EXPECT_EQ(trace->trace_kind, "*");
  absl::StatusOr<CostsInput> file = ParseCostsInput(R"({"/head/Add": {"cpu": 0.001}})", "cpu");
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_FALSE(file->trace.has_value());
  EXPECT_EQ(file->times.times.size(), 1u);
}

TEST(CostsInput, NamedTimesWinOverTheTraceAndBothAreCounted) {
  absl::StatusOr<CostsInput> input = ParseCostsInput(TwoStepCpuTrace(), "cpu");
  ASSERT_TRUE(input.ok()) << input.status();
  input->times.times["/head/MatMul"] = {{"cpu", 0.5}};
  input->times.times["/block/relu/Relu"] = {{"cpu", 0.25}};
  CostSources sources;
  absl::StatusOr<Graph> graph = PrepareGraph(ExportedBlock(), &*input, nullptr, &sources);
  ASSERT_TRUE(graph.ok()) << graph.status();
  EXPECT_EQ(sources.measured_ops, 5);
  EXPECT_EQ(sources.modelled_ops, 1);
  const OpId relu = graph->FindOp("/block/relu/Relu");
  ASSERT_EQ(graph->measured(relu).size(), 1u);
  EXPECT_DOUBLE_EQ(graph->measured(relu)[0].seconds, 0.25);
}

}  // namespace
}  // namespace placement
