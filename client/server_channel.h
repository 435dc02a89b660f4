// The one place placectl opens a connection to a placement server, so that every command gets transport
// security and credentials alike: plaintext, TLS or mutual TLS and the bearer token, from the security flags
// (--tls, --tls_ca, --tls_cert, --tls_key, --tls_server_name, --token_file; client/security/security_flags.h).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <grpcpp/grpcpp.h>

#include "absl/status/statusor.h"

namespace placement::cli {

// The server placectl talks to when --server is not given: placement_server's default --listen.
inline constexpr char kDefaultServer[] = "127.0.0.1:50051";

struct ServerChannelOptions {
  // Answers for 100k-operator graphs are tens of megabytes; gRPC's default limit is 4 MiB.
  int64_t max_receive_bytes = int64_t{1} << 30;
  int64_t max_send_bytes = int64_t{1} << 30;
};

// A channel to `address` (host:port) secured as the flags say. Creating it does not connect: the first call
// does, and fails with UNAVAILABLE when nothing answers there. FAILED_PRECONDITION or INVALID_ARGUMENT when a
// certificate, key or token file named by the flags cannot be used.
absl::StatusOr<std::shared_ptr<grpc::Channel>> MakeServerChannel(const std::string& address,
                                                                 const ServerChannelOptions& options = {});

}  // namespace placement::cli
