#include "client/server_channel.h"

#include <algorithm>
#include <limits>

#include "client/security/security_flags.h"

namespace placement::cli {
namespace {

int ClampToInt(int64_t v) { return static_cast<int>(std::min<int64_t>(v, std::numeric_limits<int>::max())); }

}  // namespace

absl::StatusOr<std::shared_ptr<grpc::Channel>> MakeServerChannel(const std::string& address,
                                                                 const ServerChannelOptions& options) {
  const client::ClientSecurityOptions security = client::ClientSecurityOptionsFromFlags();
  absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> credentials = client::MakeChannelCredentials(security);
  if (!credentials.ok()) return credentials.status();
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(ClampToInt(options.max_receive_bytes));
  args.SetMaxSendMessageSize(ClampToInt(options.max_send_bytes));
  if (!security.server_name.empty()) args.SetSslTargetNameOverride(security.server_name);
  return grpc::CreateCustomChannel(address, *credentials, args);
}

}  // namespace placement::cli
