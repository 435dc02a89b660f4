// placectl memory end to end: one step's memory on one device, broken down.
#include <fstream>
#include <regex>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/placectl_run.h"

namespace {

using ::testing::HasSubstr;
using placement::testing::RunPlacectl;

const std::string kResnet = std::string(PLACEMENT_SOURCE_DIR) + "/tests/data/corpus/resnet50.onnx";
const std::string kEncoder = std::string(PLACEMENT_SOURCE_DIR) + "/tests/data/corpus/transformer_encoder.onnx";

nlohmann::json MemoryJson(const std::string& args) {
  const auto r = RunPlacectl("memory " + args + " --output json");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.exit_code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json::object();
}

TEST(PlacectlMemory, TrainingBreakdownAddsUpToNoMoreThanThePeak) {
  const nlohmann::json j = MemoryJson(kResnet + " --training --batch 8");
  ASSERT_TRUE(j.contains("memory"));
  const auto& m = j["memory"];
  const int64_t parameters = m["parameters"].get<int64_t>();
  // resnet50's 25.6M float32 weights, its batch normalizations folded into the convolutions by the export.
  EXPECT_NEAR(static_cast<double>(parameters), 25557032.0 * 4, 0.01 * 25557032.0 * 4);
  EXPECT_EQ(m["gradients"].get<int64_t>(), parameters);
  EXPECT_EQ(m["optimizer"].get<int64_t>(), 2 * parameters);  // Adam's two moments
  const int64_t activations = m["activations"].get<int64_t>();
  EXPECT_GT(activations, 0);
  // At the end of the forward pass the weights, Adam's state and every saved activation are held at once.
  EXPECT_GE(j["peak_memory"].get<int64_t>(), 3 * parameters + activations);
  EXPECT_EQ(j["mode"], "training");
  EXPECT_EQ(j["batch"], 8);
  EXPECT_TRUE(j["fits"].get<bool>());
}

TEST(PlacectlMemory, ActivationsGrowWithTheBatchAndInferenceHoldsLess) {
  const nlohmann::json small = MemoryJson(kResnet + " --training --batch 2");
  const nlohmann::json large = MemoryJson(kResnet + " --training --batch 8");
  const nlohmann::json inference = MemoryJson(kResnet + " --batch 8");
  const double ratio = large["memory"]["activations"].get<double>() / small["memory"]["activations"].get<double>();
  EXPECT_NEAR(ratio, 4.0, 0.01);  // every saved activation has the batch as a dimension
  EXPECT_LT(inference["peak_memory"].get<int64_t>(), large["peak_memory"].get<int64_t>());
  EXPECT_EQ(inference["memory"]["gradients"].get<int64_t>(), 0);
}

TEST(PlacectlMemory, TableSaysWhetherItFitsTheDevice) {
  const auto fits = RunPlacectl("memory " + kEncoder + " --training --batch 2 --seq 16 --devices 1xA100");
  ASSERT_EQ(fits.exit_code, 0) << fits.err;
  EXPECT_THAT(fits.out, HasSubstr("what autograd saves for the backward"));
  EXPECT_THAT(fits.out, HasSubstr("fits in"));
  const nlohmann::json big = MemoryJson(kEncoder + " --training --batch 512 --seq 2048 --devices 1xT4");
  EXPECT_FALSE(big["fits"].get<bool>());
  const auto table = RunPlacectl("memory " + kEncoder + " --training --batch 512 --seq 2048 --devices 1xT4");
  EXPECT_THAT(table.out, HasSubstr("does not fit"));
}

TEST(PlacectlMemory, AStepThatDoesNotFitIsGivenTheLargestBatchThatDoes) {
  const nlohmann::json big = MemoryJson(kEncoder + " --training --batch 512 --seq 2048 --devices 1xT4");
  ASSERT_FALSE(big["fits"].get<bool>());
  ASSERT_TRUE(big.contains("batch_that_fits"));
  const int64_t batch = big["batch_that_fits"].get<int64_t>();
  EXPECT_GT(batch, 1);
  EXPECT_LT(batch, 512);
  const nlohmann::json suggested =
      MemoryJson(kEncoder + " --training --batch " + std::to_string(batch) + " --seq 2048 --devices 1xT4");
  EXPECT_TRUE(suggested["fits"].get<bool>()) << "the suggested batch must fit";
  const auto table = RunPlacectl("memory " + kEncoder + " --training --batch 512 --seq 2048 --devices 1xT4");
  EXPECT_THAT(table.out, HasSubstr("to fit: --batch " + std::to_string(batch)));
}

TEST(PlacectlMemory, AStepThatOneSampleOverflowsIsGivenADeviceCount) {
  const std::string topology = ::testing::TempDir() + "/small_gpu.json";
  {
    std::ofstream f(topology);
    f << R"({"devices": [{"preset": "T4", "memory": "256MiB"}]})";
  }
  const nlohmann::json j = MemoryJson(kResnet + " --training --batch 1 --topology " + topology);
  ASSERT_FALSE(j["fits"].get<bool>());
  ASSERT_TRUE(j.contains("devices_needed"));
  // Weights, gradients and Adam's state alone are 4 x 102 MB: at least two 256 MiB devices.
  EXPECT_GE(j["devices_needed"].get<int64_t>(), 2);
  EXPECT_GE(j["devices_needed"].get<int64_t>() * 256 * 1024 * 1024, j["peak_memory"].get<int64_t>());
}

TEST(PlacectlMemory, AutocastHoldsLessThanFloat32AndAConvertedModelHalvesItsWeights) {
  const nlohmann::json fp32 = MemoryJson(kResnet + " --training --batch 4");
  const nlohmann::json amp = MemoryJson(kResnet + " --training --batch 4 --precision amp_bf16");
  const nlohmann::json bf16 = MemoryJson(kResnet + " --training --batch 4 --precision bf16");
  EXPECT_EQ(amp["precision"], "amp_bf16");
  EXPECT_EQ(amp["memory"]["parameters"], fp32["memory"]["parameters"]);  // float32 master weights
  EXPECT_LT(amp["memory"]["activations"].get<int64_t>(), fp32["memory"]["activations"].get<int64_t>());
  EXPECT_LT(amp["peak_memory"].get<int64_t>(), fp32["peak_memory"].get<int64_t>());
  EXPECT_EQ(2 * bf16["memory"]["parameters"].get<int64_t>(), fp32["memory"]["parameters"].get<int64_t>());
  const auto bad = RunPlacectl("memory " + kResnet + " --precision int4");
  EXPECT_EQ(bad.exit_code, 2);  // a usage error, before the model is read
  EXPECT_THAT(bad.err, HasSubstr("unknown precision 'int4'"));
}

TEST(PlacectlMemory, APlacementRefusedForMemoryNamesTheCommandThatFindsABatch) {
  const auto r = RunPlacectl("place " + kEncoder + " --training --batch 512 --seq 2048 --devices 2xT4 --deadline 2s");
  EXPECT_EQ(r.exit_code, 4) << r.out;
  EXPECT_THAT(r.err, HasSubstr("memory"));
  // The global batch of 512 samples over two devices: micro-batches of 256, each what one device must hold.
  EXPECT_THAT(r.err, HasSubstr("`placectl memory " + kEncoder + " --training --batch 256 --devices 1xT4`"));
  EXPECT_THAT(r.err, HasSubstr("--micro_batch"));
  const auto operators =
      RunPlacectl("place " + kEncoder + " --training --batch 512 --seq 2048 --devices 2xT4 --deadline 2s "
                  "--parallelism operator");
  EXPECT_EQ(operators.exit_code, 4) << operators.out;
  EXPECT_THAT(operators.err, HasSubstr("`placectl memory " + kEncoder + " --training --batch 512 --devices 1xT4`"));
}

// The refusal computes a change that fits, and the change does fit.
TEST(PlacectlMemory, ARefusalsSuggestedMicroBatchFits) {
  const std::string request = "place " + kEncoder + " --training --batch 512 --seq 2048 --devices 2xT4 --deadline 2s";
  const auto refused = RunPlacectl(request);
  ASSERT_EQ(refused.exit_code, 4) << refused.out;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(refused.err, m, std::regex("so --micro_batch ([0-9]+) \\(a divisor of the global "
                                                           "batch 512\\) fits")))
      << refused.err;
  const auto fits = RunPlacectl(request + " --micro_batch " + m[1].str() + " --output json");
  ASSERT_EQ(fits.exit_code, 0) << fits.err;
  EXPECT_EQ(nlohmann::json::parse(fits.out)["micro_batch_size"], std::stoi(m[1].str()));

  const auto operators = RunPlacectl(request + " --parallelism operator");
  ASSERT_EQ(operators.exit_code, 4) << operators.out;
  ASSERT_TRUE(std::regex_search(operators.err, m, std::regex("--batch ([0-9]+) fits one such device"))) << operators.err;
  const auto smaller = RunPlacectl("memory " + kEncoder + " --training --seq 2048 --devices 1xT4 --output json --batch " +
                                   m[1].str());
  ASSERT_EQ(smaller.exit_code, 0) << smaller.err;
  const nlohmann::json j = nlohmann::json::parse(smaller.out);
  EXPECT_LE(j["peak_memory"].get<int64_t>(), j["capacity"].get<int64_t>());
}

int64_t Sum(const nlohmann::json& answer, const char* kind) {
  int64_t total = 0;
  for (const nlohmann::json& d : answer["devices"]) total += d["memory"][kind].get<int64_t>();
  return total;
}

// Under --objective throughput the placement runs as an asynchronous pipeline: every device keeps the activations
// of one micro-batch per device in flight, its peak says so, the breakdown adds up to it, and a batch whose
// activations do not fit is refused rather than answered "fits".
TEST(PlacectlMemory, ThroughputCountsTheActivationsOfTheMicroBatchesInFlight) {
  const std::string request = "place " + kResnet + " --training --batch 8 --devices 4xA100 --deadline 2s --output json";
  const auto pipelined = RunPlacectl(request + " --objective throughput");
  const auto step = RunPlacectl(request + " --parallelism operator");
  ASSERT_EQ(pipelined.exit_code, 0) << pipelined.err;
  ASSERT_EQ(step.exit_code, 0) << step.err;
  const nlohmann::json p = nlohmann::json::parse(pipelined.out), s = nlohmann::json::parse(step.out);
  for (const nlohmann::json& d : p["devices"]) {
    const nlohmann::json& m = d["memory"];
    EXPECT_EQ(m["parameters"].get<int64_t>() + m["gradients"].get<int64_t>() + m["optimizer"].get<int64_t>() +
                  m["activations"].get<int64_t>() + m["workspace"].get<int64_t>(),
              d["peak_memory"].get<int64_t>())
        << d["name"];
  }
  // What autograd keeps does not depend on where the operators run: four micro-batches of it in the pipeline.
  EXPECT_GT(Sum(s, "activations"), 0);
  EXPECT_EQ(Sum(p, "activations"), 4 * Sum(s, "activations"));
  EXPECT_EQ(Sum(p, "parameters"), Sum(s, "parameters"));

  const std::string vgg = std::string(PLACEMENT_SOURCE_DIR) + "/tests/data/corpus/vgg16.onnx";
  const auto too_large =
      RunPlacectl("place " + vgg + " --training --batch 256 --devices 4xT4 --deadline 2s --objective throughput");
  EXPECT_EQ(too_large.exit_code, 4) << too_large.out;
  EXPECT_THAT(too_large.err, HasSubstr("missing"));
}

// Where a plan option would make data parallelism fit, the refusal names it, and with it the step fits.
TEST(PlacectlMemory, ARefusalNamesThePlanOptionThatFits) {
  const std::string request = "place " + kEncoder + " --training --batch 32 --seq 2048 --devices 2xT4 --deadline 2s";
  const auto refused = RunPlacectl(request);
  ASSERT_EQ(refused.exit_code, 4) << refused.out;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(refused.err, m,
                                std::regex("data parallelism over the 2 devices fits with ((--[a-z]+ [a-z0-9]+ ?)+)")))
      << refused.err;
  const auto fits = RunPlacectl(request + " " + m[1].str() + " --output json");
  ASSERT_EQ(fits.exit_code, 0) << m[1].str() << ": " << fits.err;
  EXPECT_TRUE(nlohmann::json::parse(fits.out)["fits_memory"].get<bool>());
}

TEST(PlacectlMemory, BadRequestsAreNamed) {
  const auto two = RunPlacectl("memory " + kResnet + " " + kResnet);
  EXPECT_EQ(two.exit_code, 2);
  EXPECT_THAT(two.err, HasSubstr("memory takes exactly one GRAPH"));
  const auto missing = RunPlacectl("memory /nonexistent/model.onnx");
  EXPECT_EQ(missing.exit_code, 3);
  EXPECT_THAT(missing.err, HasSubstr("/nonexistent/model.onnx"));
  const auto output = RunPlacectl("memory " + kResnet + " --output yaml");
  EXPECT_NE(output.exit_code, 0);
  EXPECT_THAT(output.err, HasSubstr("--output 'yaml'"));
}

// The step_time answer's memory for a placement on one device is the memory command's peak: one accounting.
TEST(PlacectlMemory, StepTimeAnswerHoldsWhatTheMemoryCommandSays) {
  const auto r = RunPlacectl("place " + kResnet +
                             " --training --batch 4 --devices 1xA100 --algorithm single_device --output json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json step = nlohmann::json::parse(r.out);
  const nlohmann::json memory = MemoryJson(kResnet + " --training --batch 4 --devices 1xA100");
  EXPECT_EQ(step["devices"][0]["peak_memory"], memory["peak_memory"]);
  // The answer's breakdown is the memory command's.
  for (const char* kind : {"parameters", "gradients", "optimizer", "activations"}) {
    EXPECT_EQ(step["devices"][0]["memory"][kind], memory["memory"][kind]) << kind;
  }
}

}  // namespace
