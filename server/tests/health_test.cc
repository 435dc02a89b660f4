// grpc.health.v1: liveness ("") is SERVING once the server accepts calls; readiness (the service's name) is
// NOT_SERVING until the placers and policy are loaded, then SERVING. Server reflection lists the services.
#include <string>

#include <grpcpp/generic/generic_stub.h>
#include <gtest/gtest.h>

#include "absl/synchronization/notification.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "server/placement_service.h"
#include "server/tests/test_util.h"

namespace placement::server {
namespace {

namespace pb = ::placement::v1;
using grpc::health::v1::HealthCheckResponse;
using testing::ContextWithin;
using testing::TempDir;
using testing::TestOptions;

HealthCheckResponse::ServingStatus Check(int port, const std::string& service) {
  auto stub = grpc::health::v1::Health::NewStub(testing::ChannelFor(port));
  grpc::health::v1::HealthCheckRequest request;
  request.set_service(service);
  HealthCheckResponse response;
  auto context = ContextWithin(std::chrono::seconds(10));
  const grpc::Status s = stub->Check(context.get(), request, &response);
  EXPECT_TRUE(s.ok()) << s.error_message();
  return response.status();
}

TEST(Health, ReadinessFlipsOnceLoaded) {
  TempDir dir;
  absl::Notification release;
  ServerOptions options = TestOptions(dir.path());
  options.before_ready = [&release] { release.WaitForNotification(); };
  absl::StatusOr<std::unique_ptr<PlacementServer>> server = PlacementServer::Start(options);
  ASSERT_TRUE(server.ok()) << server.status();
  const int port = (*server)->port();

  EXPECT_EQ(Check(port, ""), HealthCheckResponse::SERVING);
  EXPECT_EQ(Check(port, kServiceName), HealthCheckResponse::NOT_SERVING);
  {
    auto context = ContextWithin();
    pb::PlaceResponse response;
    const grpc::Status s = testing::StubFor(port)->Place(
        context.get(), testing::PlaceRequestFor(testing::ChainGraph(3), "2xA100"), &response);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAVAILABLE);
  }
  {
    auto context = ContextWithin();
    pb::GetServerInfoResponse info;
    ASSERT_TRUE(testing::StubFor(port)->GetServerInfo(context.get(), pb::GetServerInfoRequest(), &info).ok());
    EXPECT_FALSE(info.ready());
    EXPECT_FALSE(info.version().empty());
  }

  release.Notify();
  ASSERT_TRUE((*server)->WaitUntilReady(absl::Seconds(30)));
  EXPECT_EQ(Check(port, kServiceName), HealthCheckResponse::SERVING);
  EXPECT_EQ(Check(port, ""), HealthCheckResponse::SERVING);
}

// One ServerReflectionInfo exchange with a list_services request, through the generic stub so the test needs
// no copy of reflection.proto (grpc++_reflection already registers its messages in this process).
std::string ListServicesRaw(int port) {
  grpc::GenericStub stub(testing::ChannelFor(port));
  grpc::CompletionQueue cq;
  auto context = ContextWithin(std::chrono::seconds(10));
  auto call = stub.PrepareCall(context.get(), "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo", &cq);
  auto step = [&cq](intptr_t tag) {
    void* got = nullptr;
    bool ok = false;
    return cq.Next(&got, &ok) && ok && reinterpret_cast<intptr_t>(got) == tag;
  };
  call->StartCall(reinterpret_cast<void*>(1));
  EXPECT_TRUE(step(1));
  const char list_services[] = {0x3A, 0x00};  // field 7 (list_services), an empty string
  grpc::Slice slice(list_services, sizeof(list_services));
  grpc::ByteBuffer request(&slice, 1);
  call->Write(request, reinterpret_cast<void*>(2));
  EXPECT_TRUE(step(2));
  call->WritesDone(reinterpret_cast<void*>(3));
  EXPECT_TRUE(step(3));
  grpc::ByteBuffer response;
  call->Read(&response, reinterpret_cast<void*>(4));
  EXPECT_TRUE(step(4));
  grpc::Status status;
  call->Finish(&status, reinterpret_cast<void*>(5));
  EXPECT_TRUE(step(5));
  EXPECT_TRUE(status.ok()) << status.error_message();
  std::vector<grpc::Slice> slices;
  std::string bytes;
  if (response.Dump(&slices).ok()) {
    for (const grpc::Slice& s : slices) bytes.append(reinterpret_cast<const char*>(s.begin()), s.size());
  }
  return bytes;
}

TEST(Reflection, ListsTheServices) {
  TempDir dir;
  auto server = testing::StartReadyServer(TestOptions(dir.path()));
  ASSERT_NE(server, nullptr);
  const std::string listed = ListServicesRaw(server->port());
  EXPECT_NE(listed.find("placement.v1.PlacementService"), std::string::npos);
  EXPECT_NE(listed.find("grpc.health.v1.Health"), std::string::npos);
}

}  // namespace
}  // namespace placement::server
