// What the server tests share: temporary data directories, an in-process server on 127.0.0.1 with a port
// picked by the kernel, stubs, graphs, and a tiny HTTP GET for the metrics endpoint.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include <grpcpp/grpcpp.h>

#include "absl/status/statusor.h"
#include "placement/v1/placement.grpc.pb.h"
#include "server/metrics.h"
#include "server/server.h"
#include "tests/support/temp_dir.h"

namespace placement::server::testing {

using ::placement::test_support::TempDir;

// Loopback, ports picked by the kernel, the data directory given, no LibTorch (policy_device "none"), short
// heartbeats.
ServerOptions TestOptions(const std::string& data_dir);

// Starts a server and waits (up to 30 s) until it is ready; fails the test when it cannot.
std::unique_ptr<PlacementServer> StartReadyServer(ServerOptions options);

std::unique_ptr<placement::v1::PlacementService::Stub> StubFor(int port);
std::shared_ptr<grpc::Channel> ChannelFor(int port);

// A client context whose call must end within `timeout`.
std::unique_ptr<grpc::ClientContext> ContextWithin(std::chrono::milliseconds timeout = std::chrono::seconds(30));

// A synthetic graph ("layered" family) of about `ops` operators, as the wire message.
placement::v1::Graph LayeredGraph(int ops, uint64_t seed = 1);

// a -> b -> c ... with the given names; each operator 1 GFLOP and 1 MB out.
placement::v1::Graph ChainGraph(int ops);

// A Place request for `graph` on a shorthand cluster.
placement::v1::PlaceRequest PlaceRequestFor(const placement::v1::Graph& graph, const std::string& devices,
                                            const std::string& algorithm = "auto");

// Place and Simulate on the server at `port`, the gRPC status as an absl::Status.
absl::StatusOr<placement::v1::PlaceResponse> PlaceOn(int port, const placement::v1::PlaceRequest& request,
                                                     std::chrono::milliseconds timeout = std::chrono::seconds(30));
absl::StatusOr<placement::v1::SimulateResponse> SimulateOn(int port, const placement::v1::SimulateRequest& request);

// The body of GET http://127.0.0.1:port/path (whole response when the status is not 200).
absl::StatusOr<std::string> HttpGet(int port, const std::string& path);

// A file of the source tree, read whole.
std::string ReadSourceFile(const std::string& relative_path);

}  // namespace placement::server::testing
