// The one place placectl opens a connection to a placement server. Transport security and credentials (TLS,
// bearer tokens) belong here, as fields of ServerChannelOptions, so every command gets them alike.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <grpcpp/grpcpp.h>

namespace placement::cli {

// The server placectl talks to when --server is not given: placement_server's default --listen.
inline constexpr char kDefaultServer[] = "127.0.0.1:50051";

struct ServerChannelOptions {
  // Answers for 100k-operator graphs are tens of megabytes; gRPC's default limit is 4 MiB.
  int64_t max_receive_bytes = int64_t{1} << 30;
  int64_t max_send_bytes = int64_t{1} << 30;
};

// An insecure channel to `address` (host:port). Creating it does not connect: the first call does, and fails
// with UNAVAILABLE when nothing answers there.
std::shared_ptr<grpc::Channel> MakeServerChannel(const std::string& address, const ServerChannelOptions& options = {});

}  // namespace placement::cli
