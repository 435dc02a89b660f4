// placectl place for a training step on several devices: the default compares data, pipeline and hybrid plans and
// operator placement at the global batch in samples, and answers the fastest that fits, in units people use.
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/placectl_run.h"

namespace {

using placement::testing::RunPlacectl;
using ::testing::HasSubstr;

const std::string kResnet = std::string(PLACEMENT_SOURCE_DIR) + "/tests/data/corpus/resnet50.onnx";

nlohmann::json PlaceJson(const std::string& args) {
  const auto r = RunPlacectl("place " + args + " --deadline 3s --output json");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.exit_code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json::object();
}

TEST(PlacectlTrainingPlan, DefaultStatesTheGlobalBatchInSamplesAndItsSplit) {
  const nlohmann::json j = PlaceJson(kResnet + " --training --batch 32 --devices 8xH100");
  ASSERT_TRUE(j.contains("global_batch"));
  EXPECT_EQ(j["global_batch"], 32);
  EXPECT_EQ(j["micro_batch_size"], 4);
  EXPECT_EQ(j["micro_batches"], 8);
  const double step = j["step_time"].get<double>();
  ASSERT_GT(step, 0);
  EXPECT_NEAR(j["samples_per_second"].get<double>(), 32 / step, 1e-6 * 32 / step);
  EXPECT_NEAR(j["value"].get<double>() * 8, step, 1e-9 * step);  // the value is a micro-batch's share of the step
  EXPECT_GE(j["value"].get<double>(), j["lower_bound"].get<double>());
}

// The answer is never slower than synchronous data parallelism at the same global batch, nor than the operator
// placement of the whole batch.
TEST(PlacectlTrainingPlan, DefaultIsNoSlowerThanDataParallelismOrOperatorPlacement) {
  const nlohmann::json chosen = PlaceJson(kResnet + " --training --batch 128 --devices 8xH100");
  const nlohmann::json data = PlaceJson(kResnet +
                                        " --training --batch 16 --devices 8xH100 --parallelism data "
                                        "--objective throughput --global_batch 8");
  const nlohmann::json operators =
      PlaceJson(kResnet + " --training --batch 128 --devices 8xH100 --parallelism operator");
  ASSERT_TRUE(chosen.contains("step_time") && data.contains("step_time") && operators.contains("value"));
  EXPECT_EQ(data["global_batch"], 128);  // 8 micro-batches of the graph's batch of 16
  EXPECT_LE(chosen["step_time"].get<double>(), data["step_time"].get<double>() * (1 + 1e-9));
  EXPECT_EQ(operators["objective"], "step_time");
  EXPECT_LT(chosen["step_time"].get<double>(), operators["value"].get<double>());
}

// Every replica holds its stage's memory, and the breakdown adds up to each device's peak.
TEST(PlacectlTrainingPlan, EveryReplicaReportsTheMemoryItHolds) {
  const nlohmann::json j = PlaceJson(kResnet + " --training --batch 32 --devices 8xH100");
  ASSERT_TRUE(j.contains("devices"));
  for (const nlohmann::json& d : j["devices"]) {
    const nlohmann::json& m = d["memory"];
    const int64_t sum = m["parameters"].get<int64_t>() + m["gradients"].get<int64_t>() + m["optimizer"].get<int64_t>() +
                        m["activations"].get<int64_t>() + m["workspace"].get<int64_t>();
    EXPECT_GT(m["activations"].get<int64_t>(), 0) << d["name"];
    EXPECT_EQ(sum, d["peak_memory"].get<int64_t>()) << d["name"];
  }
}

// A step of fewer micro-batches than the cluster has devices runs data-parallel on as many devices as it has
// micro-batches, where data parallelism on every device would leave replicas with nothing to run.
TEST(PlacectlTrainingPlan, FewerMicroBatchesThanDevicesUseAsManyDevices) {
  const nlohmann::json j = PlaceJson(kResnet + " --training --batch 8 --micro_batch 2 --devices 8xH100");
  ASSERT_TRUE(j.contains("stages"));
  ASSERT_EQ(j["stages"].size(), 1u);
  EXPECT_EQ(j["stages"][0]["devices"].size(), 4u);
  EXPECT_EQ(j["micro_batches"], 4);
  const nlohmann::json pipeline = PlaceJson(kResnet +
                                            " --training --batch 2 --devices 8xH100 --parallelism pipeline "
                                            "--objective throughput --global_batch 4");
  ASSERT_TRUE(pipeline.contains("step_time"));
  EXPECT_LE(j["step_time"].get<double>(), pipeline["step_time"].get<double>() * (1 + 1e-9));
  for (const nlohmann::json& d : j["devices"]) {
    EXPECT_GT(d["capacity"].get<int64_t>(), 0) << d["name"];  // idle devices keep their capacity
  }
}

// An export that fixes its batch makes each micro-batch one run of it: a step of fewer runs than devices cannot
// occupy them all, and the answer says what would.
TEST(PlacectlTrainingPlan, AFixedBatchExportSaysWhatLetsEveryDeviceTrain) {
  const std::string fixed = std::string(PLACEMENT_SOURCE_DIR) + "/tests/data/torch_trace/resnet18_b1_train.onnx";
  const auto r = RunPlacectl("place " + fixed + " --training --batch 2 --devices 4xH100 --deadline 3s");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("the model's batch is fixed at 1 by its export: micro-batches of 1 sample; 2 "
                               "micro-batches a step, fewer than the 4 devices: data parallelism needs one per "
                               "replica, so --batch 4 (or an export with a dynamic batch axis) lets every device "
                               "train"));
  const auto enough = RunPlacectl("place " + fixed + " --training --batch 4 --devices 4xH100 --deadline 3s");
  ASSERT_EQ(enough.exit_code, 0) << enough.err;
  EXPECT_THAT(enough.out, HasSubstr("micro-batches of 1 sample\n"));
}

TEST(PlacectlTrainingPlan, OneDeviceAndInferenceKeepOperatorPlacement) {
  const nlohmann::json one = PlaceJson(kResnet + " --training --batch 8 --devices 1xH100");
  EXPECT_EQ(one["objective"], "step_time");
  EXPECT_FALSE(one.contains("stages"));
  const nlohmann::json inference = PlaceJson(kResnet + " --batch 8 --devices 4xH100");
  EXPECT_EQ(inference["objective"], "step_time");
  EXPECT_FALSE(inference.contains("stages"));
}

TEST(PlacectlTrainingPlan, TheTableSaysStepAndSamplesPerSecond) {
  const auto r = RunPlacectl("place " + kResnet + " --training --batch 32 --devices 8xH100 --deadline 3s");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("global batch 32 samples (8 micro-batches of 4)"));
  EXPECT_THAT(r.out, HasSubstr("samples/s"));
  EXPECT_THAT(r.out, HasSubstr("per micro-batch of 4 samples"));
  EXPECT_THAT(r.out, HasSubstr("the answer's time"));  // why the others lost
}

// The chart draws the plan's step, every replica and its collectives, not the first replica's placement.
TEST(PlacectlTrainingPlan, TheChartDrawsThePlansStep) {
  const std::string chart = ::testing::TempDir() + "/plan_chart.html";
  const auto r =
      RunPlacectl("place " + kResnet + " --training --batch 32 --devices 8xH100 --deadline 3s --chart " + chart);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream in(chart);
  const std::string html((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_THAT(html, HasSubstr("one step of 8 micro-batches of the plan"));
  EXPECT_THAT(html, HasSubstr("gpu7/collectives"));
  EXPECT_THAT(html, HasSubstr("allreducebucket"));
}

// One truth per answer: `simulate` of an answer's JSON gives its figures, for plans and placements alike, and no
// answer's value falls under its lower bound.
// A plan file is scored per sample and per step: another objective given for it is refused, not ignored.
TEST(PlacectlTrainingPlan, SimulatingAPlanRefusesAnotherObjective) {
  const std::string file = ::testing::TempDir() + "/plan_objective.json";
  const auto placed = RunPlacectl("place " + kResnet +
                                  " --training --batch 32 --devices 4xH100 --deadline 2s "
                                  "--output json");
  ASSERT_EQ(placed.exit_code, 0) << placed.err;
  std::ofstream(file) << placed.out;
  if (!nlohmann::json::parse(placed.out).contains("micro_batch_size")) GTEST_SKIP() << "the answer is no plan";
  const auto r = RunPlacectl("simulate " + kResnet + " --training --devices 4xH100 --placement " + file +
                             " --objective step_time");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, ::testing::HasSubstr("is a plan, scored by its time per sample and its step"));
}

TEST(PlacectlTrainingPlan, SimulatingAnAnswerReproducesItsFigures) {
  const std::string file = ::testing::TempDir() + "/answer.json";
  struct Request {
    std::string graph, devices, plan;  // the graph's options, the cluster, the rest
  };
  const std::vector<Request> requests = {
      {"--training --batch 32", "8xH100", ""},
      {"--training --batch 64", "2x8xH100", ""},
      {"--training --batch 8", "4xH100", "--objective throughput --parallelism hybrid --global_batch 4"},
      {"--training --batch 8", "2xH100", "--parallelism operator"},
      {"--training --batch 32", "8xH100", "--sharding zero3"},
      {"--training --batch 32", "8xH100", "--recompute full"},
  };
  for (const Request& r : requests) {
    const std::string request = r.graph + " --devices " + r.devices + " " + r.plan;
    const auto placed = RunPlacectl("place " + kResnet + " " + request + " --deadline 2s --output json");
    ASSERT_EQ(placed.exit_code, 0) << request << ": " << placed.err;
    std::ofstream(file) << placed.out;
    const nlohmann::json answer = nlohmann::json::parse(placed.out);
    // A plan's file binds the graph to its micro-batch itself.
    const std::string graph = answer.contains("micro_batch_size") ? "--training" : r.graph;
    const auto simulated =
        RunPlacectl("simulate " + kResnet + " " + graph + " --devices " + r.devices + " --placement " + file +
                    " --output json" + (answer["objective"] == "throughput" ? " --objective throughput" : ""));
    ASSERT_EQ(simulated.exit_code, 0) << request << ": " << simulated.err;
    const nlohmann::json again = nlohmann::json::parse(simulated.out);
    EXPECT_NEAR(again["value"].get<double>(), answer["value"].get<double>(), 0.01 * answer["value"].get<double>())
        << request;
    EXPECT_GE(answer["value"].get<double>(), answer["lower_bound"].get<double>()) << request;
    EXPECT_EQ(again["fits_memory"], answer["fits_memory"]) << request;
    if (answer.contains("step_time")) {
      EXPECT_NEAR(again["step_time"].get<double>(), answer["step_time"].get<double>(),
                  0.01 * answer["step_time"].get<double>())
          << request;
      EXPECT_EQ(again["global_batch"], answer["global_batch"]) << request;
    }
    for (size_t d = 0; d < answer["devices"].size(); ++d) {
      EXPECT_EQ(again["devices"][d]["peak_memory"], answer["devices"][d]["peak_memory"]) << request << " device " << d;
      EXPECT_EQ(again["devices"][d]["memory"], answer["devices"][d]["memory"]) << request << " device " << d;
    }
  }
}

int64_t DeviceSum(const nlohmann::json& answer, const char* kind) {
  int64_t total = 0;
  for (const nlohmann::json& d : answer["devices"]) total += d["memory"][kind].get<int64_t>();
  return total;
}

// The same data-parallel plan with its replicas splitting the optimizer's state, then the gradients, then the
// weights: each device holds a replica's share of what is split, and the answer says which.
TEST(PlacectlTrainingPlan, ShardingLowersEachReplicasMemoryByWhatItSplits) {
  const std::string request = kResnet +
                              " --training --batch 4 --devices 8xH100 --parallelism data "
                              "--objective throughput --global_batch 8";
  const nlohmann::json none = PlaceJson(request);
  const nlohmann::json zero1 = PlaceJson(request + " --sharding zero1");
  const nlohmann::json zero2 = PlaceJson(request + " --sharding zero2");
  const nlohmann::json fsdp = PlaceJson(request + " --sharding fsdp");
  ASSERT_TRUE(none.contains("devices") && zero1.contains("devices") && zero2.contains("devices") &&
              fsdp.contains("devices"));
  EXPECT_EQ(none["sharding"], "none");
  EXPECT_EQ(fsdp["sharding"], "zero3");
  const int64_t optimizer = DeviceSum(none, "optimizer"), gradients = DeviceSum(none, "gradients");
  const int64_t weights = DeviceSum(none, "parameters");
  ASSERT_GT(optimizer, 0);
  EXPECT_NEAR(DeviceSum(zero1, "optimizer"), optimizer / 8, 8);
  EXPECT_EQ(DeviceSum(zero1, "gradients"), gradients);
  EXPECT_NEAR(DeviceSum(zero2, "gradients"), gradients / 2 / 8, 8);  // a share of one copy: no bucket copy
  EXPECT_EQ(DeviceSum(zero2, "parameters"), weights);
  EXPECT_NEAR(DeviceSum(fsdp, "parameters"), weights / 8, 8);
  EXPECT_LT(DeviceSum(zero2, "activations") + DeviceSum(zero2, "gradients"),
            DeviceSum(none, "activations") + DeviceSum(none, "gradients"));
  EXPECT_NEAR(zero2["step_time"].get<double>(), none["step_time"].get<double>(),
              1e-9 * none["step_time"].get<double>());  // the same bytes on the links
  EXPECT_GE(fsdp["step_time"].get<double>(), zero2["step_time"].get<double>());

  const auto operators = RunPlacectl("place " + kResnet +
                                     " --training --batch 8 --devices 2xH100 "
                                     "--parallelism operator --sharding zero2");
  EXPECT_EQ(operators.exit_code, 2) << operators.out;
  EXPECT_THAT(operators.err, HasSubstr("give parallelism data, pipeline or hybrid"));
  const auto unknown = RunPlacectl("place " + kResnet + " --training --batch 8 --devices 2xH100 --sharding zero4");
  EXPECT_EQ(unknown.exit_code, 2) << unknown.out;
  EXPECT_THAT(unknown.err, HasSubstr("unknown sharding 'zero4'"));
}

// Recomputation keeps less of each micro-batch and pays a second forward pass: the same plan answers with fewer
// activations and a longer step, and says it recomputes.
TEST(PlacectlTrainingPlan, RecomputationTradesActivationsForASecondForward) {
  const std::string request = kResnet +
                              " --training --batch 4 --devices 8xH100 --parallelism data "
                              "--objective throughput --global_batch 8";
  const nlohmann::json kept = PlaceJson(request);
  const nlohmann::json full = PlaceJson(request + " --recompute full");
  ASSERT_TRUE(kept.contains("devices") && full.contains("devices"));
  EXPECT_EQ(kept["recompute"], "none");
  EXPECT_EQ(full["recompute"], "full");
  EXPECT_LT(DeviceSum(full, "activations"), DeviceSum(kept, "activations") / 2);
  EXPECT_LT(DeviceSum(full, "activations") + DeviceSum(full, "workspace"),
            DeviceSum(kept, "activations") + DeviceSum(kept, "workspace"));
  EXPECT_GT(full["step_time"].get<double>(), kept["step_time"].get<double>());
  // The simulation runs the second forward too: it agrees with the model as closely as without recomputation.
  const auto agreement = [](const nlohmann::json& j) {
    return j["simulated_value"].get<double>() / j["value"].get<double>();
  };
  EXPECT_NEAR(agreement(full), agreement(kept), 0.02);
  const auto operators = RunPlacectl("place " + kResnet +
                                     " --training --batch 8 --devices 2xH100 "
                                     "--parallelism operator --recompute full");
  EXPECT_EQ(operators.exit_code, 2) << operators.out;
  EXPECT_THAT(operators.err, HasSubstr("recompute full is a plan option"));
}

// A model exported with its batch fixed runs micro-batches of that batch: the global batch is a number of them.
TEST(PlacectlTrainingPlan, AFixedBatchExportSplitsIntoRunsOfItsBatch) {
  const std::string fixed = std::string(PLACEMENT_SOURCE_DIR) + "/tests/data/torch_trace/resnet18_b1.onnx";
  const nlohmann::json j = PlaceJson(fixed + " --training --batch 8 --devices 4xH100");
  EXPECT_EQ(j["global_batch"], 8);
  EXPECT_EQ(j["micro_batch_size"], 1);
  EXPECT_EQ(j["micro_batches"], 8);
  const auto other = RunPlacectl("place " + fixed + " --training --batch 8 --micro_batch 2 --devices 4xH100");
  EXPECT_EQ(other.exit_code, 2) << other.out;
  EXPECT_THAT(other.err, HasSubstr("fixed at 1"));
}

TEST(PlacectlTrainingPlan, BadSplitsAreUsageErrorsNamingTheFix) {
  const auto split = RunPlacectl("place " + kResnet + " --training --batch 32 --micro_batch 5 --devices 8xH100");
  EXPECT_EQ(split.exit_code, 2) << split.out;
  EXPECT_THAT(split.err, HasSubstr("--micro_batch 4"));
  const auto inference = RunPlacectl("place " + kResnet + " --parallelism auto --devices 8xH100");
  EXPECT_EQ(inference.exit_code, 2) << inference.out;
  EXPECT_THAT(inference.err, HasSubstr("--training"));
  const auto latency =
      RunPlacectl("place " + kResnet + " --training --parallelism auto --objective latency --devices 8xH100");
  EXPECT_EQ(latency.exit_code, 2) << latency.out;
  EXPECT_THAT(latency.err, HasSubstr("--parallelism operator"));
}

// Eager PyTorch issues each operator from the host while the GPU runs earlier ones; CUDA graphs or a compiled step
// replay them without that work. The calibrated H100 topology carries the host's figures; --runtime graphs drops
// them.
TEST(PlacectlRuntime, GraphsDropTheHostsDispatchAndEagerKeepsIt) {
  const std::string mobilenet = std::string(PLACEMENT_SOURCE_DIR) + "/tests/data/corpus/mobilenet_v3_large.onnx";
  const std::string h100 = std::string(PLACEMENT_SOURCE_DIR) + "/examples/topology/h100_pytorch_float32.json";
  const std::string common = mobilenet + " --training --batch 8 --algorithm single_device --topology " + h100;
  const nlohmann::json eager = PlaceJson(common);
  const nlohmann::json graphs = PlaceJson(common + " --runtime graphs");
  ASSERT_TRUE(eager.contains("value") && graphs.contains("value"));
  EXPECT_LT(graphs["value"].get<double>(), 0.9 * eager["value"].get<double>());  // a small model: host-bound
  const auto bad = RunPlacectl("place " + common + " --runtime compiled");
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
  EXPECT_THAT(bad.err, HasSubstr("--runtime"));
}

}  // namespace
