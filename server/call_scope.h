// What every RPC does around its work: take the client's x-request-id (or make one) and send it back in the
// initial metadata, read the deadline, count the call in flight, and at the end write one log line and the
// request metrics.
#pragma once

#include <atomic>
#include <string>

#include <grpcpp/grpcpp.h>
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "server/metrics.h"
#include "server/placement_engine.h"
#include "server/security.h"

namespace placement::server {

class CallScope {
 public:
  // Call on the RPC's own thread, before anything is sent (it adds initial metadata). `token_check` (null: none)
  // decides admission(), which every handler checks before it does anything else.
  CallScope(grpc::CallbackServerContext* context, Metrics* metrics, absl::string_view method,
            const BearerTokenCheck* token_check = nullptr);
  ~CallScope();  // a scope that was never finished still leaves the in-flight count
  CallScope(const CallScope&) = delete;
  CallScope& operator=(const CallScope&) = delete;

  // The control handed to the engine; its cancelled flag is this scope's.
  CallControl& control() { return control_; }
  const CallControl& control() const { return control_; }
  const std::string& request_id() const { return control_.request_id; }
  // OK, or UNAUTHENTICATED when the call lacks the bearer token this server requires.
  const absl::Status& admission() const { return admission_; }
  void Cancel() { cancelled_.store(true, std::memory_order_relaxed); }

  void set_algorithm_label(std::string label) { algorithm_ = std::move(label); }

  // Counts and logs the outcome (with `detail` on success, the message on failure), ends the in-flight count,
  // and returns the status to finish the RPC with. Call once, before the RPC's own Finish, so that a client
  // that has its answer also sees it counted.
  grpc::Status Finish(const absl::Status& status, absl::string_view detail = "");

 private:
  Metrics* metrics_;
  bool finished_ = false;
  std::string method_;
  std::string algorithm_ = "none";
  std::atomic<bool> cancelled_{false};
  CallControl control_;
  absl::Status admission_;
};

// The gRPC deadline of a call; InfiniteFuture when the client set none.
absl::Time DeadlineOf(const grpc::CallbackServerContext& context);

}  // namespace placement::server
