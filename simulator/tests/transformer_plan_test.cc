// The layer-level plan model: its saved bytes against Korthikanti et al.'s activation formulas (derived from the
// same tensors), the plan text, refusals naming what does not divide, and what recomputation, sharding and
// sequence parallelism each change.
#include "simulator/transformer_plan.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "graph/cluster_shape.h"
#include "graph/file_io.h"
#include "simulator/transformer_layers.h"
#include "simulator/tests/transformer_specs.h"

namespace placement::transformer {
namespace {

using ::testing::HasSubstr;
using placement::testing::Gpt;

double Kept(const std::vector<LayerKernel>& kernels, bool with_core) {
  double bytes = 0;
  for (const LayerKernel& k : kernels) bytes += k.saved + (with_core ? k.core_saved : 0);
  return bytes;
}

// The 22B model of Korthikanti et al.: s = 2048, b = 4, h = 6144, a = 64, t = 8.
TEST(TransformerLayers, SavedBytesReproduceKorthikantiFormulas) {
  const TransformerSpec spec = Gpt(48, 6144, 64);
  const double s = 2048, b = 4, h = 6144, a = 64, t = 8;
  const double sbh = s * b * h;
  LayerShape shape{.micro_batch = 4, .seq = 2048, .tp = 1};
  EXPECT_DOUBLE_EQ(Kept(LayerKernels(spec, shape), true), sbh * (34 + 5 * a * s / h));
  shape.tp = 8;
  EXPECT_DOUBLE_EQ(Kept(LayerKernels(spec, shape), true), sbh * (10 + 24 / t + 5 * a * s / (h * t)));
  shape.sequence_parallel = true;
  EXPECT_DOUBLE_EQ(Kept(LayerKernels(spec, shape), true), sbh / t * (34 + 5 * a * s / h));
  // Selective recomputation drops the seq x seq part: 34 sbh / t.
  EXPECT_DOUBLE_EQ(Kept(LayerKernels(spec, shape), false), 34 * sbh / t);
}

TEST(TransformerLayers, ParametersPerGpuAddUpToTheModel) {
  const TransformerSpec spec = Gpt(24, 1024, 16);
  const LayerParameters whole = ParametersPerGpu(spec, 1);
  const double h = 1024, v = 51200, layer = 12 * h * h + 13 * h;  // GPT-2's layer with biases and two norms
  EXPECT_DOUBLE_EQ(whole.per_layer, layer);
  EXPECT_DOUBLE_EQ(whole.embedding, v * h + 2048 * h);
  EXPECT_DOUBLE_EQ(whole.head, 2 * h);  // the final norm; the output layer is the tied embedding
  const LayerParameters split = ParametersPerGpu(spec, 8);
  EXPECT_NEAR(split.per_layer * 8, layer, 6 * h * 8);  // what tp replicates: norms and two biases
}

// The plan model's parameters per GPU, at tp = 1, add up to the transformers classes' counts of every published
// config the tests carry (graph/tests/data/hf_configs) that layer-level plans cover.
TEST(TransformerLayers, ParametersPerGpuMatchThePublishedModelsCounts) {
  const std::string dir = std::string(PLACEMENT_SOURCE_DIR) + "/graph/tests/data/hf_configs/";
  for (const char* name : {"gpt2", "gpt2-medium", "pythia-160m", "llama-2-7b-hf", "tinyllama-1.1b", "mistral-7b-v0.1",
                           "mixtral-8x7b-v0.1", "qwen2-0.5b", "bert-base-uncased"}) {
    absl::StatusOr<std::string> text = ReadWholeFile(dir + name + ".json");
    ASSERT_TRUE(text.ok()) << text.status();
    absl::StatusOr<TransformerSpec> spec = ParseHfConfig(*text, name);
    ASSERT_TRUE(spec.ok()) << spec.status();
    const LayerParameters p = ParametersPerGpu(*spec, 1);
    const double total = p.per_layer * static_cast<double>(spec->layers) + p.embedding + p.head;
    EXPECT_DOUBLE_EQ(total, static_cast<double>(ParameterCount(*spec))) << name;
  }
}

// Grouped-query attention with fewer key/value heads than tp: each GPU holds one whole key/value head.
TEST(TransformerLayers, KeyValueHeadsAreReplicatedPastTheirCount) {
  TransformerSpec spec = Gpt(22, 2048, 32);
  spec.kv_heads = 4, spec.head_dim = 64;
  const auto qkv_columns = [&](int64_t tp) {
    for (const LayerKernel& k : LayerKernels(spec, LayerShape{.tp = tp})) {
      if (std::string(k.name) == "qkv") return k.n;
    }
    return 0.0;
  };
  EXPECT_DOUBLE_EQ(qkv_columns(4), (2048 + 2 * 4 * 64) / 4.0);
  EXPECT_DOUBLE_EQ(qkv_columns(8), 2048 / 8.0 + 2 * 64);
}

TEST(TransformerPlanText, ParsesEveryKeyAndPrintsItBack) {
  absl::StatusOr<TransformerPlan> p =
      ParseTransformerPlan("tp=8, pp=4,vpp=2,dp=2,mbs=2,zero=1,recompute=selective,sp=1,flash=0,overlap=0");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(TransformerPlanString(*p), "tp=8,pp=4,vpp=2,dp=2,mbs=2,zero=1,recompute=selective,sp=1,flash=0,overlap=0");
  std::vector<std::string> keys;
  ASSERT_TRUE(ParseTransformerPlan("dp=4,recompute=full", &keys).ok());
  EXPECT_THAT(keys, ::testing::ElementsAre("dp", "recompute"));
}

TEST(TransformerPlanText, RefusesWhatItCannotRead) {
  const std::pair<const char*, const char*> cases[] = {
      {"tp=8,pq=2", "unknown key 'pq'"},        {"tp=0", "tp=0 is not a whole number from 1"},
      {"zero=4", "zero=4"},                      {"recompute=some", "not one of none, selective, full"},
      {"tp=2,tp=4", "'tp' is given twice"},      {"sp=yes", "must be 0 or 1"},
      {"tp8", "is not KEY=VALUE"},               {"", "empty"}};
  for (const auto& [text, says] : cases) {
    absl::StatusOr<TransformerPlan> p = ParseTransformerPlan(text);
    ASSERT_FALSE(p.ok()) << text;
    EXPECT_THAT(p.status().message(), HasSubstr(says)) << text;
  }
}

class TransformerPlanModel : public ::testing::Test {
 protected:
  TransformerPlanResult Evaluate(const std::string& plan, int64_t hosts = 1, int64_t global_batch = 64) {
    absl::StatusOr<ClusterShape> cluster = ParseClusterShape(absl::StrCat(hosts, "x8xDGXA100"));
    EXPECT_TRUE(cluster.ok());
    absl::StatusOr<TransformerPlan> p = ParseTransformerPlan(plan);
    EXPECT_TRUE(p.ok()) << p.status();
    absl::StatusOr<TransformerPlanResult> r =
        EvaluateTransformerPlan(spec_, *cluster, TrainingRun{.seq = 2048, .global_batch = global_batch}, *p);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.value_or(TransformerPlanResult{});
  }
  TransformerSpec spec_ = Gpt(32, 4096, 32);
};

TEST_F(TransformerPlanModel, RefusesPlansThatDoNotTileTheClusterOrTheModel) {
  const ClusterShape cluster = *ParseClusterShape("2x8xDGXA100");
  const TrainingRun run{.seq = 2048, .global_batch = 64};
  const std::pair<const char*, const char*> cases[] = {
      {"tp=8,pp=1,dp=1", "tp x pp x dp = 8 but the cluster has 16 GPUs"},
      {"tp=8,pp=2,dp=1,mbs=3", "not a multiple of dp x mbs"},
      {"tp=8,pp=2,vpp=32,dp=1", "does not divide the 32 layers"},
      {"tp=1,pp=1,dp=16,sp=1", "sp=1"}};
  for (const auto& [text, says] : cases) {
    absl::StatusOr<TransformerPlanResult> r = EvaluateTransformerPlan(spec_, cluster, run, *ParseTransformerPlan(text));
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << text;
    EXPECT_THAT(r.status().message(), HasSubstr(says)) << text;
  }
  TransformerSpec odd = spec_;
  odd.heads = odd.kv_heads = 12, odd.head_dim = 4096 / 12;
  absl::StatusOr<TransformerPlanResult> r = EvaluateTransformerPlan(odd, cluster, run, *ParseTransformerPlan("tp=8,dp=2"));
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("does not divide the 12 attention heads"));
}

TEST_F(TransformerPlanModel, FullRecomputationRunsTheForwardAgainAndKeepsOnlyLayerInputs) {
  const TransformerPlanResult none = Evaluate("tp=8,mbs=1,recompute=none,flash=0");
  const TransformerPlanResult full = Evaluate("tp=8,mbs=1,recompute=full,flash=0");
  // The layers' forward again (not the embedding's or the output layer's), with its collectives.
  EXPECT_GT(full.parts.recompute, 0.8 * none.parts.forward);
  EXPECT_LT(full.parts.recompute, none.parts.forward + none.parts.tensor_parallel / 2);
  EXPECT_GT(full.iteration_seconds, none.iteration_seconds + 0.9 * none.parts.forward);
  const double layer_input = 2048.0 * 4096 * 2;  // bf16, one sequence
  // Every layer's input kept, plus one layer's activations while it is recomputed.
  EXPECT_LT(full.memory.activations, 0.2 * none.memory.activations);
  EXPECT_GE(full.memory.activations, 32 * layer_input);
  EXPECT_NEAR(full.hfu / full.mfu, 4.0 / 3.0, 0.01);  // a fourth forward's FLOPs done, not counted as model FLOPs
}

TEST_F(TransformerPlanModel, SelectiveRecomputationDropsOnlyAttentionsSeqBySeqTensors) {
  const TransformerPlanResult none = Evaluate("tp=8,recompute=none,flash=0");
  const TransformerPlanResult selective = Evaluate("tp=8,recompute=selective,flash=0");
  const double s = 2048, a = 32, t = 8;
  const double per_layer_drop = 5 * a * s * s / t;  // 5as^2b/t bytes, b = 1
  EXPECT_NEAR(none.memory.activations - selective.memory.activations, 32 * per_layer_drop, 1e-6 * per_layer_drop);
  EXPECT_GT(selective.parts.recompute, 0);
  // Korthikanti et al. measured about a fifth of the layer's forward for the 22B model (Table 4).
  EXPECT_LT(selective.parts.recompute, 0.3 * none.parts.forward);
}

TEST_F(TransformerPlanModel, ZeroStagesShardStateOverDataParallelReplicas) {
  const TransformerPlanResult z0 = Evaluate("tp=2,dp=4,zero=0");
  const TransformerPlanResult z1 = Evaluate("tp=2,dp=4,zero=1");
  const TransformerPlanResult z2 = Evaluate("tp=2,dp=4,zero=2");
  const TransformerPlanResult z3 = Evaluate("tp=2,dp=4,zero=3");
  EXPECT_DOUBLE_EQ(z1.memory.optimizer, z0.memory.optimizer / 4);
  EXPECT_DOUBLE_EQ(z1.memory.gradients, z0.memory.gradients);
  EXPECT_DOUBLE_EQ(z2.memory.gradients, z0.memory.gradients / 4);
  EXPECT_DOUBLE_EQ(z3.memory.parameters, z0.memory.parameters / 4);
  EXPECT_LT(z1.parts.optimizer, z0.parts.optimizer);  // each replica steps a quarter of the state
  EXPECT_GT(z3.communication.back().bytes, z1.communication.back().bytes);  // weights gathered per micro-batch
}

TEST_F(TransformerPlanModel, SequenceParallelismSplitsActivationsAtTheSameCommunicationVolume) {
  const TransformerPlanResult plain = Evaluate("tp=8,recompute=selective,flash=0");
  const TransformerPlanResult sp = Evaluate("tp=8,recompute=selective,sp=1,flash=0");
  EXPECT_LT(sp.memory.activations, 0.6 * plain.memory.activations);
  // Reduce-scatter plus all-gather move what one all-reduce moves; the backward's extra gather adds a share.
  EXPECT_GT(sp.parts.tensor_parallel, 0.9 * plain.parts.tensor_parallel);
  EXPECT_LT(sp.parts.tensor_parallel, 1.6 * plain.parts.tensor_parallel);
}

TEST_F(TransformerPlanModel, PipelineBubbleShrinksWithInterleaving) {
  const TransformerPlanResult plain = Evaluate("tp=8,pp=2,dp=1,vpp=1", 2, 16);
  const TransformerPlanResult interleaved = Evaluate("tp=8,pp=2,dp=1,vpp=4", 2, 16);
  EXPECT_NEAR(interleaved.parts.pipeline_bubble, plain.parts.pipeline_bubble / 4, 0.05 * plain.parts.pipeline_bubble);
  EXPECT_GT(interleaved.parts.pipeline_send, plain.parts.pipeline_send);
}

// The closed form of the pipeline's time against Megatron-LM's order laid out pass by pass from the same stage
// times: they differ only by the sends, which the closed form charges to every micro-batch and the schedule only
// where a pass waits for one.
TEST_F(TransformerPlanModel, PipelineTimeAgreesWithTheScheduleLaidOutPassByPass) {
  for (const char* plan : {"tp=8,pp=2,dp=1,vpp=1", "tp=8,pp=2,dp=1,vpp=4", "tp=4,pp=4,dp=1,vpp=2,recompute=full"}) {
    const TransformerPlanResult r = Evaluate(plan, 2, 16);
    absl::StatusOr<PipelineTimeline> t = SchedulePipeline(r.stage_times, r.micro_batches,
                                                          static_cast<int32_t>(r.plan.vpp), r.send_seconds);
    ASSERT_TRUE(t.ok()) << t.status();
    const double closed = r.iteration_seconds - r.parts.data_parallel - r.parts.optimizer;
    EXPECT_LE(t->makespan, closed + 1e-9) << plan;
    EXPECT_GE(t->makespan, closed - r.parts.pipeline_send - 1e-9) << plan;
  }
}

// Four stages of four data-parallel GPUs on two hosts of eight: stages 1 and 2 meet across the network, so the
// pipeline's sends are priced there, as when every boundary crosses hosts; inside one host they stay on NVLink.
TEST_F(TransformerPlanModel, PipelineSendsCrossTheNetworkWherePipelineSpansHosts) {
  const auto pipeline_link = [](const TransformerPlanResult& r) {
    for (const CommunicationVolume& c : r.communication) {
      if (c.kind == "pipeline") return c.link;
    }
    return std::string("none");
  };
  const TransformerPlanResult spanning = Evaluate("tp=1,pp=4,dp=4", 2, 64);
  EXPECT_EQ(pipeline_link(spanning), "network");
  const TransformerPlanResult apart = Evaluate("tp=4,pp=4,dp=1", 2, 64);
  EXPECT_EQ(pipeline_link(apart), "network");
  // A micro-batch's activations (2048 x 4096 bf16) over a quarter of a DGX A100's 200 GB/s of adapters (the four
  // GPUs of the boundary stage share them), at the collectives' 0.8, plus the network's latency.
  EXPECT_NEAR(spanning.send_seconds, 5e-6 + 2048.0 * 4096 * 2 / (200e9 / 4 * 0.8), 1e-12);
  const TransformerPlanResult inside = Evaluate("tp=1,pp=4,dp=2", 1, 64);
  EXPECT_EQ(pipeline_link(inside), "intra_host");
}

TEST_F(TransformerPlanModel, ThroughputFiguresFollowFromTheIterationTime) {
  const TransformerPlanResult r = Evaluate("tp=4,dp=2,mbs=2", 1, 64);
  EXPECT_DOUBLE_EQ(r.samples_per_second, 64 / r.iteration_seconds);
  EXPECT_DOUBLE_EQ(r.tokens_per_second, 64 * 2048 / r.iteration_seconds);
  EXPECT_EQ(r.micro_batches, 16);
  EXPECT_GT(r.mfu, 0.2);
  EXPECT_LT(r.mfu, 0.8);
  EXPECT_TRUE(r.fits);
}

}  // namespace
}  // namespace placement::transformer
