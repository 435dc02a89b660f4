// Every external library the service is built on links and does real work here, so a missing or broken
// Debian package shows up as a failing test rather than at the first request.
#include <filesystem>
#include <memory>
#include <string>

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <prometheus/counter.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>
#include <rocksdb/db.h>

#include "placement/v1/placement.grpc.pb.h"

namespace {

TEST(Dependencies, RocksDbStoresAndReadsBackInATempDir) {
  const auto dir = std::filesystem::temp_directory_path() / ("placement_deps_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  rocksdb::Options options;
  options.create_if_missing = true;
  rocksdb::DB* raw = nullptr;
  ASSERT_TRUE(rocksdb::DB::Open(options, dir.string(), &raw).ok());
  std::unique_ptr<rocksdb::DB> db(raw);
  ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), "key", "value").ok());
  std::string value;
  ASSERT_TRUE(db->Get(rocksdb::ReadOptions(), "key", &value).ok());
  EXPECT_EQ(value, "value");
  db.reset();
  std::filesystem::remove_all(dir);
}

TEST(Dependencies, PrometheusSerializesACounter) {
  prometheus::Registry registry;
  auto& family = prometheus::BuildCounter().Name("deps_test_total").Help("a test counter").Register(registry);
  family.Add({{"method", "Place"}}).Increment(3);
  const std::string text = prometheus::TextSerializer().Serialize(registry.Collect());
  EXPECT_NE(text.find("deps_test_total{method=\"Place\"} 3"), std::string::npos) << text;
}

TEST(Dependencies, OnnxModelProtoRoundTrips) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  auto* node = model.mutable_graph()->add_node();
  node->set_op_type("Relu");
  node->add_input("x");
  node->add_output("y");
  std::string bytes;
  ASSERT_TRUE(model.SerializeToString(&bytes));
  onnx::ModelProto back;
  ASSERT_TRUE(back.ParseFromString(bytes));
  EXPECT_EQ(back.graph().node(0).op_type(), "Relu");
}

// A callback service answering from the request, called through a real channel on 127.0.0.1.
class CountingService final : public placement::v1::PlacementService::CallbackService {
  grpc::ServerUnaryReactor* Simulate(grpc::CallbackServerContext* context,
                                     const placement::v1::SimulateRequest* request,
                                     placement::v1::SimulateResponse* response) override {
    response->set_graph_hash(std::to_string(request->graph().operators_size()));
    auto* reactor = context->DefaultReactor();
    reactor->Finish(grpc::Status::OK);
    return reactor;
  }
};

TEST(Dependencies, GrpcCallbackServerAnswersOnLoopback) {
  CountingService service;
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  ASSERT_NE(server, nullptr);
  ASSERT_GT(port, 0);

  auto stub = placement::v1::PlacementService::NewStub(
      grpc::CreateChannel("127.0.0.1:" + std::to_string(port), grpc::InsecureChannelCredentials()));
  placement::v1::SimulateRequest request;
  request.mutable_graph()->add_operators()->set_name("a");
  request.mutable_graph()->add_operators()->set_name("b");
  placement::v1::SimulateResponse response;
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  const grpc::Status status = stub->Simulate(&context, request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.graph_hash(), "2");
  server->Shutdown();
}

}  // namespace
