// Who may talk to the server: the transport (plaintext, TLS, or mutual TLS) and the bearer token every
// placement.v1 call must carry when one is configured.
//
// grpc.health.v1 and server reflection are not placement.v1 calls, so they stay reachable without a token
// (Kubernetes probes carry none); with mutual TLS they still need a client certificate, like every connection.
#pragma once

#include <memory>
#include <string>

#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server_context.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace placement::server {

// The environment variable a token may come from when no --auth_token_file is given.
inline constexpr char kAuthTokenEnv[] = "PLACEMENT_AUTH_TOKEN";

struct ServerSecurityOptions {
  // PEM files. A certificate and key turn TLS on; a client CA on top requires and verifies client certificates.
  std::string tls_cert_file;
  std::string tls_key_file;
  std::string tls_client_ca_file;
  // The bearer token placement.v1 calls must present ("authorization: Bearer <token>"); empty: none required.
  std::string auth_token;
  // The token ReloadPolicy must present (it swaps the weights every client is answered with); empty: auth_token.
  // With neither, ReloadPolicy is refused (SIGHUP still reloads).
  std::string admin_token;
};

// INVALID_ARGUMENT when the options are half given (a certificate without its key, a client CA without TLS);
// FAILED_PRECONDITION when a file cannot be read.
absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(const ServerSecurityOptions& options);

// Reads a token file: its content less surrounding whitespace. Refuses an empty token and a file others may
// read (the token is a password).
// `flag` names the option in messages.
absl::StatusOr<std::string> ReadAuthTokenFile(const std::string& path, absl::string_view flag = "auth_token_file");

// Checks the bearer token of a call. Compares SHA-256 digests in constant time, so neither the token's
// content nor its length leaks through timing; never logs or echoes what it is given.
class BearerTokenCheck {
 public:
  // An empty token admits every call.
  explicit BearerTokenCheck(absl::string_view token);

  bool required() const { return required_; }
  // OK, or UNAUTHENTICATED saying what was missing or wrong (without any token text).
  absl::Status Check(const grpc::ServerContextBase& context) const;

 private:
  bool required_ = false;
  unsigned char digest_[32] = {};
};

}  // namespace placement::server
