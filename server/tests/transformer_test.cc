// A transformer's config.json through a real server (PlaceRequest.hf_config): the plan and figures equal the
// local search's, the repeat is a cache hit, the answer is counted under its own label, and what a config cannot
// take is refused by name.
#include <string>

#include <gmock/gmock.h>
#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>

#include "graph/cluster_shape.h"
#include "graph/topology_json.h"
#include "graph/transformer_spec.h"
#include "policy/parallel/transformer_search.h"
#include "server/tests/test_util.h"
#include "simulator/transformer_plan.h"

namespace placement::server {
namespace {

namespace pb = ::placement::v1;
using ::testing::HasSubstr;
using testing::PlaceOn;
using testing::StartReadyServer;
using testing::TempDir;
using testing::TestOptions;

const char kConfig[] = "bench/megatron/configs/gpt-1.7b.json";

pb::PlaceRequest ConfigRequest(const std::string& config_text, const std::string& devices, int64_t batch) {
  pb::PlaceRequest r;
  r.set_hf_config(config_text);
  r.mutable_topology()->set_shorthand(devices);
  r.mutable_options()->set_batch_size(batch);
  r.mutable_options()->set_training(true);
  r.set_budget_ms(20000);
  return r;
}

// The search placectl place runs, on the same inputs: seq from the config's positions, fp32.
parallel::TransformerSearchResult LocalSearch(const std::string& config_text, const std::string& devices,
                                              int64_t batch) {
  absl::StatusOr<TransformerSpec> spec = ParseHfConfig(config_text, "config");
  EXPECT_TRUE(spec.ok()) << spec.status();
  absl::StatusOr<Topology> topology = ParseTopologyShorthand(devices);
  EXPECT_TRUE(topology.ok()) << topology.status();
  absl::StatusOr<ClusterShape> cluster = ClusterShapeOf(*topology);
  EXPECT_TRUE(cluster.ok()) << cluster.status();
  transformer::TrainingRun run;
  run.seq = spec->max_positions;
  run.global_batch = batch;
  run.precision = Precision::kFp32;
  absl::StatusOr<parallel::TransformerSearchResult> search =
      parallel::SearchTransformerPlans(*spec, *cluster, run, {}, Budget::For(absl::Seconds(60)));
  EXPECT_TRUE(search.ok()) << search.status();
  return *std::move(search);
}

TEST(TransformerPlace, AConfigGetsTheLocalSearchsPlanAndTheRepeatIsACacheHit) {
  TempDir dir;
  auto server = StartReadyServer(TestOptions(dir.path()));
  ASSERT_NE(server, nullptr);
  const std::string config = testing::ReadSourceFile(kConfig);
  const pb::PlaceRequest request = ConfigRequest(config, "2x8xA100", 64);

  absl::StatusOr<pb::PlaceResponse> first = PlaceOn(server->port(), request);
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_TRUE(first->has_transformer());
  const pb::TransformerPlanAnswer& t = first->transformer();
  const parallel::TransformerSearchResult local = LocalSearch(config, "2x8xA100", 64);
  EXPECT_EQ(t.plan(), transformer::TransformerPlanString(local.best.plan));
  EXPECT_EQ(t.tp() * t.pp() * t.dp(), 16);
  EXPECT_TRUE(t.memory().fits());
  EXPECT_LE(t.memory().total(), t.memory().capacity());
  EXPECT_DOUBLE_EQ(t.iteration_seconds(), local.best.iteration_seconds);
  EXPECT_DOUBLE_EQ(t.tokens_per_second(), local.best.tokens_per_second);
  EXPECT_DOUBLE_EQ(t.mfu(), local.best.mfu);
  EXPECT_EQ(t.memory().total(), static_cast<int64_t>(local.best.memory.total()));
  EXPECT_EQ(t.communication_size(), static_cast<int>(local.best.communication.size()));
  EXPECT_EQ(t.plans_evaluated(), local.evaluated);
  EXPECT_EQ(t.plans_fitting(), local.fitting);
  EXPECT_TRUE(t.search_complete());
  EXPECT_EQ(t.reason(), local.reason);
  ASSERT_TRUE(local.data_parallel.ok());
  EXPECT_DOUBLE_EQ(t.data_parallel().iteration_seconds(), local.data_parallel->iteration_seconds);
  EXPECT_EQ(t.seq(), 2048);
  EXPECT_EQ(t.global_batch(), 64);
  EXPECT_EQ(t.gpus(), 16);
  EXPECT_EQ(t.gpus_per_host(), 8);
  EXPECT_EQ(t.precision(), "fp32");
  EXPECT_EQ(t.parameters(), ParameterCount(*ParseHfConfig(config, "config")));
  // The generic fields say the same.
  EXPECT_EQ(first->algorithm(), "transformer_search");
  EXPECT_DOUBLE_EQ(first->step_time(), t.iteration_seconds());
  EXPECT_DOUBLE_EQ(first->score().value(), t.iteration_seconds());
  EXPECT_EQ(first->num_devices(), 16);
  EXPECT_EQ(first->graph_hash().size(), 64u);
  EXPECT_FALSE(first->cache_hit());
  EXPECT_THAT(first->notes(), ::testing::Contains(HasSubstr("seq 2048 (the config's positions)")));

  absl::StatusOr<pb::PlaceResponse> again = PlaceOn(server->port(), request);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(again->cache_hit());
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(again->transformer(), t));

  // Holding a key fixed is another question: another key, another plan.
  pb::PlaceRequest fixed = request;
  fixed.set_transformer_plan("tp=2");
  absl::StatusOr<pb::PlaceResponse> tp2 = PlaceOn(server->port(), fixed);
  ASSERT_TRUE(tp2.ok()) << tp2.status();
  EXPECT_FALSE(tp2->cache_hit());
  EXPECT_EQ(tp2->transformer().tp(), 2);

  absl::StatusOr<std::string> metrics = testing::HttpGet(server->metrics_port(), "/metrics");
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  for (const char* expected : {"placement_request_duration_seconds_count{algorithm=\"transformer_search\","
                               "method=\"Place\"} 3",
                               "placement_cache_hits_total 1", "placement_cache_misses_total 2"}) {
    EXPECT_THAT(*metrics, HasSubstr(expected));
  }
}

TEST(TransformerPlace, WhatAConfigCannotTakeIsRefusedByName) {
  TempDir dir;
  auto server = StartReadyServer(TestOptions(dir.path()));
  ASSERT_NE(server, nullptr);
  const std::string config = testing::ReadSourceFile(kConfig);
  const pb::PlaceRequest good = ConfigRequest(config, "2x8xA100", 64);
  auto refused = [&](const pb::PlaceRequest& r, absl::StatusCode code, const std::string& says) {
    absl::StatusOr<pb::PlaceResponse> answer = PlaceOn(server->port(), r);
    ASSERT_FALSE(answer.ok());
    EXPECT_EQ(answer.status().code(), code) << answer.status();
    EXPECT_THAT(answer.status().message(), HasSubstr(says));
  };

  pb::PlaceRequest bad = good;
  bad.set_hf_config(R"({"model_type": "gpt2", "n_layer": -4, "n_embd": 768, "n_head": 12})");
  refused(bad, absl::StatusCode::kInvalidArgument, "hf_config");
  bad.set_hf_config("{not json");
  refused(bad, absl::StatusCode::kInvalidArgument, "hf_config");

  pb::PlaceRequest pipeline = good;
  pipeline.set_parallelism("pipeline");
  refused(pipeline, absl::StatusCode::kInvalidArgument, "parallelism: 'pipeline'");

  pb::PlaceRequest graph_options = good;
  graph_options.set_sharding("zero1");
  graph_options.set_algorithm("heft");
  graph_options.mutable_options()->set_costs("{}");
  refused(graph_options, absl::StatusCode::kInvalidArgument, "algorithm");
  refused(graph_options, absl::StatusCode::kInvalidArgument, "sharding (say zero=1..3 in transformer_plan)");
  refused(graph_options, absl::StatusCode::kInvalidArgument, "options.costs");
  pb::PlaceRequest micro_batch = good;
  micro_batch.set_micro_batch_size(4);
  refused(micro_batch, absl::StatusCode::kInvalidArgument, "micro_batch_size (say mbs=N in transformer_plan)");

  pb::PlaceRequest no_batch = good;
  no_batch.mutable_options()->clear_batch_size();
  refused(no_batch, absl::StatusCode::kInvalidArgument, "options.batch_size");

  pb::PlaceRequest no_cluster = good;
  no_cluster.clear_topology();
  refused(no_cluster, absl::StatusCode::kInvalidArgument, "topology");

  pb::PlaceRequest bad_keys = good;
  bad_keys.set_transformer_plan("tq=2");
  refused(bad_keys, absl::StatusCode::kInvalidArgument, "transformer_plan");

  // The keys of a transformer plan mean nothing to a graph.
  pb::PlaceRequest graph = testing::PlaceRequestFor(testing::ChainGraph(4), "2xA100", "heft");
  graph.set_transformer_plan("tp=2");
  refused(graph, absl::StatusCode::kInvalidArgument, "transformer_plan");

  // A trillion parameters on eight GPUs: the search's own message, what the lightest plan needs.
  pb::PlaceRequest huge = ConfigRequest(testing::ReadSourceFile("bench/megatron/configs/gpt-1008b.json"), "8xA100", 8);
  refused(huge, absl::StatusCode::kFailedPrecondition, "no plan fits");
}

}  // namespace
}  // namespace placement::server
