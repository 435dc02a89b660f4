// The command-line flags of a client's connection security (--tls, --tls_ca, --tls_cert, --tls_key,
// --tls_server_name, --token_file), shared by placement_probe and placectl so they read alike.
#pragma once

#include "client/security/channel_credentials.h"

namespace placement::client {

// The options the flags describe.
ClientSecurityOptions ClientSecurityOptionsFromFlags();

}  // namespace placement::client
