// The transformer plan search: no slower than a published plan in the same model, memory respected, plain data
// parallelism beaten where its gradient reduction dominates, refusals that say what to change.
#include "policy/parallel/transformer_search.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/time/clock.h"
#include "simulator/tests/transformer_specs.h"

namespace placement::parallel {
namespace {

using ::testing::HasSubstr;
using placement::testing::Gpt;
using transformer::TrainingRun;
using transformer::TransformerPlanResult;

// A Llama-style decoder of 1.1B parameters (TinyLlama's shape): grouped-query attention, a gated MLP, RMSNorm.
TransformerSpec LlamaOneBillion() {
  TransformerSpec s;
  s.model_type = "llama";
  s.layers = 22, s.hidden = 2048, s.heads = 32, s.kv_heads = 4, s.head_dim = 64, s.ffn = 5632, s.vocab = 32000;
  s.mlp = MlpKind::kGated, s.norm = NormKind::kRmsNorm, s.activation = "silu";
  s.tied_embeddings = false, s.attention_bias = false, s.mlp_bias = false;
  return s;
}

TransformerSearchOptions Fixed(const std::string& keys) {
  TransformerSearchOptions o;
  o.fixed = *transformer::ParseTransformerPlan(keys, &o.fixed_keys);
  return o;
}

TEST(TransformerSearch, FindsAPlanNoSlowerThanThePublishedOneForGpt175B) {
  const TransformerSpec spec = Gpt(96, 12288, 96);
  const ClusterShape cluster = *ParseClusterShape("8x8xDGXA100");
  const TrainingRun run{.seq = 2048, .global_batch = 64};
  const TransformerSearchOptions options = Fixed("flash=0,overlap=0");
  absl::StatusOr<TransformerPlanResult> published = transformer::EvaluateTransformerPlan(
      spec, cluster, run, *transformer::ParseTransformerPlan("tp=8,pp=8,vpp=3,dp=1,mbs=1,recompute=selective,sp=1,"
                                                             "flash=0,overlap=0"));
  ASSERT_TRUE(published.ok()) << published.status();
  absl::StatusOr<TransformerSearchResult> found =
      SearchTransformerPlans(spec, cluster, run, options, Budget::For(absl::Minutes(2)));
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_TRUE(found->complete);
  EXPECT_TRUE(found->best.fits);
  EXPECT_LE(found->best.iteration_seconds, published->iteration_seconds);
  EXPECT_LE(found->best.memory.total(), found->best.memory_capacity);
  EXPECT_FALSE(found->best.plan.flash_attention);  // held fixed
}

TEST(TransformerSearch, BeatsPlainDataParallelismForALlamaOnTwoHosts) {
  const ClusterShape cluster = *ParseClusterShape("2x8xH100");
  const TrainingRun run{.seq = 2048, .global_batch = 256};
  absl::StatusOr<TransformerSearchResult> found =
      SearchTransformerPlans(LlamaOneBillion(), cluster, run, TransformerSearchOptions{}, Budget::For(absl::Minutes(2)));
  ASSERT_TRUE(found.ok()) << found.status();
  ASSERT_TRUE(found->data_parallel.ok()) << found->data_parallel.status();
  EXPECT_LT(found->best.iteration_seconds, found->data_parallel->iteration_seconds);
  EXPECT_THAT(found->reason, HasSubstr("faster than plain data parallelism"));
}

TEST(TransformerSearch, TensorOnlyKeepsEveryGpuInOneGroup) {
  const ClusterShape cluster = *ParseClusterShape("8xH100");
  TransformerSearchOptions options;
  options.tensor_only = true;
  absl::StatusOr<TransformerSearchResult> found = SearchTransformerPlans(
      Gpt(24, 2048, 16), cluster, TrainingRun{.seq = 1024, .global_batch = 32}, options, Budget::For(absl::Minutes(1)));
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_EQ(found->best.plan.tp, 8);
  EXPECT_EQ(found->best.plan.pp, 1);
  EXPECT_EQ(found->best.plan.dp, 1);
}

TEST(TransformerSearch, SaysWhatToChangeWhenNothingFits) {
  const ClusterShape cluster = *ParseClusterShape("1xA100");
  absl::StatusOr<TransformerSearchResult> found =
      SearchTransformerPlans(Gpt(96, 12288, 96), cluster, TrainingRun{.seq = 2048, .global_batch = 8},
                             TransformerSearchOptions{}, Budget::For(absl::Minutes(1)));
  ASSERT_FALSE(found.ok());
  EXPECT_EQ(found.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(found.status().message(), HasSubstr("no plan fits"));
  EXPECT_THAT(found.status().message(), HasSubstr("use more GPUs (--devices)"));
}

TEST(TransformerSearch, RefusesAClusterNoPlanTiles) {
  const ClusterShape cluster = *ParseClusterShape("7xA100");
  absl::StatusOr<TransformerSearchResult> found =
      SearchTransformerPlans(Gpt(24, 2048, 16), cluster, TrainingRun{.seq = 1024, .global_batch = 32},
                             TransformerSearchOptions{}, Budget::For(absl::Minutes(1)));
  ASSERT_FALSE(found.ok());
  EXPECT_EQ(found.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(found.status().message(), HasSubstr("no plan tiles 7 GPUs"));
}

// The repeated layers are priced once per plan, so even a trillion parameters on 3,072 GPUs is searched whole
// within a budget far above what it needs (docs/BENCHMARKS.md has the time).
TEST(TransformerSearch, SearchesATrillionParametersOnThousandsOfGpusCompletely) {
  absl::StatusOr<TransformerSearchResult> found =
      SearchTransformerPlans(Gpt(128, 25600, 160), *ParseClusterShape("384x8xDGXA100"),
                             TrainingRun{.seq = 2048, .global_batch = 3072}, TransformerSearchOptions{},
                             Budget::For(absl::Minutes(5)));
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_TRUE(found->complete);
  EXPECT_TRUE(found->best.fits);
  EXPECT_GT(found->evaluated, 1000);
}

}  // namespace
}  // namespace placement::parallel
