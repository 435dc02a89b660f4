#include "client/server_channel.h"

#include <algorithm>
#include <limits>

namespace placement::cli {
namespace {

int ClampToInt(int64_t v) { return static_cast<int>(std::min<int64_t>(v, std::numeric_limits<int>::max())); }

}  // namespace

std::shared_ptr<grpc::Channel> MakeServerChannel(const std::string& address, const ServerChannelOptions& options) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(ClampToInt(options.max_receive_bytes));
  args.SetMaxSendMessageSize(ClampToInt(options.max_send_bytes));
  return grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args);
}

}  // namespace placement::cli
