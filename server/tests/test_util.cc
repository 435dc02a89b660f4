#include "server/tests/test_util.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "graph/graph_families.h"
#include "graph/proto/graph_proto.h"

namespace placement::server::testing {

ServerOptions TestOptions(const std::string& data_dir) {
  ServerOptions o;
  o.listen_address = "127.0.0.1:0";
  o.metrics_address = "127.0.0.1:0";
  o.data_dir = data_dir;
  o.cache_max_bytes = int64_t{64} << 20;
  o.worker_threads = 2;
  o.heartbeat_period = absl::Milliseconds(50);
  o.policy_device = "none";
  o.limits.default_budget = absl::Seconds(2);
  return o;
}

std::unique_ptr<PlacementServer> StartReadyServer(ServerOptions options) {
  absl::StatusOr<std::unique_ptr<PlacementServer>> server = PlacementServer::Start(std::move(options));
  if (!server.ok()) {
    ADD_FAILURE() << server.status();
    return nullptr;
  }
  EXPECT_TRUE((*server)->WaitUntilReady(absl::Seconds(30)));
  return *std::move(server);
}

std::shared_ptr<grpc::Channel> ChannelFor(int port) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(256 << 20);
  return grpc::CreateCustomChannel(absl::StrCat("127.0.0.1:", port), grpc::InsecureChannelCredentials(), args);
}

std::unique_ptr<placement::v1::PlacementService::Stub> StubFor(int port) {
  return placement::v1::PlacementService::NewStub(ChannelFor(port));
}

std::unique_ptr<grpc::ClientContext> ContextWithin(std::chrono::milliseconds timeout) {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(std::chrono::system_clock::now() + timeout);
  return context;
}

placement::v1::Graph LayeredGraph(int ops, uint64_t seed) {
  FamilyOptions options;
  options.approx_ops = ops;
  options.seed = seed;
  absl::StatusOr<Graph> g = GenerateFamily("layered", options);
  EXPECT_TRUE(g.ok()) << g.status();
  return g.ok() ? GraphToProto(*g) : placement::v1::Graph();
}

absl::StatusOr<placement::v1::PlaceResponse> PlaceOn(int port, const placement::v1::PlaceRequest& request,
                                                     std::chrono::milliseconds timeout) {
  auto context = ContextWithin(timeout);
  placement::v1::PlaceResponse response;
  const grpc::Status s = StubFor(port)->Place(context.get(), request, &response);
  if (!s.ok()) return absl::Status(static_cast<absl::StatusCode>(s.error_code()), s.error_message());
  return response;
}

absl::StatusOr<placement::v1::SimulateResponse> SimulateOn(int port, const placement::v1::SimulateRequest& request) {
  auto context = ContextWithin(std::chrono::seconds(30));
  placement::v1::SimulateResponse response;
  const grpc::Status s = StubFor(port)->Simulate(context.get(), request, &response);
  if (!s.ok()) return absl::Status(static_cast<absl::StatusCode>(s.error_code()), s.error_message());
  return response;
}

placement::v1::Graph ChainGraph(int ops) {
  placement::v1::Graph g;
  for (int i = 0; i < ops; ++i) {
    placement::v1::Operator* op = g.add_operators();
    op->set_name(absl::StrCat("op", i));
    op->set_op_type("MatMul");
    op->set_flops(1e9);
    op->set_bytes_accessed(1e6);
    op->add_outputs()->set_bytes(1'000'000);
    if (i > 0) {
      placement::v1::Edge* e = g.add_edges();
      e->set_src(absl::StrCat("op", i - 1));
      e->set_dst(absl::StrCat("op", i));
    }
  }
  return g;
}

placement::v1::PlaceRequest PlaceRequestFor(const placement::v1::Graph& graph, const std::string& devices,
                                            const std::string& algorithm) {
  placement::v1::PlaceRequest r;
  *r.mutable_graph() = graph;
  r.mutable_topology()->set_shorthand(devices);
  r.set_algorithm(algorithm);
  return r;
}

absl::StatusOr<std::string> HttpGet(int port, const std::string& path) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return absl::InternalError("socket");
  timeval timeout{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    ::close(fd);
    return absl::UnavailableError(absl::StrCat("cannot connect to 127.0.0.1:", port));
  }
  const std::string request = absl::StrCat("GET ", path, " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
  ::send(fd, request.data(), request.size(), MSG_NOSIGNAL);
  std::string response;
  char buffer[4096];
  ssize_t n;
  while ((n = ::recv(fd, buffer, sizeof(buffer), 0)) > 0) response.append(buffer, static_cast<size_t>(n));
  ::close(fd);
  const size_t body = response.find("\r\n\r\n");
  if (response.rfind("HTTP/1.1 200", 0) != 0 || body == std::string::npos) {
    return absl::InternalError(absl::StrCat("unexpected response: ", response.substr(0, 200)));
  }
  return response.substr(body + 4);
}

std::string ReadSourceFile(const std::string& relative_path) {
  std::ifstream in(std::string(PLACEMENT_SOURCE_DIR) + "/" + relative_path, std::ios::binary);
  EXPECT_TRUE(in.good()) << relative_path;
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

}  // namespace placement::server::testing
