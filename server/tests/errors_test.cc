// Bad requests get the right code and a message that names what is wrong; limits answer RESOURCE_EXHAUSTED
// naming the limit.
#include <chrono>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "server/tests/test_util.h"

namespace placement::server {
namespace {

namespace pb = ::placement::v1;
using ::testing::AllOf;
using ::testing::HasSubstr;
using testing::ContextWithin;
using testing::PlaceRequestFor;
using testing::StartReadyServer;
using testing::StubFor;
using testing::TempDir;
using testing::TestOptions;

class Errors : public ::testing::Test {
 protected:
  void SetUp() override {
    ServerOptions options = TestOptions(dir_.path());
    options.limits.max_operators = 5000;
    server_ = StartReadyServer(options);
    ASSERT_NE(server_, nullptr);
  }

  grpc::Status Place(const pb::PlaceRequest& request) {
    auto context = ContextWithin(std::chrono::seconds(30));
    pb::PlaceResponse response;
    return StubFor(server_->port())->Place(context.get(), request, &response);
  }

  TempDir dir_;
  std::unique_ptr<PlacementServer> server_;
};

TEST_F(Errors, GarbageOnnxBytes) {
  pb::PlaceRequest request;
  request.set_onnx("\x08\x07 this is not a model \xff\xff\xff");
  request.mutable_topology()->set_shorthand("2xA100");
  const grpc::Status s = Place(request);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("onnx: "));
}

TEST_F(Errors, CycleNamesTheOperators) {
  pb::Graph graph = testing::ChainGraph(3);  // op0 -> op1 -> op2
  pb::Edge* back = graph.add_edges();
  back->set_src("op2");
  back->set_dst("op0");
  const grpc::Status s = Place(PlaceRequestFor(graph, "2xA100"));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), AllOf(HasSubstr("graph: "), HasSubstr("cycle"), HasSubstr("op0"), HasSubstr("op2")));
}

TEST_F(Errors, DanglingEdgeNamesTheOperator) {
  pb::Graph graph = testing::ChainGraph(2);
  pb::Edge* e = graph.add_edges();
  e->set_src("op1");
  e->set_dst("ghost");
  const grpc::Status s = Place(PlaceRequestFor(graph, "2xA100"));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("ghost"));
}

TEST_F(Errors, UnknownAlgorithmListsTheKnownOnes) {
  const grpc::Status s = Place(PlaceRequestFor(testing::ChainGraph(3), "2xA100", "telepathy"));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), AllOf(HasSubstr("telepathy"), HasSubstr("heft"), HasSubstr("auto")));
}

TEST_F(Errors, UnknownDevicePreset) {
  const grpc::Status s = Place(PlaceRequestFor(testing::ChainGraph(3), "4xZ9000"));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), AllOf(HasSubstr("topology.shorthand"), HasSubstr("Z9000"), HasSubstr("A100")));
}

TEST_F(Errors, NoTopologyForAGraphWithoutDevices) {
  pb::PlaceRequest request = PlaceRequestFor(testing::ChainGraph(3), "");
  request.clear_topology();
  const grpc::Status s = Place(request);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("topology"));
}

TEST_F(Errors, TooManyOperatorsNamesTheLimit) {
  const grpc::Status s = Place(PlaceRequestFor(testing::ChainGraph(6000), "2xA100"));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(s.error_message(), AllOf(HasSubstr("6000 operators"), HasSubstr("5000"), HasSubstr("--max_operators")));
}

TEST_F(Errors, TrainingExpansionOverTheLimit) {
  pb::PlaceRequest request = PlaceRequestFor(testing::ChainGraph(3000), "2xA100");
  request.mutable_options()->set_training(true);
  const grpc::Status s = Place(request);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(s.error_message(), AllOf(HasSubstr("training graph"), HasSubstr("--max_operators")));
}

TEST_F(Errors, MemoryThatCannotFit) {
  pb::Graph graph = testing::ChainGraph(3);
  graph.mutable_operators(1)->set_param_bytes(int64_t{200} << 30);  // 200 GiB of weights in one operator
  const grpc::Status s = Place(PlaceRequestFor(graph, "4xA100"));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << s.error_message();
  EXPECT_THAT(s.error_message(), HasSubstr("memory"));
}

TEST_F(Errors, BadOptions) {
  pb::PlaceRequest request = PlaceRequestFor(testing::ChainGraph(3), "2xA100");
  request.set_budget_ms(-1);
  EXPECT_EQ(Place(request).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  request.set_budget_ms(0);
  request.mutable_options()->set_batch_size(8);  // batch binds ONNX dimensions only
  EXPECT_EQ(Place(request).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  request.mutable_options()->set_batch_size(0);
  request.mutable_simulator()->set_priority("whenever");
  EXPECT_EQ(Place(request).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  pb::PlaceRequest no_graph;
  no_graph.mutable_topology()->set_shorthand("2xA100");
  const grpc::Status s = Place(no_graph);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("no graph"));
}

TEST_F(Errors, SimulateNamesTheUnknownOperator) {
  pb::SimulateRequest request;
  *request.mutable_graph() = testing::ChainGraph(2);
  request.mutable_topology()->set_shorthand("2xA100");
  auto* a = request.add_assignment();
  a->set_op("op9");
  a->set_device("gpu0");
  auto context = ContextWithin();
  pb::SimulateResponse response;
  const grpc::Status s = StubFor(server_->port())->Simulate(context.get(), request, &response);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("op9"));
}

}  // namespace
}  // namespace placement::server
