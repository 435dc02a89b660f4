#include "client/security/channel_credentials.h"

#include <algorithm>
#include <cstdlib>

#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/support/channel_arguments.h>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "graph/file_io.h"

namespace placement::client {
namespace {

// A file the options name, read before any connection: one that is missing or unreadable is a bad input naming it.
absl::StatusOr<std::string> ReadWhole(absl::string_view what, const std::string& path) {
  absl::StatusOr<std::string> bytes = ReadWholeFile(path);
  if (!bytes.ok()) return absl::InvalidArgumentError(absl::StrCat(what, ": ", bytes.status().message()));
  return bytes;
}

// A certificate or key file: gRPC would otherwise report a file that is not PEM only on its log, then fail to connect.
absl::StatusOr<std::string> ReadPem(absl::string_view what, const std::string& path) {
  absl::StatusOr<std::string> text = ReadWhole(what, path);
  if (text.ok() && !absl::StrContains(*text, "-----BEGIN ")) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": '", path, "' is not PEM (no -----BEGIN line)"));
  }
  return text;
}

// What an HTTP/2 header value can carry.
bool IsPrintableAscii(absl::string_view text) {
  return std::all_of(text.begin(), text.end(), [](char c) { return c >= 0x20 && c < 0x7f; });
}

// Adds "authorization: Bearer <token>" to every call of the channel.
class BearerTokenPlugin final : public grpc::MetadataCredentialsPlugin {
 public:
  explicit BearerTokenPlugin(std::string token) : header_(absl::StrCat("Bearer ", token)) {}
  bool IsBlocking() const override { return false; }
  const char* GetType() const override { return "placement.bearer"; }
  grpc::Status GetMetadata(grpc::string_ref /*service_url*/, grpc::string_ref /*method_name*/,
                           const grpc::AuthContext& /*channel_auth_context*/,
                           std::multimap<grpc::string, grpc::string>* metadata) override {
    metadata->emplace("authorization", header_);
    return grpc::Status::OK;
  }
  grpc::string DebugString() override { return "placement bearer token (not shown)"; }

 private:
  const std::string header_;
};

}  // namespace

absl::StatusOr<std::string> ResolveAuthToken(const ClientSecurityOptions& o) {
  if (!o.token_file.empty()) {
    absl::StatusOr<std::string> text = ReadWhole("token file", o.token_file);
    if (!text.ok()) return text.status();
    std::string token(absl::StripAsciiWhitespace(*text));
    if (token.empty()) return absl::InvalidArgumentError(absl::StrCat("token file: '", o.token_file, "' is empty"));
    if (!IsPrintableAscii(token)) {
      return absl::InvalidArgumentError(
          absl::StrCat("token file: '", o.token_file, "' holds bytes a token cannot (printable ASCII only)"));
    }
    return token;
  }
  const char* env = std::getenv(kAuthTokenEnv);
  return env == nullptr ? std::string() : std::string(absl::StripAsciiWhitespace(env));
}

absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> MakeChannelCredentials(const ClientSecurityOptions& o) {
  if (o.cert_file.empty() != o.key_file.empty()) {
    return absl::InvalidArgumentError("a client certificate and its key go together: give both or neither");
  }
  absl::StatusOr<std::string> token = ResolveAuthToken(o);
  if (!token.ok()) return token.status();
  const bool tls = o.tls || !o.ca_file.empty() || !o.cert_file.empty();

  std::shared_ptr<grpc::ChannelCredentials> transport;
  if (tls) {
    grpc::SslCredentialsOptions ssl;
    if (!o.ca_file.empty()) {
      absl::StatusOr<std::string> ca = ReadPem("CA file", o.ca_file);
      if (!ca.ok()) return ca.status();
      ssl.pem_root_certs = *std::move(ca);
    }
    if (!o.cert_file.empty()) {
      absl::StatusOr<std::string> cert = ReadPem("client certificate", o.cert_file);
      if (!cert.ok()) return cert.status();
      absl::StatusOr<std::string> key = ReadPem("client key", o.key_file);
      if (!key.ok()) return key.status();
      ssl.pem_cert_chain = *std::move(cert);
      ssl.pem_private_key = *std::move(key);
    }
    transport = grpc::SslCredentials(ssl);
  } else if (!token->empty()) {
    // Plaintext cannot carry call credentials; "local" credentials are plaintext on the wire too, but only
    // connect to a loopback peer, so the token never crosses a network unencrypted.
    transport = grpc::experimental::LocalCredentials(LOCAL_TCP);
  } else {
    return grpc::InsecureChannelCredentials();
  }
  if (token->empty()) return transport;
  const grpc_security_level level = tls ? GRPC_PRIVACY_AND_INTEGRITY : GRPC_SECURITY_NONE;
  std::shared_ptr<grpc::CallCredentials> call =
      grpc::experimental::MetadataCredentialsFromPlugin(std::make_unique<BearerTokenPlugin>(*std::move(token)), level);
  return grpc::CompositeChannelCredentials(transport, call);
}

absl::StatusOr<std::shared_ptr<grpc::Channel>> MakeSecureChannel(const std::string& target,
                                                                 const ClientSecurityOptions& o,
                                                                 int max_message_bytes) {
  absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> credentials = MakeChannelCredentials(o);
  if (!credentials.ok()) return credentials.status();
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(max_message_bytes);
  if (!o.server_name.empty()) args.SetSslTargetNameOverride(o.server_name);
  return grpc::CreateCustomChannel(target, *credentials, args);
}

}  // namespace placement::client
