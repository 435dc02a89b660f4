#include "client/reload_command.h"

#include <chrono>
#include <memory>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/flag_values.h"
#include "client/remote_commands.h"
#include "client/rpc_request.h"
#include "client/server_channel.h"
#include "graph/file_io.h"
#include "placement/v1/placement.grpc.pb.h"

namespace placement::cli {

namespace pb = ::placement::v1;

namespace {

// The --weights file's bytes, refused here when they cannot be weights, rather than sent for the server to refuse.
absl::StatusOr<std::string> ReadWeights(const std::string& path) {
  absl::StatusOr<std::string> bytes = ReadWholeFile(path);
  if (!bytes.ok()) return absl::NotFoundError(absl::StrCat("--weights: ", bytes.status().message()));
  if (bytes->empty()) return absl::InvalidArgumentError(absl::StrCat("--weights: '", path, "' is empty"));
  // torch.save and torch::save write a ZIP archive.
  if (!absl::StartsWith(*bytes, absl::string_view("PK\x03\x04", 4))) {
    return absl::InvalidArgumentError(
        absl::StrCat("--weights: '", path, "' is not a policy's weights (a PyTorch ZIP archive, as train writes)"));
  }
  return bytes;
}

}  // namespace

absl::StatusOr<std::string> RunReload(const ReloadOptions& o) {
  if (o.output != "table" && o.output != "json") {
    return absl::InvalidArgumentError(absl::StrCat("--output '", o.output, "' is not one of table, json"));
  }
  absl::StatusOr<absl::Duration> timeout = ParsePositiveDuration("timeout", o.timeout);
  if (!timeout.ok()) return timeout.status();
  pb::ReloadPolicyRequest request;
  request.set_name(o.policy);
  if (!o.weights.empty()) {
    absl::StatusOr<std::string> bytes = ReadWeights(o.weights);
    if (!bytes.ok()) return bytes.status();
    request.set_weights(*std::move(bytes));
  }
  absl::StatusOr<std::shared_ptr<grpc::Channel>> channel = MakeServerChannel(o.server);
  if (!channel.ok()) return channel.status();
  std::unique_ptr<pb::PlacementService::Stub> stub = pb::PlacementService::NewStub(*channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + absl::ToChronoMilliseconds(*timeout));
  pb::ReloadPolicyResponse response;
  const grpc::Status status = stub->ReloadPolicy(&context, request, &response);
  if (!status.ok()) return FromGrpc(status, o.server);
  if (o.output == "json") return MessageJson(response);
  return absl::StrCat("reloaded       ", absl::StrJoin(response.reloaded(), ", "), "\n",
                      DescribePolicies(response.policies()));
}

}  // namespace placement::cli
