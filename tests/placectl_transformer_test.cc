// placectl with a transformer's config.json: simulate --plan scores a plan, place searches the plan space, both in
// practitioners' terms (iteration time, tokens per second, MFU, memory per GPU by kind), and the command line's
// mistakes exit 2 naming what is wrong.
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
namespace fs = std::filesystem;

const std::string kSource = PLACEMENT_SOURCE_DIR;
const std::string kGpt = kSource + "/bench/megatron/configs/gpt-1.7b.json";

// A Llama-style 1.1B decoder (TinyLlama's config.json fields).
std::string LlamaConfig() {
  static const std::string path = [] {
    const fs::path p = fs::temp_directory_path() / ("placectl_llama_" + std::to_string(::getpid()) + ".json");
    std::ofstream(p) << R"({"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 2048,
      "intermediate_size": 5632, "num_attention_heads": 32, "num_hidden_layers": 22, "num_key_value_heads": 4,
      "max_position_embeddings": 2048, "rms_norm_eps": 1e-05, "vocab_size": 32000, "hidden_act": "silu",
      "tie_word_embeddings": false, "torch_dtype": "bfloat16"})";
    return p.string();
  }();
  return path;
}

TEST(PlacectlTransformer, SimulateScoresAPlanInPractitionersTerms) {
  auto r = RunPlacectl("simulate " + kGpt + " --devices 4x8xDGXA100 --batch 512 --seq 2048 --precision amp_bf16 "
                       "--plan tp=2,pp=1,dp=16,mbs=4,recompute=full,flash=0 --output json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["plan"]["text"], "tp=2,pp=1,vpp=1,dp=16,mbs=4,zero=0,recompute=full,sp=0,flash=0,overlap=1");
  const double step = j["step_time"].get<double>();
  EXPECT_GT(step, 0);
  EXPECT_DOUBLE_EQ(j["samples_per_second"].get<double>(), 512 / step);
  EXPECT_DOUBLE_EQ(j["tokens_per_second"].get<double>(), 512 * 2048 / step);
  EXPECT_GT(j["mfu"].get<double>(), 0.1);
  for (const char* kind : {"parameters", "gradients", "optimizer", "activations", "workspace"}) {
    EXPECT_GT(j["memory"][kind].get<int64_t>(), 0) << kind;
  }
  EXPECT_EQ(j["peak_memory"], j["memory"]["total"]);
  EXPECT_EQ(j["micro_batches"], 8);
  EXPECT_FALSE(j["communication"].empty());
}

TEST(PlacectlTransformer, PlaceFindsAPlanThatBeatsDataParallelismAndSaysWhy) {
  auto r = RunPlacectl("place " + LlamaConfig() + " --training --devices 2x8xH100 --batch 256 --seq 2048 "
                       "--precision amp_bf16 --deadline 10s");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("plan        tp="));
  EXPECT_THAT(r.out, HasSubstr("faster than plain data parallelism"));
  auto j = RunPlacectl("place " + LlamaConfig() + " --training --devices 2x8xH100 --batch 256 --seq 2048 "
                       "--precision amp_bf16 --output json");
  ASSERT_EQ(j.exit_code, 0) << j.err;
  const nlohmann::json answer = nlohmann::json::parse(j.out);
  EXPECT_LT(answer["step_time"].get<double>(), answer["search"]["data_parallel"]["step_time"].get<double>());
  EXPECT_TRUE(answer["memory"]["fits"].get<bool>());
}

TEST(PlacectlTransformer, PlaceHoldsTheKeysThePlanFixes) {
  auto r = RunPlacectl("place " + kGpt + " --training --devices 2x8xDGXA100 --batch 512 --precision amp_bf16 "
                       "--plan tp=4,recompute=full --output json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["plan"]["tp"], 4);
  EXPECT_EQ(j["plan"]["recompute"], "full");
}

TEST(PlacectlTransformer, ChartDrawsOnePipelineWithItsTensorParallelGroups) {
  const fs::path chart = fs::temp_directory_path() / ("placectl_tp_chart_" + std::to_string(::getpid()) + ".html");
  auto r = RunPlacectl("simulate " + kGpt + " --devices 4x8xDGXA100 --batch 512 --precision amp_bf16 "
                       "--plan tp=4,pp=2,vpp=2,dp=4,mbs=2,recompute=selective,sp=1,flash=0 --chart " + chart.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream in(chart);
  const std::string html((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  fs::remove(chart);
  EXPECT_THAT(html, HasSubstr("stage 0: host0/gpu0-3 (tp 4, dp 4)"));
  EXPECT_THAT(html, HasSubstr("stage 1: host2/gpu0-3 (tp 4, dp 4)"));
  EXPECT_THAT(html, HasSubstr("forward micro-batch 63, chunk 1"));
  EXPECT_THAT(html, HasSubstr("optimizer step"));
}

// An ONNX export of a Llama-style model (graph/onnx/tests/data/tiny_llama.onnx: 2 layers, 4 heads, 2 key/value
// heads) is recognized and planned like its config.json.
TEST(PlacectlTransformer, OnnxExportOfATransformerIsPlannedLayerByLayer) {
  const std::string llama = kSource + "/graph/onnx/tests/data/tiny_llama.onnx";
  auto r = RunPlacectl("place " + llama + " --training --devices 4xH100 --batch 64 --seq 128 --parallelism tensor "
                       "--output json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["plan"]["tp"], 4);
  EXPECT_EQ(j["model"]["kv_heads"], 2);
  EXPECT_THAT(j["notes"].dump(), HasSubstr("recognized in the ONNX graph: llama"));
  auto s = RunPlacectl("simulate " + llama + " --devices 4xH100 --batch 64 --seq 128 --plan tp=2,dp=2");
  ASSERT_EQ(s.exit_code, 0) << s.err;
  // Its default answer stays the operator graph's plans, and says where the layer-level ones are.
  auto d = RunPlacectl("place " + llama + " --training --devices 4xH100 --batch 8 --seq 64 --deadline 2s");
  ASSERT_EQ(d.exit_code, 0) << d.err;
  EXPECT_THAT(d.out, HasSubstr("this model is a llama transformer (2 layers, hidden 64): --parallelism tensor"));
  auto bad = RunPlacectl("simulate " + kSource + "/tests/data/corpus/resnet50.onnx --devices 4xH100 --batch 8 "
                         "--plan tp=4");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.err, HasSubstr("is not recognized as a transformer"));
}

TEST(PlacectlTransformer, ClustersPastATopologysSizeAreShapes) {
  auto r = RunPlacectl("simulate " + kSource + "/bench/megatron/configs/gpt-1008b.json --devices 384x8xDGXA100 "
                       "--batch 3072 --seq 2048 --precision amp_bf16 --plan tp=8,pp=64,dp=6,recompute=full,flash=0");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("3072 GPUs"));
}

TEST(PlacectlTransformer, MistakesExitTwoNamingWhatIsWrong) {
  const std::string base = "simulate " + kGpt + " --devices 4x8xDGXA100 --batch 512 ";
  const std::pair<std::string, std::string> cases[] = {
      {base + "--plan tp=2,pq=1", "unknown key 'pq'"},
      {base + "--plan tp=3,dp=8", "tp x pp x dp = 24 but the cluster has 32 GPUs"},
      {base + "--plan tp=1,dp=32,mbs=5", "not a multiple of dp x mbs"},
      {"place " + kGpt + " --training --devices 4x8xDGXA100 --batch 512 --sharding zero1",
       "--sharding (say zero=1..3 in --plan)"},
      {base + "--plan tp=1,dp=32 --objective throughput", "--objective (a transformer plan is scored by its"},
      {"simulate " + kGpt + " --devices 4x8xDGXA100 --plan tp=1,dp=32", "needs --batch"},
      {"simulate " + kGpt + " --batch 8 --plan tp=1,dp=1", "add --devices"},
      {"simulate " + kSource + "/examples/graphs/tiny_pipeline.json --devices 2xA100 --plan tp=2",
       "is not a Hugging Face config.json"},
      {"place " + kSource + "/examples/graphs/tiny_pipeline.json --devices 2xA100 --parallelism tensor",
       "--parallelism tensor plans a transformer's training step"},
  };
  for (const auto& [args, says] : cases) {
    auto r = RunPlacectl(args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.err;
    EXPECT_THAT(r.err, HasSubstr(says)) << args;
    EXPECT_TRUE(r.out.empty()) << args;
  }
}

TEST(PlacectlTransformer, APlanThatDoesNotFitSaysSoAndWhatToTry) {
  auto r = RunPlacectl("simulate " + kSource + "/bench/megatron/configs/gpt-18.4b.json --devices 1x8xDGXA100 "
                       "--batch 64 --precision amp_bf16 --plan tp=1,dp=8,mbs=8");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("DOES NOT FIT"));
  EXPECT_THAT(r.out, HasSubstr("try recompute=selective or full"));
}

}  // namespace
