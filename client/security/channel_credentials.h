// How a client reaches a placement server: plaintext, TLS (verifying the server against a CA), or mutual TLS
// (presenting a client certificate too), and the bearer token sent with every call.
#pragma once

#include <memory>
#include <string>

#include <grpcpp/security/credentials.h>

#include "absl/status/statusor.h"

namespace placement::client {

// The environment variable a token comes from when no token file is given (the server reads the same one).
inline constexpr char kAuthTokenEnv[] = "PLACEMENT_AUTH_TOKEN";

struct ClientSecurityOptions {
  bool tls = false;       // also on when any file below is given
  std::string ca_file;    // PEM CA that signed the server's certificate; empty: the system's roots
  std::string cert_file;  // PEM client certificate and its key, for mutual TLS (both or neither)
  std::string key_file;
  std::string token_file;   // the bearer token; empty: $PLACEMENT_AUTH_TOKEN, or no token when unset
  std::string server_name;  // the name to verify the server's certificate against; empty: the target's host
};

// The bearer token the options name: the file's content (less surrounding whitespace), else the environment
// variable's value, else "" (no token). INVALID_ARGUMENT when the file cannot be read, is empty, or holds what a
// token cannot.
absl::StatusOr<std::string> ResolveAuthToken(const ClientSecurityOptions& options);

// Transport credentials composed with the token, when there is one, as "authorization: Bearer <token>" call
// credentials. gRPC refuses to send call credentials over plaintext except to a loopback peer, so a token
// without TLS works on 127.0.0.1 and ::1 only. INVALID_ARGUMENT for half-given options and for files that cannot be
// read or are not PEM.
absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> MakeChannelCredentials(const ClientSecurityOptions& options);

// A channel to `target` with MakeChannelCredentials, the server name override when set, and `max_message_bytes`
// as the largest message received.
absl::StatusOr<std::shared_ptr<grpc::Channel>> MakeSecureChannel(const std::string& target,
                                                                 const ClientSecurityOptions& options,
                                                                 int max_message_bytes = 256 << 20);

}  // namespace placement::client
