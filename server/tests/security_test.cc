// Who gets in: TLS and mutual TLS with certificates made here by the openssl tool (a CA, a server certificate
// for 127.0.0.1 and localhost, a client certificate), the bearer token (missing, wrong, right; never in the
// log), health checks without a token, and the private data directory.
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "client/security/channel_credentials.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "server/placement_service.h"
#include "server/security.h"
#include "server/tests/test_util.h"

namespace placement::server {
namespace {

namespace pb = ::placement::v1;
using testing::ContextWithin;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::PlaceRequestFor;
using testing::StartReadyServer;
using testing::TempDir;
using testing::TestOptions;

constexpr char kToken[] = "s3cret-token-0f9e8d7c6b5a";

void WriteFile(const std::string& path, const std::string& text, std::filesystem::perms perms) {
  std::ofstream(path, std::ios::binary) << text;
  std::filesystem::permissions(path, perms);
}

// A CA and the certificates it signs, made once for the whole suite (key generation takes a moment).
class Certificates {
 public:
  static const Certificates& Get() {
    static const Certificates* certificates = new Certificates();
    return *certificates;
  }
  bool ok() const { return ok_; }
  std::string Path(const std::string& name) const { return dir_.path() + "/" + name; }

 private:
  Certificates() {
    const std::string d = dir_.path();
    WriteFile(d + "/server.ext", "subjectAltName=DNS:localhost,IP:127.0.0.1\n", std::filesystem::perms::owner_all);
    WriteFile(d + "/client.ext", "extendedKeyUsage=clientAuth\n", std::filesystem::perms::owner_all);
    const std::string ec = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
    const std::string script = absl::StrCat(
        "cd '", d, "' && ", "openssl req -x509 ", ec,
        " -keyout ca.key -out ca.pem -days 2 -subj /CN=placement-test-ca && ", "openssl req ", ec,
        " -keyout server.key -out server.csr -subj /CN=localhost && ",
        "openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem -days 2 ",
        "-extfile server.ext && ", "openssl req ", ec,
        " -keyout client.key -out client.pem.csr -subj /CN=placement-test-client && ",
        "openssl x509 -req -in client.pem.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out client.pem -days 2 ",
        "-extfile client.ext && ",
        // A second CA, whose client certificate the server must refuse.
        "openssl req -x509 ", ec, " -keyout other-ca.key -out other-ca.pem -days 2 -subj /CN=other-ca && ",
        "openssl req ", ec, " -keyout stranger.key -out stranger.csr -subj /CN=stranger && ",
        "openssl x509 -req -in stranger.csr -CA other-ca.pem -CAkey other-ca.key -CAcreateserial -out stranger.pem ",
        "-days 2 -extfile client.ext", " > openssl.log 2>&1");
    ok_ = std::system(script.c_str()) == 0;
  }
  TempDir dir_;
  bool ok_ = false;
};

// A short Place on the channel: OK, or the status the server (or the transport) answered.
grpc::Status PlaceOn(const std::shared_ptr<grpc::Channel>& channel) {
  auto stub = pb::PlacementService::NewStub(channel);
  auto context = ContextWithin(std::chrono::seconds(20));
  pb::PlaceResponse response;
  return stub->Place(context.get(), PlaceRequestFor(testing::ChainGraph(3), "2xA100", "heft"), &response);
}

grpc::health::v1::HealthCheckResponse::ServingStatus HealthOn(const std::shared_ptr<grpc::Channel>& channel,
                                                              grpc::Status* status) {
  auto stub = grpc::health::v1::Health::NewStub(channel);
  grpc::health::v1::HealthCheckRequest request;
  request.set_service(kServiceName);
  grpc::health::v1::HealthCheckResponse response;
  auto context = ContextWithin(std::chrono::seconds(10));
  *status = stub->Check(context.get(), request, &response);
  return response.status();
}

std::shared_ptr<grpc::Channel> Channel(int port, const client::ClientSecurityOptions& options) {
  absl::StatusOr<std::shared_ptr<grpc::Channel>> channel =
      client::MakeSecureChannel(absl::StrCat("127.0.0.1:", port), options);
  EXPECT_TRUE(channel.ok()) << channel.status();
  return channel.ok() ? *channel : nullptr;
}

class Security : public ::testing::Test {
 protected:
  void SetUp() override {
    ::unsetenv(client::kAuthTokenEnv);
    if (!Certificates::Get().ok()) GTEST_SKIP() << "the openssl tool could not make test certificates";
  }
  const Certificates& certs() const { return Certificates::Get(); }

  client::ClientSecurityOptions Tls() const {
    client::ClientSecurityOptions o;
    o.ca_file = certs().Path("ca.pem");
    return o;
  }

  TempDir dir_;
};

TEST_F(Security, TlsServesTlsClientsAndRefusesPlaintext) {
  ServerOptions options = TestOptions(dir_.path());
  options.security.tls_cert_file = certs().Path("server.pem");
  options.security.tls_key_file = certs().Path("server.key");
  auto server = StartReadyServer(options);
  ASSERT_NE(server, nullptr);

  const grpc::Status ok = PlaceOn(Channel(server->port(), Tls()));
  EXPECT_TRUE(ok.ok()) << ok.error_message();
  // By name too: the certificate carries localhost as well as 127.0.0.1.
  absl::StatusOr<std::shared_ptr<grpc::Channel>> by_name =
      client::MakeSecureChannel(absl::StrCat("localhost:", server->port()), Tls());
  ASSERT_TRUE(by_name.ok());
  EXPECT_TRUE(PlaceOn(*by_name).ok());

  const grpc::Status plaintext = PlaceOn(Channel(server->port(), client::ClientSecurityOptions()));
  EXPECT_EQ(plaintext.error_code(), grpc::StatusCode::UNAVAILABLE) << plaintext.error_message();
  // A client that trusts another CA refuses the server.
  client::ClientSecurityOptions wrong_ca;
  wrong_ca.ca_file = certs().Path("other-ca.pem");
  EXPECT_EQ(PlaceOn(Channel(server->port(), wrong_ca)).error_code(), grpc::StatusCode::UNAVAILABLE);
}

TEST_F(Security, MutualTlsNeedsAClientCertificateFromTheCa) {
  ServerOptions options = TestOptions(dir_.path());
  options.security.tls_cert_file = certs().Path("server.pem");
  options.security.tls_key_file = certs().Path("server.key");
  options.security.tls_client_ca_file = certs().Path("ca.pem");
  auto server = StartReadyServer(options);
  ASSERT_NE(server, nullptr);

  client::ClientSecurityOptions with_cert = Tls();
  with_cert.cert_file = certs().Path("client.pem");
  with_cert.key_file = certs().Path("client.key");
  const grpc::Status ok = PlaceOn(Channel(server->port(), with_cert));
  EXPECT_TRUE(ok.ok()) << ok.error_message();
  grpc::Status health;
  EXPECT_EQ(HealthOn(Channel(server->port(), with_cert), &health), grpc::health::v1::HealthCheckResponse::SERVING);

  EXPECT_EQ(PlaceOn(Channel(server->port(), Tls())).error_code(), grpc::StatusCode::UNAVAILABLE);
  HealthOn(Channel(server->port(), Tls()), &health);
  EXPECT_EQ(health.error_code(), grpc::StatusCode::UNAVAILABLE);
  client::ClientSecurityOptions stranger = Tls();
  stranger.cert_file = certs().Path("stranger.pem");
  stranger.key_file = certs().Path("stranger.key");
  EXPECT_EQ(PlaceOn(Channel(server->port(), stranger)).error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(PlaceOn(Channel(server->port(), client::ClientSecurityOptions())).error_code(),
            grpc::StatusCode::UNAVAILABLE);
}

TEST_F(Security, BearerTokenIsRequiredCheckedAndNeverLogged) {
  ServerOptions options = TestOptions(dir_.path());
  options.security.tls_cert_file = certs().Path("server.pem");
  options.security.tls_key_file = certs().Path("server.key");
  options.security.auth_token = kToken;
  ::testing::internal::CaptureStderr();
  auto server = StartReadyServer(options);
  ASSERT_NE(server, nullptr);

  const grpc::Status none = PlaceOn(Channel(server->port(), Tls()));
  EXPECT_EQ(none.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_THAT(none.error_message(), HasSubstr("bearer token"));

  client::ClientSecurityOptions wrong = Tls();
  const std::string wrong_file = dir_.path() + "/wrong.token";
  WriteFile(wrong_file, absl::StrCat(kToken, "x\n"), std::filesystem::perms::owner_read);
  wrong.token_file = wrong_file;
  const grpc::Status bad = PlaceOn(Channel(server->port(), wrong));
  EXPECT_EQ(bad.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_THAT(bad.error_message(), Not(HasSubstr(kToken)));

  // The right token, from the environment, is let in; every method checks it.
  ::setenv(client::kAuthTokenEnv, kToken, 1);
  const auto channel = Channel(server->port(), Tls());
  ::unsetenv(client::kAuthTokenEnv);
  const grpc::Status ok = PlaceOn(channel);
  EXPECT_TRUE(ok.ok()) << ok.error_message();
  auto plain_stub = pb::PlacementService::NewStub(Channel(server->port(), Tls()));
  for (int method = 0; method < 3; ++method) {
    auto context = ContextWithin(std::chrono::seconds(10));
    grpc::Status s;
    if (method == 0) {
      pb::ListAlgorithmsResponse r;
      s = plain_stub->ListAlgorithms(context.get(), pb::ListAlgorithmsRequest(), &r);
    } else if (method == 1) {
      pb::GetServerInfoResponse r;
      s = plain_stub->GetServerInfo(context.get(), pb::GetServerInfoRequest(), &r);
    } else {
      auto reader = plain_stub->PlaceStream(context.get(), PlaceRequestFor(testing::ChainGraph(3), "2xA100"));
      pb::PlaceProgress p;
      while (reader->Read(&p)) {
      }
      s = reader->Finish();
    }
    EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAUTHENTICATED) << "method " << method;
  }

  // Probes carry no token: health stays reachable.
  grpc::Status health;
  EXPECT_EQ(HealthOn(Channel(server->port(), Tls()), &health), grpc::health::v1::HealthCheckResponse::SERVING);
  EXPECT_TRUE(health.ok()) << health.error_message();

  server->Shutdown(absl::Seconds(1));
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_THAT(log, HasSubstr("UNAUTHENTICATED"));  // the refusals were logged...
  EXPECT_THAT(log, Not(HasSubstr(kToken)));        // ...without the token, right or wrong
}

TEST_F(Security, TokenOverPlaintextLoopback) {
  ServerOptions options = TestOptions(dir_.path());
  options.security.auth_token = kToken;
  auto server = StartReadyServer(options);
  ASSERT_NE(server, nullptr);
  EXPECT_EQ(PlaceOn(Channel(server->port(), client::ClientSecurityOptions())).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
  const std::string token_file = dir_.path() + "/right.token";
  WriteFile(token_file, kToken, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  client::ClientSecurityOptions with_token;
  with_token.token_file = token_file;
  const grpc::Status ok = PlaceOn(Channel(server->port(), with_token));
  EXPECT_TRUE(ok.ok()) << ok.error_message();
}

TEST(SecurityOptions, HalfGivenOrUnreadableFilesAreRefused) {
  ServerSecurityOptions cert_only;
  cert_only.tls_cert_file = "/nonexistent/server.pem";
  EXPECT_EQ(MakeServerCredentials(cert_only).status().code(), absl::StatusCode::kInvalidArgument);
  ServerSecurityOptions ca_only;
  ca_only.tls_client_ca_file = "/nonexistent/ca.pem";
  EXPECT_EQ(MakeServerCredentials(ca_only).status().code(), absl::StatusCode::kInvalidArgument);
  ServerSecurityOptions missing;
  missing.tls_cert_file = "/nonexistent/server.pem";
  missing.tls_key_file = "/nonexistent/server.key";
  const absl::Status s = MakeServerCredentials(missing).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(s.message()), HasSubstr("--tls_cert"));
  client::ClientSecurityOptions client_half;
  client_half.cert_file = "client.pem";
  EXPECT_EQ(client::MakeChannelCredentials(client_half).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(SecurityOptions, TokenFileMustBePrivateAndNonEmpty) {
  TempDir dir;
  const std::string path = dir.path() + "/token";
  WriteFile(path, "abc\n", std::filesystem::perms::owner_read | std::filesystem::perms::others_read);
  const absl::Status shared = ReadAuthTokenFile(path).status();
  EXPECT_EQ(shared.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(shared.message()), HasSubstr("chmod 600"));
  std::filesystem::permissions(path, std::filesystem::perms::owner_read);
  absl::StatusOr<std::string> token = ReadAuthTokenFile(path);
  ASSERT_TRUE(token.ok()) << token.status();
  EXPECT_EQ(*token, "abc");
  WriteFile(path, " \n", std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  EXPECT_EQ(ReadAuthTokenFile(path).status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(SecurityOptions, DataDirectoryIsCreatedPrivate) {
  TempDir dir;
  const std::string data = dir.path() + "/fresh/data";
  auto server = StartReadyServer(TestOptions(data));
  ASSERT_NE(server, nullptr);
  struct stat st {};
  ASSERT_EQ(::stat(data.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
}

TEST(SecurityOptions, DefaultsListenOnLoopbackOnly) {
  const ServerOptions defaults;
  EXPECT_EQ(defaults.listen_address.rfind("127.0.0.1:", 0), 0u);
  EXPECT_EQ(defaults.metrics_address.rfind("127.0.0.1:", 0), 0u);
  EXPECT_TRUE(defaults.security.auth_token.empty());
}

}  // namespace
}  // namespace placement::server
