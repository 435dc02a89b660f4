// placectl on a Hugging Face config.json: the model expanded into its operator graph at --batch and --seq, then
// imported, placed and simulated like any other graph.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/placectl_run.h"

namespace {

namespace fs = std::filesystem;
using placement::testing::RunPlacectl;
using ::testing::HasSubstr;

const std::string kConfigs = std::string(PLACEMENT_SOURCE_DIR) + "/graph/tests/data/hf_configs/";
const std::string kGpt2 = kConfigs + "gpt2.json";

// Every operator of an imported graph on one device.
fs::path AllOn(const nlohmann::json& graph, const std::string& device) {
  nlohmann::json placement;
  for (const auto& op : graph["operators"]) placement["assignment"][op["name"].get<std::string>()] = device;
  const fs::path path = fs::temp_directory_path() / ("placectl_hf_" + std::to_string(::getpid()) + ".json");
  std::ofstream(path) << placement.dump();
  return path;
}

TEST(PlacectlHfConfig, ImportExpandsTheConfigAtTheBatchAndSequenceLength) {
  auto r = RunPlacectl("import " + kGpt2 + " --batch 8 --seq 512");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json graph = nlohmann::json::parse(r.out);
  EXPECT_EQ(graph["format"], "placement.graph/v1");
  int64_t params = 0;
  for (const auto& op : graph["operators"]) params += op.value("param_bytes", int64_t{0});
  EXPECT_EQ(params, 4 * int64_t{124'439'808});
  bool found = false;
  for (const auto& op : graph["operators"]) {
    if (op["name"] != "/transformer/h.0/attn/Softmax") continue;
    found = true;
    EXPECT_EQ(op["outputs"][0]["bytes"], int64_t{4} * 8 * 12 * 512 * 512);  // batch x heads x seq x seq
  }
  EXPECT_TRUE(found);
}

TEST(PlacectlHfConfig, SimulateRunsTheForwardAtTheGivenShapeAndATrainingStep) {
  auto imported = RunPlacectl("import " + kGpt2 + " --batch 8 --seq 512");
  ASSERT_EQ(imported.exit_code, 0) << imported.err;
  const fs::path placement = AllOn(nlohmann::json::parse(imported.out), "gpu0");
  auto r = RunPlacectl("simulate " + kGpt2 + " --devices 1xA100 --batch 8 --seq 512 --placement " + placement.string() +
                       " --output json");
  fs::remove(placement);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_GT(nlohmann::json::parse(r.out)["value"].get<double>(), 0);

  auto step = RunPlacectl("place " + kGpt2 +
                          " --devices 2xA100 --batch 4 --seq 256 --training --parallelism operator --output json");
  ASSERT_EQ(step.exit_code, 0) << step.err;
  const nlohmann::json answer = nlohmann::json::parse(step.out);
  EXPECT_GT(answer["value"].get<double>(), 0);
  bool backward = false;
  for (const auto& [name, device] : answer["assignment"].items())
    backward = backward || name.find("/grad") != std::string::npos;
  EXPECT_TRUE(backward);
}

TEST(PlacectlHfConfig, DefaultsAreSaidInWarnings) {
  auto r = RunPlacectl("place " + kConfigs + "t5-small.json --devices 1xA100 --seq 64");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("warning: batch 1 (a Hugging Face config has none; --batch sets it)"));
  r = RunPlacectl("place " + kGpt2 + " --devices 1xA100 --batch 2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("warning: sequence length 1024, the model's learned positions"));
}

TEST(PlacectlHfConfig, OnnxOnlyOptionsAndBadShapesAreRefused) {
  auto r = RunPlacectl("place " + kGpt2 + " --devices 1xA100 --dim seq=4");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("a Hugging Face config takes --batch and --seq"));
  r = RunPlacectl("place " + kGpt2 + " --devices 1xA100 --seq 4096");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_THAT(r.err, HasSubstr("sequence length 4096 is longer than the 1024 positions gpt2 has learned"));
  const fs::path bad = fs::temp_directory_path() / ("placectl_hf_bad_" + std::to_string(::getpid()) + ".json");
  std::ofstream(bad) << R"({"model_type": "falcon", "hidden_size": 64, "num_hidden_layers": 2})";
  r = RunPlacectl("place " + bad.string() + " --devices 1xA100");
  fs::remove(bad);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_THAT(r.err, HasSubstr("model_type 'falcon' is not supported"));
}

}  // namespace
