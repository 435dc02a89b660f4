#include "server/security.h"

#include <sys/stat.h>

#include <grpcpp/security/server_credentials.h>
#include <openssl/crypto.h>
#include <openssl/sha.h>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "graph/file_io.h"

namespace placement::server {
namespace {

constexpr absl::string_view kBearer = "Bearer ";

absl::StatusOr<std::string> ReadPem(absl::string_view flag, const std::string& path) {
  absl::StatusOr<std::string> pem = ReadWholeFile(path);
  if (!pem.ok()) return absl::FailedPreconditionError(absl::StrCat("--", flag, ": cannot read '", path, "'"));
  if (pem->find("-----BEGIN ") == std::string::npos) {
    return absl::FailedPreconditionError(absl::StrCat("--", flag, ": '", path, "' is not a PEM file"));
  }
  return pem;
}

void Digest(absl::string_view text, unsigned char out[SHA256_DIGEST_LENGTH]) {
  SHA256(reinterpret_cast<const unsigned char*>(text.data()), text.size(), out);
}

}  // namespace

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(const ServerSecurityOptions& o) {
  if (o.tls_cert_file.empty() != o.tls_key_file.empty()) {
    return absl::InvalidArgumentError("--tls_cert and --tls_key go together: give both or neither");
  }
  if (o.tls_cert_file.empty()) {
    if (!o.tls_client_ca_file.empty()) {
      return absl::InvalidArgumentError("--tls_client_ca needs TLS: give --tls_cert and --tls_key too");
    }
    return grpc::InsecureServerCredentials();
  }
  grpc::SslServerCredentialsOptions ssl;
  absl::StatusOr<std::string> cert = ReadPem("tls_cert", o.tls_cert_file);
  if (!cert.ok()) return cert.status();
  absl::StatusOr<std::string> key = ReadPem("tls_key", o.tls_key_file);
  if (!key.ok()) return key.status();
  ssl.pem_key_cert_pairs.push_back({*std::move(key), *std::move(cert)});
  if (!o.tls_client_ca_file.empty()) {
    absl::StatusOr<std::string> ca = ReadPem("tls_client_ca", o.tls_client_ca_file);
    if (!ca.ok()) return ca.status();
    ssl.pem_root_certs = *std::move(ca);
    ssl.client_certificate_request = GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY;
  }
  return grpc::SslServerCredentials(ssl);
}

absl::StatusOr<std::string> ReadAuthTokenFile(const std::string& path, absl::string_view flag) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    return absl::FailedPreconditionError(absl::StrCat("--", flag, ": cannot read '", path, "'"));
  }
  if ((st.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("--", flag, ": '", path, "' may be read by others; make it private (chmod 600)"));
  }
  absl::StatusOr<std::string> text = ReadWholeFile(path);
  if (!text.ok()) return absl::FailedPreconditionError(absl::StrCat("--", flag, ": cannot read '", path, "'"));
  std::string token(absl::StripAsciiWhitespace(*text));
  if (token.empty()) return absl::FailedPreconditionError(absl::StrCat("--", flag, ": '", path, "' is empty"));
  return token;
}

BearerTokenCheck::BearerTokenCheck(absl::string_view token) : required_(!token.empty()) {
  if (required_) Digest(token, digest_);
}

absl::Status BearerTokenCheck::Check(const grpc::ServerContextBase& context) const {
  if (!required_) return absl::OkStatus();
  const auto& metadata = context.client_metadata();
  const auto it = metadata.find("authorization");
  if (it == metadata.end()) {
    return absl::UnauthenticatedError("this server requires a bearer token: send 'authorization: Bearer <token>'");
  }
  const absl::string_view value(it->second.data(), it->second.size());
  if (!absl::StartsWith(value, kBearer)) {
    return absl::UnauthenticatedError("the authorization header is not 'Bearer <token>'");
  }
  unsigned char given[SHA256_DIGEST_LENGTH];
  Digest(value.substr(kBearer.size()), given);
  if (CRYPTO_memcmp(given, digest_, SHA256_DIGEST_LENGTH) != 0) {
    return absl::UnauthenticatedError("the bearer token is not valid");
  }
  return absl::OkStatus();
}

}  // namespace placement::server
