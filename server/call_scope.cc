#include "server/call_scope.h"

#include <chrono>

#include "absl/strings/str_format.h"
#include "server/request_log.h"
#include "server/status_mapping.h"

namespace placement::server {

absl::Time DeadlineOf(const grpc::CallbackServerContext& context) {
  const std::chrono::system_clock::time_point deadline = context.deadline();
  if (deadline == std::chrono::system_clock::time_point::max()) return absl::InfiniteFuture();
  return absl::FromChrono(deadline);
}

CallScope::CallScope(grpc::CallbackServerContext* context, Metrics* metrics, absl::string_view method,
                     const BearerTokenCheck* token_check)
    : metrics_(metrics), method_(method) {
  if (token_check != nullptr) admission_ = token_check->Check(*context);
  metrics_->InflightChanged(+1);
  absl::string_view client_id;
  const auto& metadata = context->client_metadata();
  if (auto it = metadata.find(kRequestIdHeader); it != metadata.end()) {
    client_id = absl::string_view(it->second.data(), it->second.size());
  }
  control_.request_id = RequestIdFrom(client_id);
  if (auto it = metadata.find(kGraphHashHeader); it != metadata.end()) {
    control_.graph_hash_header.assign(it->second.data(), it->second.size());
  }
  control_.arrived = absl::Now();
  control_.client_deadline = DeadlineOf(*context);
  control_.cancelled = &cancelled_;
  context->AddInitialMetadata(kRequestIdHeader, control_.request_id);
}

CallScope::~CallScope() {
  if (!finished_) metrics_->InflightChanged(-1);
}

grpc::Status CallScope::Finish(const absl::Status& given, absl::string_view detail) {
  // gRPC cancels a call whose deadline passed, so the placer sees "cancelled"; say what really happened.
  const absl::Status status =
      given.code() == absl::StatusCode::kCancelled && absl::Now() >= control_.client_deadline
          ? absl::DeadlineExceededError("the client's deadline passed before the answer was ready")
          : given;
  const grpc::Status out = ToGrpcStatus(status);
  const char* code = GrpcCodeName(out.error_code());
  const double seconds = absl::ToDoubleSeconds(absl::Now() - control_.arrived);
  metrics_->RequestFinished(method_, code, algorithm_, seconds);
  if (!finished_) metrics_->InflightChanged(-1);
  finished_ = true;
  LogLine(control_.request_id, absl::StrFormat("%s %s %.1f ms%s%s", method_, code, seconds * 1e3,
                                               status.ok() ? (detail.empty() ? "" : " ") : ": ",
                                               status.ok() ? detail : absl::string_view(out.error_message())));
  return out;
}

}  // namespace placement::server
