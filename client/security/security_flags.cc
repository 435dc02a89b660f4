#include "client/security/security_flags.h"

#include <string>

#include "absl/flags/flag.h"

ABSL_FLAG(bool, tls, false, "use TLS (on by itself when --tls_ca or --tls_cert is given)");
ABSL_FLAG(std::string, tls_ca, "", "PEM CA that signed the server's certificate (default: the system's roots)");
ABSL_FLAG(std::string, tls_cert, "", "PEM client certificate, for mutual TLS (with --tls_key)");
ABSL_FLAG(std::string, tls_key, "", "PEM key of --tls_cert");
ABSL_FLAG(std::string, tls_server_name, "",
          "the name the server's certificate must carry (default: the host of --server)");
ABSL_FLAG(std::string, token_file, "", "file holding the bearer token (default: $PLACEMENT_AUTH_TOKEN, if set)");

namespace placement::client {

ClientSecurityOptions ClientSecurityOptionsFromFlags() {
  ClientSecurityOptions o;
  o.tls = absl::GetFlag(FLAGS_tls);
  o.ca_file = absl::GetFlag(FLAGS_tls_ca);
  o.cert_file = absl::GetFlag(FLAGS_tls_cert);
  o.key_file = absl::GetFlag(FLAGS_tls_key);
  o.server_name = absl::GetFlag(FLAGS_tls_server_name);
  o.token_file = absl::GetFlag(FLAGS_token_file);
  return o;
}

}  // namespace placement::client
