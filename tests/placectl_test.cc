// placectl end to end: the real binary, real files, exit codes and messages as a user sees them.
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <chrono>
#include <thread>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "graph/onnx/tests/test_models.h"
#include "tests/placectl_run.h"

namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

using Result = placement::testing::PlacectlResult;
using placement::testing::RunPlacectl;

const std::string kSource = PLACEMENT_SOURCE_DIR;
const std::string kTiny = kSource + "/examples/graphs/tiny_pipeline.json";
const std::string kTinySplit = kSource + "/examples/placements/tiny_pipeline_split.json";

TEST(Placectl, SimulateThroughputPrintsJsonWithTheHandComputedMaxLoad) {
  Result r =
      RunPlacectl("simulate " + kTiny + " --placement " + kTinySplit + " --objective throughput --local --output json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["objective"], "throughput");
  // acc0: 0.8+1.6+2.4+2.4+1.2 compute, sends layer 5 (0.3) and layer 3 (0.4) once each = 9.1.
  EXPECT_NEAR(j["value"].get<double>(), 9.1, 1e-9);
  EXPECT_NEAR(j["devices"][0]["load"].get<double>(), 9.1, 1e-9);
  // acc1: 3.2+2.8+1.0+0.6+0.2 compute, receives both = 8.5.
  EXPECT_NEAR(j["devices"][1]["load"].get<double>(), 8.5, 1e-9);
  EXPECT_GT(j["lower_bound"].get<double>(), 0);
  EXPECT_NEAR(j["ratio"].get<double>(), j["value"].get<double>() / j["lower_bound"].get<double>(), 1e-9);
  EXPECT_EQ(j["assignment"]["7"], "acc1");
  EXPECT_EQ(j["assignment"].size(), 10u);
  EXPECT_TRUE(j["fits_memory"].get<bool>());
  EXPECT_EQ(j["time_unit"], "input");
}

TEST(Placectl, SimulateStepTimePrintsATable) {
  Result r = RunPlacectl("simulate " + kTiny + " --placement " + kTinySplit + " --local");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("step_time"));
  EXPECT_THAT(r.out, HasSubstr("acc0"));
  EXPECT_THAT(r.out, HasSubstr("lower bound"));
}

TEST(Placectl, JsonOutputIsAValidPlacementFile) {
  Result first =
      RunPlacectl("simulate " + kTiny + " --placement " + kTinySplit + " --objective throughput --output json");
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const fs::path again = fs::temp_directory_path() / ("placectl_again_" + std::to_string(::getpid()) + ".json");
  std::ofstream(again) << first.out;
  Result second =
      RunPlacectl("simulate " + kTiny + " --placement " + again.string() + " --objective throughput --output json");
  fs::remove(again);
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_EQ(nlohmann::json::parse(first.out)["value"], nlohmann::json::parse(second.out)["value"]);
}

TEST(Placectl, MissingGraphFileIsABadInputNamingThePath) {
  Result r = RunPlacectl("simulate /nonexistent/graph.json --placement " + kTinySplit);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_THAT(r.err, HasSubstr("/nonexistent/graph.json"));
  EXPECT_TRUE(r.out.empty());
}

TEST(Placectl, PlacementThatMissesAnOperatorIsABadInput) {
  const fs::path bad = fs::temp_directory_path() / ("placectl_bad_" + std::to_string(::getpid()) + ".json");
  std::ofstream(bad) << R"({"assignment": {"1": "acc0"}})";
  Result r = RunPlacectl("simulate " + kTiny + " --placement " + bad.string());
  fs::remove(bad);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_THAT(r.err, HasSubstr("does not assign operator"));
}

TEST(Placectl, UsageErrors) {
  EXPECT_EQ(RunPlacectl("").exit_code, 2);
  EXPECT_EQ(RunPlacectl("frobnicate").exit_code, 2);
  EXPECT_EQ(RunPlacectl("simulate").exit_code, 2);
  Result r = RunPlacectl("simulate " + kTiny + " --placement " + kTinySplit + " --objective fastest");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr("fastest"));
  r = RunPlacectl("simulate " + kTiny + " --placement " + kTinySplit + " --output yaml");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr("yaml"));
}

TEST(Placectl, ForeignTopologyIsRejectedNamingTheOperatorAndKinds) {
  Result r = RunPlacectl("simulate " + kTiny + " --placement " + kTinySplit + " --devices 4xA100");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_THAT(r.err, HasSubstr("measured times only for device kind"));
}

TEST(Placectl, PublishedExpertSplitOfGnmtTraining) {
  const fs::path root = fs::path(PLACEMENT_SHARED_DIR) / "bench" / "tarnawski";
  if (!fs::exists(root)) GTEST_SKIP() << "shared inputs not found at " << root << "; skipping";
  Result r = RunPlacectl("simulate " + (root / "throughput-inputs/LayerGraphs/gnmt_training.json").string() +
                         " --placement " + (root / "human-experts/gnmt_training_expert.json").string() +
                         " --objective throughput --output json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NEAR(nlohmann::json::parse(r.out)["value"].get<double>(), 137.15, 0.005);
}

// Writes a placement putting every operator of a placement.graph/v1 graph on one device.
fs::path AllOnOneDevice(const std::string& graph_json, const std::string& device, const std::string& tag) {
  nlohmann::json graph = nlohmann::json::parse(graph_json);
  nlohmann::json placement;
  for (const auto& op : graph["operators"]) placement["assignment"][op["name"].get<std::string>()] = device;
  const fs::path path = fs::temp_directory_path() / ("placectl_" + tag + "_" + std::to_string(::getpid()) + ".json");
  std::ofstream(path) << placement.dump();
  return path;
}

TEST(Placectl, OnnxModelImportsAndItsTrainingStepSimulates) {
  const std::string model = kSource + "/tests/data/corpus/resnet50.onnx";
  Result imported = RunPlacectl("import " + model + " --training --batch 8");
  ASSERT_EQ(imported.exit_code, 0) << imported.err;
  const nlohmann::json graph = nlohmann::json::parse(imported.out);
  EXPECT_EQ(graph["format"], "placement.graph/v1");
  const fs::path placement = AllOnOneDevice(imported.out, "gpu0", "resnet");
  Result r = RunPlacectl("simulate " + model + " --training --batch 8 --devices 2xV100 --placement " +
                         placement.string() + " --output json");
  fs::remove(placement);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_GT(j["value"].get<double>(), 0);
  EXPECT_EQ(j["assignment"].size(), graph["operators"].size());
  EXPECT_GE(j["ratio"].get<double>(), 1.0 - 1e-9);
  // The training step holds the weights three times over with Adam, plus activations.
  EXPECT_GT(j["devices"][0]["peak_memory"].get<double>(), 3 * 25e6 * 4);
}

TEST(Placectl, PipelineStagesOfAPyTorchExportAreNamedByModule) {
  const std::string model = kSource + "/tests/data/torch_trace/resnet18_b1.onnx";
  const std::string plan =
      "place " + model + " --devices 4xV100 --training --objective throughput --parallelism pipeline";
  Result json = RunPlacectl(plan + " --output json");
  Result table = RunPlacectl(plan);
  ASSERT_EQ(json.exit_code, 0) << json.err;
  ASSERT_EQ(table.exit_code, 0) << table.err;
  const nlohmann::json j = nlohmann::json::parse(json.out);
  ASSERT_GE(j["stages"].size(), 2u);
  std::set<std::string> seen;
  for (const nlohmann::json& stage : j["stages"]) {
    ASSERT_FALSE(stage["modules"].empty()) << stage.dump();
    for (const nlohmann::json& m : stage["modules"]) EXPECT_TRUE(seen.insert(m.get<std::string>()).second) << m;
  }
  // The model runs conv1 first and fc last: the pipeline's outer boundaries.
  EXPECT_EQ(j["stages"].front()["modules"].front(), "conv1");
  EXPECT_EQ(j["stages"].back()["modules"].back(), "fc");
  EXPECT_THAT(table.out, HasSubstr("modules"));
  EXPECT_THAT(table.out, HasSubstr("conv1 .. "));
}

// NonZeroModel() in a file: the count of hits is the data's to say.
fs::path DataDependentModel() {
  const fs::path path = fs::temp_directory_path() / ("placectl_hits_" + std::to_string(getpid()) + ".onnx");
  std::ofstream(path, std::ios::binary) << placement::onnx_testing::Serialize(placement::onnx_testing::NonZeroModel());
  return path;
}

int64_t OutputBytes(const nlohmann::json& graph, const std::string& op) {
  for (const nlohmann::json& o : graph["operators"]) {
    if (o["name"] == op) return o["outputs"][0]["bytes"].get<int64_t>();
  }
  return -1;
}

TEST(Placectl, OnnxAssumptionsAreNamedAndEveryDimGivenIsUsed) {
  const fs::path model = DataDependentModel();
  Result assumed = RunPlacectl("import " + model.string());
  Result given = RunPlacectl("import " + model.string() + " --dim hits:1=7 --dim batch=3");
  Result bad = RunPlacectl("import " + model.string() + " --dim hits");
  fs::remove(model);
  ASSERT_EQ(assumed.exit_code, 0) << assumed.err;
  EXPECT_THAT(assumed.err, HasSubstr("tensor 'hits' dimension 1 depends on the data"));
  EXPECT_THAT(assumed.err, HasSubstr("--dim 'hits:1=VALUE'"));
  EXPECT_EQ(OutputBytes(nlohmann::json::parse(assumed.out), "nonzero"), 2 * 100 * 8);
  ASSERT_EQ(given.exit_code, 0) << given.err;
  EXPECT_THAT(given.err, ::testing::Not(HasSubstr("depends on the data")));
  const nlohmann::json graph = nlohmann::json::parse(given.out);
  EXPECT_EQ(OutputBytes(graph, "nonzero"), 2 * 7 * 8);
  EXPECT_EQ(OutputBytes(graph, "mask"), 3 * 100);  // batch 3, one byte a bool
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.err, HasSubstr("--dim 'hits' is not NAME=VALUE"));
}

TEST(Placectl, MeasuredCostsReplaceTheModelAndTheAnswerSaysHowMany) {
  const std::string model = kSource + "/tests/data/corpus/vgg16.onnx";
  const fs::path costs = fs::temp_directory_path() / ("placectl_costs_" + std::to_string(getpid()) + ".csv");
  std::ofstream(costs) << "operator,device_kind,seconds\n/features/features.0/Conv,*,0.5\n"
                          "/classifier/classifier.0/Gemm,A100,250ms\nnot_there,*,1\n";
  const fs::path bad = fs::temp_directory_path() / ("placectl_costs_bad_" + std::to_string(getpid()) + ".csv");
  std::ofstream(bad) << "a,A100,1\nb,A100\n";
  const std::string place = "place " + model + " --devices 1xA100 --algorithm single_device --output json --costs ";
  Result measured = RunPlacectl(place + costs.string());
  Result training = RunPlacectl(place + costs.string() + " --training");
  Result broken = RunPlacectl(place + bad.string());
  fs::remove(costs);
  fs::remove(bad);
  ASSERT_EQ(measured.exit_code, 0) << measured.err;
  const nlohmann::json j = nlohmann::json::parse(measured.out);
  EXPECT_EQ(j["cost_sources"]["measured_operators"], 2);
  EXPECT_EQ(j["cost_sources"]["modelled_operators"], 36);
  // The two measured operators alone take 750 ms; the modelled rest is well under a millisecond on an A100.
  EXPECT_NEAR(j["value"].get<double>(), 0.75, 0.01);
  EXPECT_THAT(j["warnings"].dump(), HasSubstr("not_there"));
  // A training step derives its backward operators from the measured forward times (twice them by default), but
  // the first convolution reads the images, which need no gradient: its backward is its weight gradient alone.
  ASSERT_EQ(training.exit_code, 0) << training.err;
  EXPECT_NEAR(nlohmann::json::parse(training.out)["value"].get<double>(), 0.75 + 0.5 + 2 * 0.25, 0.05);
  EXPECT_EQ(broken.exit_code, 3);
  EXPECT_THAT(broken.err, HasSubstr("line 2: expected operator,device_kind,seconds"));
}

TEST(Placectl, AProfilerTraceOfTheExportedModelMeasuresItsModulesOperators) {
  const std::string data = kSource + "/tests/data/torch_trace/";
  const std::string place = "place " + data + "resnet18_b1.onnx --algorithm single_device --output json --costs " +
                            data + "resnet18_b1_cpu1.trace.json ";
  Result on_cpu = RunPlacectl(place + "--devices 1xCPU --costs_kind cpu");
  Result on_gpu = RunPlacectl(place + "--devices 1xA100 --costs_kind cpu");
  Result everywhere = RunPlacectl(place + "--devices 1xA100 --training");
  ASSERT_EQ(on_cpu.exit_code, 0) << on_cpu.err;
  const nlohmann::json j = nlohmann::json::parse(on_cpu.out);
  EXPECT_EQ(j["cost_sources"]["modelled_operators"], 16);  // the exporter's unscoped Identity_N
  EXPECT_EQ(j["cost_sources"]["measured_operators"], 49);
  // The profiled step took 74.3 ms; the modules' self times account for all but the profiler's bookkeeping.
  EXPECT_GT(j["value"].get<double>(), 0.06);
  EXPECT_LT(j["value"].get<double>(), 0.0743);
  // A trace recorded on the CPU says nothing of an A100: the answer names the kinds rather than guessing.
  EXPECT_EQ(on_gpu.exit_code, 3);
  EXPECT_THAT(on_gpu.err, HasSubstr("measured times only for device kind(s) cpu"));
  // Without --costs_kind the trace's times hold on every device; the backward derives from them.
  ASSERT_EQ(everywhere.exit_code, 0) << everywhere.err;
  EXPECT_GT(nlohmann::json::parse(everywhere.out)["value"].get<double>(), 2 * j["value"].get<double>());
}

TEST(Placectl, PipeDreamProfilesPlaceAtTheirMeasuredTimes) {
  const std::string profile = kSource + "/../shared/bench/pipedream/profiles/alexnet.txt";
  if (!fs::exists(profile)) GTEST_SKIP() << "../shared/bench/pipedream is absent";
  Result training = RunPlacectl("place " + profile +
                                " --training --devices 8xV100 --objective throughput "
                                "--algorithm single_device --output json");
  Result inference = RunPlacectl("place " + profile +
                                 " --devices 8xV100 --objective throughput "
                                 "--algorithm single_device --output json");
  ASSERT_EQ(training.exit_code, 0) << training.err;
  ASSERT_EQ(inference.exit_code, 0) << inference.err;
  const nlohmann::json t = nlohmann::json::parse(training.out);
  // PipeDream's single-worker time for AlexNet (reference.tsv): its layers' forward and backward times.
  EXPECT_NEAR(t["value"].get<double>(), 0.085321, 1e-6);
  EXPECT_EQ(t["cost_sources"]["modelled_operators"], 0);
  EXPECT_LT(nlohmann::json::parse(inference.out)["value"].get<double>(), 0.085321);
}

TEST(Placectl, GeneratedGraphRoundTripsThroughTheJsonFormat) {
  Result generated = RunPlacectl("generate nas_cells --ops 200 --seed 3");
  ASSERT_EQ(generated.exit_code, 0) << generated.err;
  const fs::path graph = fs::temp_directory_path() / ("placectl_graph_" + std::to_string(::getpid()) + ".json");
  std::ofstream(graph) << generated.out;
  const fs::path placement = AllOnOneDevice(generated.out, "gpu1", "gen");
  Result r = RunPlacectl("simulate " + graph.string() + " --devices 4xA100 --placement " + placement.string() +
                         " --output json");
  Result again = RunPlacectl("import " + graph.string());
  fs::remove(graph);
  fs::remove(placement);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_GT(nlohmann::json::parse(r.out)["devices"][1]["busy"].get<double>(), 0);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(nlohmann::json::parse(again.out)["operators"], nlohmann::json::parse(generated.out)["operators"]);
}

// The graph is fine: the flag is what does not fit it.
TEST(Placectl, BatchOnAGraphWithFixedCostsIsAUsageError) {
  Result r = RunPlacectl("simulate " + kTiny + " --placement " + kTinySplit + " --batch 4");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--batch, --seq, --dim and the other ONNX options apply to ONNX models"));
}

TEST(Placectl, UnknownGraphFormatIsNamed) {
  Result r = RunPlacectl("simulate " + kTinySplit + " --placement " + kTinySplit);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_THAT(r.err, HasSubstr("neither a placement.graph/v1 graph"));
}

TEST(Placectl, BytesOfNoFormatAreABadInputHereAndBeforeSubmitting) {
  const fs::path bytes = fs::temp_directory_path() / ("placectl_bytes_" + std::to_string(::getpid()));
  std::ofstream(bytes, std::ios::binary) << std::string("\x5f\x3a\x10 binary \xff\xfe\x00\x01", 16);
  EXPECT_EQ(RunPlacectl("place " + bytes.string() + " --devices 2xA100 --algorithm heft").exit_code, 3);
  EXPECT_EQ(RunPlacectl("import " + bytes.string()).exit_code, 3);
  Result r = RunPlacectl("submit " + bytes.string() + " --devices 2xA100 --server 127.0.0.1:1");
  EXPECT_EQ(r.exit_code, 3) << r.err;  // refused before any connection: nothing listens on port 1
  EXPECT_THAT(r.err, HasSubstr("not ONNX, JSON or a Tarnawski graph"));
  EXPECT_THAT(r.err, HasSubstr("starting 5f 3a 10"));
  fs::remove(bytes);
}

TEST(Placectl, AFlagThatDoesNotApplyIsAUsageErrorNamingTheCommandsFlags) {
  Result place = RunPlacectl("place " + kTiny + " --algorithm heft --server 127.0.0.1:1");
  EXPECT_EQ(place.exit_code, 2);
  EXPECT_THAT(place.err, HasSubstr("--server does not apply to place"));
  EXPECT_THAT(place.err, HasSubstr("--algorithm"));
  EXPECT_THAT(place.err, HasSubstr("--chart"));
  EXPECT_EQ(RunPlacectl("import " + kTiny + " --devices 2xA100").exit_code, 2);
  EXPECT_EQ(RunPlacectl("place " + kTiny + " --noskip_cache").exit_code, 2);  // a negated boolean too
  Result presets = RunPlacectl("presets --deadline 5s");
  EXPECT_EQ(presets.exit_code, 2);
  EXPECT_THAT(presets.err, HasSubstr("presets takes no flags"));
  EXPECT_EQ(RunPlacectl("generate chain --ops 10 --seed 3").exit_code, 0);
}

TEST(Placectl, ChartIsDrawnForPlaceAndSimulate) {
  const fs::path dir = fs::temp_directory_path() / ("placectl_chart_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  Result place = RunPlacectl("place " + kTiny + " --algorithm heft --chart " + (dir / "place.html").string());
  ASSERT_EQ(place.exit_code, 0) << place.err;
  Result simulate =
      RunPlacectl("simulate " + kTiny + " --placement " + kTinySplit + " --chart " + (dir / "simulate.html").string());
  ASSERT_EQ(simulate.exit_code, 0) << simulate.err;
  for (const char* page : {"place.html", "simulate.html"}) {
    const std::string html = placement::testing::Slurp(dir / page);
    EXPECT_THAT(html, HasSubstr("<svg")) << page;
    EXPECT_THAT(html, HasSubstr("acc0")) << page;
  }
  Result unwritable =
      RunPlacectl("place " + kTiny + " --algorithm heft --chart " + (dir / "no/such/dir.html").string());
  EXPECT_EQ(unwritable.exit_code, 3);
  EXPECT_THAT(unwritable.err, HasSubstr("--chart"));
  fs::remove_all(dir);
}

TEST(Placectl, PlaceWithAutoPrintsAPlacementThatSimulatesToTheSameValue) {
  Result placed = RunPlacectl("place " + kTiny + " --local --objective throughput --deadline 2s --output json");
  ASSERT_EQ(placed.exit_code, 0) << placed.err;
  const nlohmann::json j = nlohmann::json::parse(placed.out);
  EXPECT_THAT(j["algorithm"].get<std::string>(), ::testing::StartsWith("auto:"));
  EXPECT_TRUE(j["fits_memory"].get<bool>());
  EXPECT_FALSE(j["notes"].empty());
  EXPECT_GE(j["best_bound"].get<double>(), j["lower_bound"].get<double>() - 1e-9);
  // The expert-like split scores 9.1; a placer must not do worse.
  EXPECT_LE(j["value"].get<double>(), 9.1 + 1e-9);
  const fs::path again = fs::temp_directory_path() / ("placectl_placed_" + std::to_string(::getpid()) + ".json");
  std::ofstream(again) << placed.out;
  Result scored =
      RunPlacectl("simulate " + kTiny + " --placement " + again.string() + " --objective throughput --output json");
  fs::remove(again);
  ASSERT_EQ(scored.exit_code, 0) << scored.err;
  EXPECT_EQ(nlohmann::json::parse(scored.out)["value"], j["value"]);
}

TEST(Placectl, PlaceWithANamedAlgorithmPrintsATable) {
  Result r = RunPlacectl("place " + kTiny + " --algorithm m_topo --deadline 1s");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("algorithm    m_topo"));
  EXPECT_THAT(r.out, HasSubstr("step_time"));
  EXPECT_THAT(r.out, HasSubstr("acc0"));
}

TEST(Placectl, AlgorithmsListsTheRegistry) {
  Result r = RunPlacectl("algorithms");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* name : {"auto", "local_search", "heft", "m_topo", "single_device"})
    EXPECT_THAT(r.out, HasSubstr(name));
  EXPECT_THAT(r.out, HasSubstr("throughput"));
}

TEST(Placectl, UnknownAlgorithmIsAUsageErrorNamingTheKnownOnes) {
  Result r = RunPlacectl("place " + kTiny + " --algorithm simulated_guessing");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("simulated_guessing"));
  EXPECT_THAT(r.err, HasSubstr("local_search"));
  EXPECT_THAT(r.err, HasSubstr("auto"));
}

TEST(Placectl, ImpossibleDeadlineIsInfeasible) {
  Result r = RunPlacectl("place " + kTiny + " --deadline 1ns");
  EXPECT_EQ(r.exit_code, 4);
  EXPECT_THAT(r.err, HasSubstr("deadline"));
  EXPECT_TRUE(r.out.empty());
}

TEST(Placectl, PlaceOptionErrorsAreNamed) {
  Result r = RunPlacectl("place " + kTiny + " --deadline soon");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("soon"));
  r = RunPlacectl("place " + kTiny + " --algorithm pipeline_dp --objective step_time");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("pipeline_dp"));
  EXPECT_EQ(RunPlacectl("place").exit_code, 2);
}

// Tarnawski et al.'s latency model: the published-style split of the tiny pipeline, by hand. acc0 holds layers
// 1-5 (8.4 compute) and sends layer 5's output (0.3) and layer 3's (0.4); acc1 starts at 9.1, receives both and
// computes 7.8: 17.6.
TEST(Placectl, SimulateUnderTheTarnawskiCostModelShowsTheBlocks) {
  Result r = RunPlacectl("simulate " + kTiny + " --placement " + kTinySplit +
                         " --objective latency --cost_model tarnawski --output json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["cost_model"], "tarnawski");
  EXPECT_NEAR(j["value"].get<double>(), 17.6, 1e-9);
  ASSERT_EQ(j["blocks"].size(), 2u);
  EXPECT_EQ(j["blocks"][1]["device"], "acc1");
  EXPECT_NEAR(j["blocks"][1]["ready"].get<double>(), 9.1, 1e-9);
  EXPECT_NEAR(j["blocks"][1]["transfer"].get<double>(), 0.7, 1e-9);
  // The default cost model simulates the same split differently and stays the default.
  Result simulated =
      RunPlacectl("simulate " + kTiny + " --placement " + kTinySplit + " --objective latency --output json");
  ASSERT_EQ(simulated.exit_code, 0) << simulated.err;
  EXPECT_EQ(nlohmann::json::parse(simulated.out)["cost_model"], "default");
  EXPECT_FALSE(nlohmann::json::parse(simulated.out).contains("blocks"));
}

TEST(Placectl, PlaceUnderTheTarnawskiCostModelIsNoWorseThanTheirGreedy) {
  Result greedy = RunPlacectl("place " + kTiny +
                              " --objective latency --cost_model tarnawski --algorithm tarnawski_greedy"
                              " --policy_device none --output json");
  ASSERT_EQ(greedy.exit_code, 0) << greedy.err;
  Result placed = RunPlacectl("place " + kTiny +
                              " --objective latency --cost_model tarnawski --deadline 3s"
                              " --policy_device none --output json");
  ASSERT_EQ(placed.exit_code, 0) << placed.err;
  nlohmann::json j = nlohmann::json::parse(placed.out);
  EXPECT_THAT(j["algorithm"].get<std::string>(), ::testing::StartsWith("auto:"));
  EXPECT_LE(j["value"].get<double>(), nlohmann::json::parse(greedy.out)["value"].get<double>());
  // Its JSON is a placement file that scores the same under the same model.
  const fs::path again = fs::temp_directory_path() / ("placectl_tarnawski_" + std::to_string(::getpid()) + ".json");
  std::ofstream(again) << placed.out;
  Result scored = RunPlacectl("simulate " + kTiny + " --placement " + again.string() +
                              " --objective latency --cost_model tarnawski --output json");
  fs::remove(again);
  ASSERT_EQ(scored.exit_code, 0) << scored.err;
  EXPECT_EQ(nlohmann::json::parse(scored.out)["value"], j["value"]);
}

TEST(Placectl, CostModelErrorsAreUsageErrorsNamingTheProblem) {
  Result r =
      RunPlacectl("simulate " + kTiny + " --placement " + kTinySplit + " --objective latency --cost_model roofline");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("roofline"));
  EXPECT_THAT(r.err, HasSubstr("tarnawski"));
  r = RunPlacectl("place " + kTiny + " --objective throughput --cost_model tarnawski --policy_device none");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("latency"));
  r = RunPlacectl("place " + kTiny +
                  " --objective latency --cost_model tarnawski --algorithm heft --policy_device none");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("'heft'"));
  EXPECT_THAT(r.err, HasSubstr("tarnawski"));
  r = RunPlacectl("place " + kTiny + " --objective latency --algorithm tarnawski_greedy --policy_device none");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("under the tarnawski cost model"));
}

TEST(Placectl, ASplitTheirModelForbidsIsABadInputNamingTheAccelerators) {
  const fs::path dir = fs::temp_directory_path() / ("placectl_cycle_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  // a -> b and c -> d; acc0 = {a, d} and acc1 = {b, c} feed each other.
  std::ofstream(dir / "graph.json") << R"({"maxSizePerFPGA": 1000, "maxFPGAs": 2, "maxCPUs": 1, "nodes": [
      {"id": 1, "supportedOnFpga": 1, "cpuLatency": 10, "fpgaLatency": 1, "size": 1},
      {"id": 2, "supportedOnFpga": 1, "cpuLatency": 10, "fpgaLatency": 1, "size": 1},
      {"id": 3, "supportedOnFpga": 1, "cpuLatency": 10, "fpgaLatency": 1, "size": 1},
      {"id": 4, "supportedOnFpga": 1, "cpuLatency": 10, "fpgaLatency": 1, "size": 1}],
    "edges": [{"sourceId": 1, "destId": 2, "cost": 1}, {"sourceId": 3, "destId": 4, "cost": 1}]})";
  std::ofstream(dir / "split.json") << R"({"fpgas": [{"nodes": [1, 4]}, {"nodes": [2, 3]}]})";
  Result r = RunPlacectl("simulate " + (dir / "graph.json").string() + " --placement " + (dir / "split.json").string() +
                         " --objective latency --cost_model tarnawski");
  fs::remove_all(dir);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_THAT(r.err, HasSubstr("'acc0'"));
  EXPECT_THAT(r.err, HasSubstr("'acc1'"));
  EXPECT_THAT(r.err, HasSubstr("cycle"));
}

}  // namespace

namespace {

// placectl itself does not link LibTorch, so that commands without the learned policy start in milliseconds;
// the ones that run it go to placectl-torch beside it, and without that program they say so.
TEST(Placectl, LibTorchLoadsOnlyForTheCommandsThatRunThePolicy) {
  FILE* ldd = ::popen(("ldd " + std::string(PLACECTL_PATH)).c_str(), "r");
  ASSERT_NE(ldd, nullptr);
  std::string libraries;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, ldd)) > 0;) libraries.append(buf, n);
  ::pclose(ldd);
  EXPECT_THAT(libraries, ::testing::Not(HasSubstr("libtorch"))) << libraries;

  Result policy = RunPlacectl("place " + kTiny + " --algorithm policy --output json");
  ASSERT_EQ(policy.exit_code, 0) << policy.err;
  EXPECT_EQ(nlohmann::json::parse(policy.out)["algorithm"], "policy");

  // A placectl without placectl-torch: the classical placers work, the policy's commands name what is missing.
  const fs::path alone = fs::temp_directory_path() / ("placectl_alone_" + std::to_string(::getpid()));
  fs::create_directories(alone);
  fs::copy_file(PLACECTL_PATH, alone / "placectl", fs::copy_options::overwrite_existing);
  const std::string binary = (alone / "placectl").string();
  EXPECT_EQ(RunPlacectl("place " + kTiny + " --algorithm heft", binary).exit_code, 0);
  Result missing = RunPlacectl("place " + kTiny + " --algorithm policy", binary);
  EXPECT_EQ(missing.exit_code, 4);
  EXPECT_THAT(missing.err, HasSubstr("placectl-torch"));
  EXPECT_THAT(missing.err, HasSubstr("--policy_device=none"));
  EXPECT_EQ(RunPlacectl("calibrate", binary).exit_code, 4);
  Result listed = RunPlacectl("algorithms", binary);
  EXPECT_EQ(listed.exit_code, 0);
  EXPECT_THAT(listed.out, HasSubstr("policy_iterative"));
  fs::remove_all(alone);
}

}  // namespace

namespace {

// A library never prints on standard output: METIS, asked for nearly as many parts as the graph has units, prints
// its complaints there, so it is not asked (the LSTM's 60 units over 16 devices).
TEST(Placectl, JsonOutputStaysJsonWhenAGraphHasFewUnitsPerDevice) {
  const Result r = RunPlacectl("place " + kSource + "/tests/data/corpus/lstm_seq2seq.onnx --devices 16xV100 "
                               "--algorithm metis --output json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out, nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(j.is_discarded()) << r.out.substr(0, 200);
  EXPECT_EQ(r.out.find("***"), std::string::npos);
  EXPECT_GT(j["value"].get<double>(), 0);
}

}  // namespace

namespace {

// A count given as 0 or less is refused, not read as "not given".
TEST(Placectl, CountsThatAreNotPositiveAreUsageErrors) {
  const std::string resnet = kSource + "/tests/data/corpus/resnet50.onnx";
  for (const std::string& flag : {"--batch 0", "--batch -4", "--seq=0", "--micro_batch -1"}) {
    const Result r = RunPlacectl("place " + resnet + " --devices 2xH100 --training " + flag);
    EXPECT_EQ(r.exit_code, 2) << flag << ": " << r.err;
    EXPECT_THAT(r.err, HasSubstr("is not a positive count")) << flag;
    EXPECT_TRUE(r.out.empty()) << flag;
  }
  EXPECT_EQ(RunPlacectl("memory " + resnet + " --batch 0").exit_code, 2);
}

// A --dim for a symbol the model does not have is a usage error (the model is fine), naming those it has.
TEST(Placectl, DimForASymbolTheModelLacksNamesItsSymbols) {
  const Result r =
      RunPlacectl("import " + kSource + "/tests/data/corpus/transformer_encoder.onnx --dim foo=3");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("'foo'"));
  EXPECT_THAT(r.err, HasSubstr("batch, seq"));
  EXPECT_TRUE(r.out.empty());
}

}  // namespace

namespace {

// SIGINT during a long search ends it: the answer is the best found before the signal, marked interrupted, and
// comes long before the deadline.
TEST(Placectl, InterruptedSearchPrintsTheBestAnswerSoFar) {
  const std::string graph = kSource + "/tests/data/corpus/transformer_decoder.onnx";
  int out[2];
  ASSERT_EQ(::pipe(out), 0);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::dup2(out[1], 1);
    ::close(out[0]);
    ::execl(PLACECTL_PATH, "placectl", "place", graph.c_str(), "--training", "--batch", "8", "--devices", "4xH100",
            "--parallelism", "operator", "--deadline", "300s", "--policy_device", "none", "--output", "json",
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(out[1]);
  const auto begin = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(std::chrono::seconds(3));
  ::kill(pid, SIGINT);
  std::string text;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(out[0], buf, sizeof buf)) > 0) text.append(buf, static_cast<size_t>(n));
  ::close(out[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_LT(std::chrono::steady_clock::now() - begin, std::chrono::seconds(150));  // half the deadline
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(j.is_discarded()) << text.substr(0, 200);
  EXPECT_GT(j["value"].get<double>(), 0);
  EXPECT_THAT(j["warnings"].dump(), HasSubstr("interrupted"));
}

// A misspelt or unknown flag is a usage error (exit 2) naming the nearest spelling the command takes, before absl's
// own report (exit 1, no suggestion); a negative count stays the count's error; a value that does not parse and an
// unknown algorithm are usage errors naming the flag or the nearest name.
TEST(Placectl, UnknownFlagsAreUsageErrorsNamingTheNearestSpelling) {
  const struct {
    std::string args, says;
  } cases[] = {
      {"place " + kTiny + " --device 2xA100", "unknown flag --device; did you mean --devices?"},
      {"place " + kTiny + " --shardng=zero1", "did you mean --sharding?"},
      {"memory " + kTiny + " --zzzqqq 1", "memory takes --"},
      {"memory " + kTiny + " --batch -4", "--batch -4 is not a positive count"},
      {"place " + kTiny + " --devices 8xH1000", "--devices: bad topology term '8xH1000'"},
      {"place " + kTiny + " --algorithm hefty", "did you mean heft?"},
  };
  for (const auto& c : cases) {
    const Result r = RunPlacectl(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args << ": " << r.err;
    EXPECT_THAT(r.err, HasSubstr(c.says)) << c.args;
  }
}

}  // namespace
