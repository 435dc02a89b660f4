// Plans of data-parallel stages through a real server: the answer's stages, the plan options in the cache key,
// their errors, and Simulate under PipeDream's cost model.
#include <set>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "server/tests/test_util.h"

namespace placement::server {
namespace {

namespace pb = ::placement::v1;
using testing::ContextWithin;
using ::testing::HasSubstr;
using testing::PlaceRequestFor;
using testing::StartReadyServer;
using testing::StubFor;
using testing::TempDir;
using testing::TestOptions;

absl::StatusOr<pb::PlaceResponse> Place(int port, const pb::PlaceRequest& request) {
  return testing::PlaceOn(port, request);
}

// A training step of a 12-operator chain, planned on 8 GPUs of two hosts.
pb::PlaceRequest PlanRequest(const std::string& parallelism) {
  pb::PlaceRequest r = PlaceRequestFor(testing::ChainGraph(12), "2x4xA100", "hybrid_dp");
  r.set_objective(pb::OBJECTIVE_THROUGHPUT);
  r.mutable_options()->set_training(true);
  r.set_parallelism(parallelism);
  r.set_budget_ms(20000);
  return r;
}

TEST(PlacePlan, AnswerListsTheStagesAndTheOptionsKeyTheCache) {
  TempDir dir;
  auto server = StartReadyServer(TestOptions(dir.path()));
  ASSERT_NE(server, nullptr);
  const pb::PlaceRequest request = PlanRequest("hybrid");
  absl::StatusOr<pb::PlaceResponse> first = Place(server->port(), request);
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_GT(first->stages_size(), 0);
  std::set<std::string> operators, devices;
  for (const pb::Stage& stage : first->stages()) {
    EXPECT_GT(stage.operators_size(), 0);
    EXPECT_GT(stage.devices_size(), 0);
    EXPECT_GT(stage.period_seconds(), 0);
    operators.insert(stage.operators().begin(), stage.operators().end());
    for (const std::string& d : stage.devices()) EXPECT_TRUE(devices.insert(d).second) << d << " in two groups";
  }
  EXPECT_EQ(static_cast<int>(operators.size()), first->num_operators());
  EXPECT_EQ(first->schedule(), "1f1b");
  EXPECT_EQ(first->cost_model(), "default");
  EXPECT_GT(first->simulated_value(), 0);
  EXPECT_GT(first->score().value(), 0);

  absl::StatusOr<pb::PlaceResponse> again = Place(server->port(), request);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(again->cache_hit());
  // Each plan option is its own answer.
  pb::PlaceRequest pipedream = request;
  pipedream.set_cost_model("pipedream");
  absl::StatusOr<pb::PlaceResponse> theirs = Place(server->port(), pipedream);
  ASSERT_TRUE(theirs.ok()) << theirs.status();
  EXPECT_FALSE(theirs->cache_hit());
  EXPECT_EQ(theirs->cost_model(), "pipedream");
  pb::PlaceRequest batched = request;
  batched.set_global_batch(8);
  absl::StatusOr<pb::PlaceResponse> step = Place(server->port(), batched);
  ASSERT_TRUE(step.ok()) << step.status();
  EXPECT_FALSE(step->cache_hit());
  EXPECT_GT(step->step_time(), 0);
  // A run of a graph with fixed costs is one sample: 8 samples a step.
  EXPECT_EQ(step->micro_batch_size(), 1);
  EXPECT_NEAR(step->samples_per_second(), 8 / step->step_time(), 1e-9 * 8 / step->step_time());
  // Every replica holds its stage's memory, by kind, adding up to its peak.
  for (const pb::DeviceScore& d : step->score().devices()) {
    const pb::MemoryBreakdown& m = d.memory();
    EXPECT_EQ(
        m.parameters_bytes() + m.gradients_bytes() + m.optimizer_bytes() + m.activations_bytes() + m.workspace_bytes(),
        d.peak_memory_bytes())
        << d.device();
  }
  // Sharding is its own answer, and says so; each replica holds its share of the optimizer's state.
  pb::PlaceRequest weighted = batched;
  for (pb::Operator& op : *weighted.mutable_graph()->mutable_operators()) op.set_param_bytes(4'000'000);
  weighted.set_parallelism("data");
  pb::PlaceRequest sharded = weighted;
  sharded.set_sharding("zero1");
  absl::StatusOr<pb::PlaceResponse> whole = Place(server->port(), weighted);
  absl::StatusOr<pb::PlaceResponse> zero1 = Place(server->port(), sharded);
  ASSERT_TRUE(whole.ok()) << whole.status();
  ASSERT_TRUE(zero1.ok()) << zero1.status();
  EXPECT_FALSE(zero1->cache_hit());
  EXPECT_EQ(zero1->sharding(), "zero1");
  EXPECT_EQ(whole->sharding(), "none");
  int64_t optimizer = 0, shared = 0;
  for (const pb::DeviceScore& d : whole->score().devices()) optimizer += d.memory().optimizer_bytes();
  for (const pb::DeviceScore& d : zero1->score().devices()) shared += d.memory().optimizer_bytes();
  pb::PlaceRequest recomputed = weighted;
  recomputed.set_recompute("full");
  absl::StatusOr<pb::PlaceResponse> full = Place(server->port(), recomputed);
  ASSERT_TRUE(full.ok()) << full.status();
  EXPECT_FALSE(full->cache_hit());
  EXPECT_EQ(full->recompute(), "full");
  EXPECT_EQ(whole->recompute(), "none");
  ASSERT_GT(optimizer, 0);
  EXPECT_LT(shared, optimizer);
}

TEST(PlacePlan, BadPlanOptionsAreInvalidArgumentsNamingWhatIsWrong) {
  TempDir dir;
  auto server = StartReadyServer(TestOptions(dir.path()));
  ASSERT_NE(server, nullptr);
  pb::PlaceRequest sideways = PlanRequest("sideways");
  absl::Status s = Place(server->port(), sideways).status();
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("sideways"));

  pb::PlaceRequest step_time = PlanRequest("hybrid");
  step_time.set_objective(pb::OBJECTIVE_STEP_TIME);
  EXPECT_TRUE(absl::IsInvalidArgument(Place(server->port(), step_time).status()));

  pb::PlaceRequest gpipe = PlanRequest("hybrid");
  gpipe.set_schedule("gpipe");
  s = Place(server->port(), gpipe).status();
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("global batch"));

  pb::PlaceRequest small_batch = PlanRequest("data");
  small_batch.set_global_batch(4);  // 8 replicas
  s = Place(server->port(), small_batch).status();
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("stage 1"));

  pb::PlaceRequest unbatched = PlanRequest("data");
  unbatched.set_sharding("zero2");
  s = Place(server->port(), unbatched).status();
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("sharding zero2"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("give a global batch"));

  pb::PlaceRequest operator_pipedream = PlaceRequestFor(testing::ChainGraph(12), "4xA100");
  operator_pipedream.set_objective(pb::OBJECTIVE_THROUGHPUT);
  operator_pipedream.set_cost_model("pipedream");
  EXPECT_TRUE(absl::IsInvalidArgument(Place(server->port(), operator_pipedream).status()));
}

TEST(SimulatePlan, PlacementScoresUnderPipeDreamsCostModel) {
  TempDir dir;
  auto server = StartReadyServer(TestOptions(dir.path()));
  ASSERT_NE(server, nullptr);
  pb::SimulateRequest request;
  *request.mutable_graph() = testing::ChainGraph(4);
  request.mutable_topology()->set_shorthand("2xA100");
  request.set_objective(pb::OBJECTIVE_THROUGHPUT);
  for (int i = 0; i < 4; ++i) {
    pb::Assignment* a = request.add_assignment();
    a->set_op("op" + std::to_string(i));
    a->set_device(i < 2 ? "gpu0" : "gpu1");
  }
  request.set_cost_model("pipedream");
  auto context = ContextWithin();
  pb::SimulateResponse response;
  grpc::Status s = StubFor(server->port())->Simulate(context.get(), request, &response);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_GT(response.score().value(), 0);

  request.set_objective(pb::OBJECTIVE_STEP_TIME);
  auto again = ContextWithin();
  s = StubFor(server->port())->Simulate(again.get(), request, &response);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  request.set_cost_model("nonsense");
  auto third = ContextWithin();
  s = StubFor(server->port())->Simulate(third.get(), request, &response);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("cost_model"));
}

// A training step on several accelerators that leaves the plan to the service gets the plan people would run, as
// placectl's default gives it: the global batch (options.batch_size, in samples) split into micro-batches, data,
// pipeline and hybrid plans and operator placement compared per step; operator placement stays one field away.
// A training step of the ONNX model at `path` (from the source tree) on `devices`, at a global batch in samples.
pb::PlaceRequest TrainingStep(const std::string& path, const std::string& devices, int64_t batch) {
  pb::PlaceRequest request;
  request.set_onnx(testing::ReadSourceFile(path));
  request.mutable_topology()->set_shorthand(devices);
  request.mutable_options()->set_training(true);
  request.mutable_options()->set_batch_size(batch);
  request.set_budget_ms(20000);
  return request;
}

TEST(PlacePlan, TrainingOnSeveralAcceleratorsDefaultsToTheFastestPlanAtTheGlobalBatch) {
  TempDir dir;
  auto server = StartReadyServer(TestOptions(dir.path()));
  ASSERT_NE(server, nullptr);
  pb::PlaceRequest request = TrainingStep("tests/data/corpus/resnet50.onnx", "8xH100", 128);
  absl::StatusOr<pb::PlaceResponse> plan = Place(server->port(), request);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_GT(plan->stages_size(), 0);
  EXPECT_EQ(plan->global_batch() * plan->micro_batch_size(), 128);
  EXPECT_EQ(plan->micro_batch_size(), 16);
  EXPECT_GT(plan->samples_per_second(), 0);

  pb::PlaceRequest operators = request;
  operators.set_parallelism("operator");
  absl::StatusOr<pb::PlaceResponse> placed = Place(server->port(), operators);
  ASSERT_TRUE(placed.ok()) << placed.status();
  EXPECT_EQ(placed->stages_size(), 0);
  EXPECT_LT(plan->step_time(), placed->score().value());  // a step of 128 samples against the operator placement's

  pb::PlaceRequest asked = request;  // the same as asked by name
  asked.set_parallelism("auto");
  absl::StatusOr<pb::PlaceResponse> named = Place(server->port(), asked);
  ASSERT_TRUE(named.ok()) << named.status();
  EXPECT_NEAR(named->step_time(), plan->step_time(), 1e-9 * plan->step_time());
  asked.set_algorithm("heft");
  absl::StatusOr<pb::PlaceResponse> refused = Place(server->port(), asked);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(refused.status().message()), HasSubstr("parallelism auto: algorithm"));
}

// An export that fixes its batch: the answer says its micro-batches are runs of that batch and, with fewer of them
// a step than accelerators, what lets every one train, in the RPC's words; a cached answer says it too.
TEST(PlacePlan, AFixedBatchExportSaysWhatLetsEveryAcceleratorTrain) {
  TempDir dir;
  auto server = StartReadyServer(TestOptions(dir.path()));
  ASSERT_NE(server, nullptr);
  pb::PlaceRequest request = TrainingStep("tests/data/torch_trace/resnet18_b1_train.onnx", "4xH100", 2);
  constexpr char kNote[] =
      "the model's batch is fixed at 1 by its export: micro-batches of 1 sample; 2 micro-batches a step, fewer than "
      "the 4 devices: data parallelism needs one per replica, so options.batch_size 4 (or an export with a dynamic "
      "batch axis) lets every device train";
  for (int attempt = 0; attempt < 2; ++attempt) {
    absl::StatusOr<pb::PlaceResponse> plan = Place(server->port(), request);
    ASSERT_TRUE(plan.ok()) << plan.status();
    EXPECT_EQ(plan->cache_hit(), attempt == 1);
    EXPECT_THAT(std::vector<std::string>(plan->notes().begin(), plan->notes().end()), ::testing::Contains(kNote));
  }
}

// micro_batch_size splits the default plan's global batch; it is part of the cache key, and where it cannot apply
// (it does not divide the batch, or the request is no default plan) it is refused by name rather than dropped.
TEST(PlacePlan, MicroBatchSizeSplitsTheDefaultPlansGlobalBatch) {
  TempDir dir;
  auto server = StartReadyServer(TestOptions(dir.path()));
  ASSERT_NE(server, nullptr);
  pb::PlaceRequest request = TrainingStep("tests/data/corpus/resnet50.onnx", "8xH100", 32);
  absl::StatusOr<pb::PlaceResponse> by_default = Place(server->port(), request);
  ASSERT_TRUE(by_default.ok()) << by_default.status();
  EXPECT_EQ(by_default->micro_batch_size(), 4);

  request.set_micro_batch_size(8);
  absl::StatusOr<pb::PlaceResponse> eights = Place(server->port(), request);
  ASSERT_TRUE(eights.ok()) << eights.status();
  EXPECT_FALSE(eights->cache_hit());
  EXPECT_EQ(eights->micro_batch_size(), 8);
  EXPECT_EQ(eights->global_batch(), 4);

  request.set_micro_batch_size(5);
  absl::StatusOr<pb::PlaceResponse> not_a_divisor = Place(server->port(), request);
  ASSERT_FALSE(not_a_divisor.ok());
  EXPECT_EQ(not_a_divisor.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(not_a_divisor.status().message()),
              HasSubstr("micro_batch_size 5 does not divide options.batch_size 32: try micro_batch_size 4"));

  request.set_micro_batch_size(8);
  request.set_parallelism("operator");
  absl::StatusOr<pb::PlaceResponse> operators = Place(server->port(), request);
  ASSERT_FALSE(operators.ok());
  EXPECT_EQ(operators.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(operators.status().message()),
              HasSubstr("micro_batch_size: 8 applies to the default plan of a training step"));
  request.set_parallelism("auto");
  request.set_micro_batch_size(-2);
  absl::StatusOr<pb::PlaceResponse> negative = Place(server->port(), request);
  ASSERT_FALSE(negative.ok());
  EXPECT_THAT(std::string(negative.status().message()), HasSubstr("micro_batch_size: must not be negative"));
}

}  // namespace
}  // namespace placement::server
