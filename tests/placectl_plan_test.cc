// placectl place with plans of data-parallel stages: the stage table, the JSON, PipeDream's cost model, and the
// options' errors, as a user sees them.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/placectl_run.h"

namespace {

using placement::testing::RunPlacectl;
using ::testing::HasSubstr;

const std::string kSource = PLACEMENT_SOURCE_DIR;
// A small convolutional network as PipeDream profiles it: heavy convolutions, a large fully connected layer.
const std::string kProfile = kSource + "/examples/graphs/convnet_pipedream.txt";
const std::string kPlan = " --training --devices 2x4xV100 --objective throughput --policy_device none --deadline 20s";

TEST(PlacectlPlan, HybridTablesTheStagesWithTheirDevicesAndReplicas) {
  auto r = RunPlacectl("place " + kProfile + kPlan + " --parallelism hybrid");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("plan "));
  EXPECT_THAT(r.out, HasSubstr("replicas"));
  EXPECT_THAT(r.out, HasSubstr("winner: "));
  EXPECT_THAT(r.out, HasSubstr("simulated"));
}

TEST(PlacectlPlan, JsonHasTheValueAndEveryStagesOperatorsAndDevices) {
  auto r = RunPlacectl("place " + kProfile + kPlan + " --parallelism hybrid --global_batch 16 --output json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_GT(j["value"].get<double>(), 0);
  EXPECT_GT(j["step_time"].get<double>(), 0);
  EXPECT_EQ(j["global_batch"], 16);
  ASSERT_GT(j["stages"].size(), 0u);
  size_t operators = 0;
  for (const auto& stage : j["stages"]) {
    EXPECT_GT(stage["devices"].size(), 0u);
    EXPECT_EQ(stage["replicas"], stage["devices"].size());
    operators += stage["operators"].size();
  }
  EXPECT_EQ(operators, 12u);  // six layers and their gradients
  EXPECT_EQ(j["assignment"].size(), 12u);
}

TEST(PlacectlPlan, PipeDreamsCostModelIsAnOption) {
  auto r = RunPlacectl("place " + kProfile + kPlan + " --parallelism hybrid --cost_model pipedream --output json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["cost_model"], "pipedream");
  EXPECT_GT(j["value"].get<double>(), 0);
}

TEST(PlacectlPlan, OptionsThatDoNotGoTogetherAreUsageErrors) {
  auto r = RunPlacectl("place " + kProfile + " --training --devices 4xV100 --parallelism hybrid --policy_device none");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("throughput"));
  EXPECT_THAT(r.err, HasSubstr("ask for objective throughput, or leave parallelism unset"));  // the next step
  r = RunPlacectl("place " + kProfile + kPlan + " --parallelism sideways");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("sideways"));
  r = RunPlacectl("place " + kProfile + kPlan + " --cost_model pipedream");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("parallelism"));
  r = RunPlacectl("place " + kProfile + kPlan + " --parallelism data --global_batch 4");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_THAT(r.err, HasSubstr("stage 1"));
}

TEST(PlacectlPlan, SimulateScoresAPlacementUnderPipeDreamsCostModel) {
  const std::string tiny = kSource + "/examples/graphs/tiny_pipeline.json";
  const std::string split = kSource + "/examples/placements/tiny_pipeline_split.json";
  auto r = RunPlacectl("simulate " + tiny + " --placement " + split +
                       " --objective throughput --cost_model pipedream --output json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_GT(nlohmann::json::parse(r.out)["value"].get<double>(), 0);
  r = RunPlacectl("simulate " + tiny + " --placement " + split + " --cost_model pipedream");
  EXPECT_EQ(r.exit_code, 2);  // a usage error: the flags do not go together
  EXPECT_THAT(r.err, HasSubstr("throughput"));
}

TEST(PlacectlPlan, PlanThatCannotFitMemoryIsInfeasibleNamingTheStage) {
  const std::filesystem::path tiny =
      std::filesystem::temp_directory_path() / ("placectl_plan_tiny_" + std::to_string(::getpid()) + ".json");
  std::ofstream(tiny) << R"({"hosts": [{"devices": [{"preset": "V100", "count": 2, "memory": "400MB"}]}]})";
  auto r = RunPlacectl("place " + kProfile +
                       " --training --objective throughput --parallelism hybrid --policy_device none "
                       "--topology " +
                       tiny.string());
  std::filesystem::remove(tiny);
  EXPECT_EQ(r.exit_code, 4) << r.out;
  EXPECT_THAT(r.err, HasSubstr("stage 1"));
  EXPECT_THAT(r.err, HasSubstr("does not fit memory"));
}

}  // namespace
