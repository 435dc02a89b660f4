// The cost_model option of Place and Simulate through a real server: Tarnawski et al.'s latency model scores
// what Place answers, enters the cache key, and its errors are INVALID_ARGUMENT naming what is wrong.
#include <memory>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "server/tests/test_util.h"

namespace placement::server {
namespace {

namespace pb = ::placement::v1;
using testing::ContextWithin;
using ::testing::HasSubstr;
using testing::PlaceOn;
using testing::SimulateOn;
using testing::StartReadyServer;
using testing::StubFor;
using testing::TempDir;
using testing::TestOptions;

class CostModelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = StartReadyServer(TestOptions(dir_.path()));
    ASSERT_NE(server_, nullptr);
  }
  pb::PlaceRequest TinyLatency(const std::string& cost_model) const {
    pb::PlaceRequest r;
    r.set_graph_json(testing::ReadSourceFile("examples/graphs/tiny_pipeline.json"));
    r.set_objective(pb::OBJECTIVE_LATENCY);
    r.set_cost_model(cost_model);
    r.set_budget_ms(2000);
    return r;
  }
  TempDir dir_;
  std::unique_ptr<PlacementServer> server_;
};

TEST_F(CostModelTest, TarnawskiAnswersAreTheirModelsAndHaveTheirOwnCacheKey) {
  absl::StatusOr<pb::PlaceResponse> placed = PlaceOn(server_->port(), TinyLatency("tarnawski"));
  ASSERT_TRUE(placed.ok()) << placed.status();
  EXPECT_EQ(placed->algorithm().rfind("auto:", 0), 0u) << placed->algorithm();
  EXPECT_FALSE(placed->cache_hit());
  // The published-style split (all on one accelerator per half) scores 17.6; AUTO does at least as well.
  EXPECT_LE(placed->score().value(), 17.6 + 1e-9);

  pb::SimulateRequest simulate;
  simulate.set_graph_json(TinyLatency("").graph_json());
  simulate.set_objective(pb::OBJECTIVE_LATENCY);
  simulate.set_cost_model("tarnawski");
  *simulate.mutable_assignment() = placed->assignment();
  absl::StatusOr<pb::SimulateResponse> scored = SimulateOn(server_->port(), simulate);
  ASSERT_TRUE(scored.ok()) << scored.status();
  EXPECT_DOUBLE_EQ(scored->score().value(), placed->score().value());

  absl::StatusOr<pb::PlaceResponse> again = PlaceOn(server_->port(), TinyLatency("tarnawski"));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(again->cache_hit());
  // The simulator's latency of the same request is another answer, not the cached one.
  absl::StatusOr<pb::PlaceResponse> simulated = PlaceOn(server_->port(), TinyLatency("default"));
  ASSERT_TRUE(simulated.ok()) << simulated.status();
  EXPECT_FALSE(simulated->cache_hit());
  EXPECT_EQ(simulated->algorithm().find("tarnawski"), std::string::npos) << simulated->algorithm();
}

TEST_F(CostModelTest, UnknownOrMismatchedCostModelsAreInvalidArguments) {
  absl::StatusOr<pb::PlaceResponse> unknown = PlaceOn(server_->port(), TinyLatency("roofline"));
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(unknown.status().message(), HasSubstr("cost_model"));
  EXPECT_THAT(unknown.status().message(), HasSubstr("roofline"));
  EXPECT_THAT(unknown.status().message(), HasSubstr("tarnawski"));

  pb::PlaceRequest throughput = TinyLatency("tarnawski");
  throughput.set_objective(pb::OBJECTIVE_THROUGHPUT);
  absl::StatusOr<pb::PlaceResponse> mismatched = PlaceOn(server_->port(), throughput);
  ASSERT_FALSE(mismatched.ok());
  EXPECT_EQ(mismatched.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(mismatched.status().message(), HasSubstr("latency"));

  pb::PlaceRequest heft = TinyLatency("tarnawski");
  heft.set_algorithm("heft");
  absl::StatusOr<pb::PlaceResponse> wrong_placer = PlaceOn(server_->port(), heft);
  ASSERT_FALSE(wrong_placer.ok());
  EXPECT_EQ(wrong_placer.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(wrong_placer.status().message(), HasSubstr("'heft'"));
}

TEST_F(CostModelTest, SimulateRejectsASplitTheirModelForbidsNamingTheAccelerators) {
  // a -> b and c -> d; acc0 = {a, d} and acc1 = {b, c} feed each other.
  const std::string graph = R"({"maxSizePerFPGA": 1000, "maxFPGAs": 2, "maxCPUs": 1, "nodes": [
      {"id": 1, "supportedOnFpga": 1, "cpuLatency": 10, "fpgaLatency": 1, "size": 1},
      {"id": 2, "supportedOnFpga": 1, "cpuLatency": 10, "fpgaLatency": 1, "size": 1},
      {"id": 3, "supportedOnFpga": 1, "cpuLatency": 10, "fpgaLatency": 1, "size": 1},
      {"id": 4, "supportedOnFpga": 1, "cpuLatency": 10, "fpgaLatency": 1, "size": 1}],
    "edges": [{"sourceId": 1, "destId": 2, "cost": 1}, {"sourceId": 3, "destId": 4, "cost": 1}]})";
  pb::SimulateRequest simulate;
  simulate.set_graph_json(graph);
  simulate.set_objective(pb::OBJECTIVE_LATENCY);
  simulate.set_cost_model("tarnawski");
  simulate.set_placement_json(R"({"fpgas": [{"nodes": [1, 4]}, {"nodes": [2, 3]}]})");
  absl::StatusOr<pb::SimulateResponse> scored = SimulateOn(server_->port(), simulate);
  ASSERT_FALSE(scored.ok());
  EXPECT_EQ(scored.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(scored.status().message(), HasSubstr("'acc0'"));
  EXPECT_THAT(scored.status().message(), HasSubstr("'acc1'"));
  // The same split under the default cost model is simply simulated.
  simulate.set_cost_model("");
  EXPECT_TRUE(SimulateOn(server_->port(), simulate).ok());
}

TEST_F(CostModelTest, ListAlgorithmsNamesTheCostModelsOfEachPlacer) {
  pb::ListAlgorithmsResponse list;
  auto context = ContextWithin();
  ASSERT_TRUE(StubFor(server_->port())->ListAlgorithms(context.get(), pb::ListAlgorithmsRequest(), &list).ok());
  bool greedy = false;
  for (const pb::AlgorithmInfo& a : list.algorithms()) {
    ASSERT_GT(a.cost_models_size(), 0) << a.name();
    if (a.name() == "tarnawski_greedy") {
      greedy = true;
      EXPECT_EQ(a.cost_models(0), "tarnawski");
    }
    if (a.name() == "heft") EXPECT_EQ(a.cost_models(0), "default");
  }
  EXPECT_TRUE(greedy);
}

}  // namespace
}  // namespace placement::server
