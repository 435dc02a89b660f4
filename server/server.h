// The placement server: the gRPC service with health checking and reflection, the answer cache, the metrics
// endpoint and the worker pool, started and stopped as one.
//
// Start opens the cache (a data directory held by another process is an error) and the ports, then loads the
// placers and the policy's device on a thread of its own; the readiness service (kServiceName in
// grpc.health.v1) says NOT_SERVING until that is done and SERVING after, while the overall service ("") says
// SERVING as soon as the server accepts calls (liveness).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "policy/registry.h"
#include "server/limits.h"
#include "server/policy_catalog.h"
#include "server/security.h"

namespace grpc {
class Server;
}

namespace placement::server {

class AnswerCache;
class Metrics;
class PlacementEngine;
class PlacementServiceImpl;
class ThreadPool;
class Ticker;

// Where the learned policy runs, as its loader reports it.
struct PolicyRuntime {
  std::string device;  // "cuda:0", "cpu"
  std::string torch_version;
};

// Loads the learned policy's runtime for a device preference ("auto", "cpu" or "cuda"). The binary passes one
// backed by LibTorch (policy/learned); the library itself does not link LibTorch, so its tests start fast.
using PolicyLoader = std::function<absl::StatusOr<PolicyRuntime>(const std::string& preference)>;

struct ServerOptions {
  std::string listen_address = "127.0.0.1:50051";  // port 0 picks a free port (see port())
  std::string metrics_address = "127.0.0.1:9464";  // "" serves no /metrics
  std::string data_dir = "./data";                 // the answer cache's RocksDB
  int64_t cache_max_bytes = int64_t{1} << 30;
  int64_t cache_memory_bytes = int64_t{64} << 20;  // parsed answers in memory in front of RocksDB
  ServerLimits limits;
  ServerSecurityOptions security;  // plaintext and no token unless set
  int32_t worker_threads = 0;      // 0: one per core
  int32_t max_queued_requests = 256;
  absl::Duration heartbeat_period = absl::Seconds(1);  // PlaceStream
  std::string policy_device = "auto";      // where the learned policy runs: auto, cpu, cuda, or none (skip it)
  PolicyLoader policy_loader;              // null: this build has no learned-policy runtime (as with "none")
  std::string policy_weights;              // for the binary's loader: the default policy's file ("" the shipped one)
  std::vector<PolicySpec> named_policies;  // for the binary's loader: more policies served beside the default
  bool policy_fallback = false;            // for the binary's loader: serve without the policy when it cannot load
  // The learned policies (policy_setup.h fills these): those loaded at start, the default first (null or empty:
  // none, AUTO runs without); every one configured, also those that failed to load (a reload tries them again);
  // and the loader reloads read files with (null: this server cannot load weights).
  std::shared_ptr<const PolicySet> policies;
  std::vector<PolicySpec> policy_specs;
  PolicyFileLoader policy_file_loader;
  const PlacerRegistry* registry = nullptr;  // DefaultPlacerRegistry() when null
  // Runs on the loading thread just before the server turns ready (tests hold readiness back with it).
  std::function<void()> before_ready;
};

// The version of the placers and of the learned policy's weights an answer comes from ("" for none): in every
// answer and every cache key.
std::string PolicyVersion(absl::string_view learned_version = "");
// The server's build version.
std::string ServerVersion();

class PlacementServer {
 public:
  static absl::StatusOr<std::unique_ptr<PlacementServer>> Start(ServerOptions options);
  ~PlacementServer();  // Shutdown(zero grace) when not done yet
  PlacementServer(const PlacementServer&) = delete;
  PlacementServer& operator=(const PlacementServer&) = delete;

  int port() const { return port_; }
  int metrics_port() const;  // 0 when no metrics endpoint
  bool ready() const { return ready_.load(std::memory_order_acquire); }
  // True once ready; false when `timeout` passed first (or loading failed).
  bool WaitUntilReady(absl::Duration timeout) const;

  // Marks every service NOT_SERVING, stops accepting calls, lets calls in flight finish for up to `grace`, then
  // cancels the rest (their placers see the cancelled flag), waits for them, and closes the cache. Idempotent.
  void Shutdown(absl::Duration grace);

  Metrics& metrics() { return *metrics_; }

  // Swaps learned-policy weights while serving (ReloadPolicy and SIGHUP): the new files are read and checked
  // first, and only then do calls that arrive use them; calls in flight finish on theirs. On error the weights
  // serving stay as they were. Logs the outcome either way.
  absl::StatusOr<ReloadResult> ReloadPolicies(const ReloadRequest& request);

 private:
  explicit PlacementServer(ServerOptions options);
  absl::Status Open();
  void Load();  // on loader_
  // The engine for `policies`, and the server info that goes with it, made current.
  void Publish(std::shared_ptr<const PolicySet> policies) ABSL_EXCLUSIVE_LOCKS_REQUIRED(lifecycle_mu_);

  ServerOptions options_;
  std::unique_ptr<Metrics> metrics_;
  std::unique_ptr<AnswerCache> cache_;
  std::unique_ptr<ThreadPool> pool_;
  std::unique_ptr<Ticker> ticker_;
  std::unique_ptr<BearerTokenCheck> token_check_;
  std::unique_ptr<BearerTokenCheck> admin_check_;  // ReloadPolicy
  std::unique_ptr<PlacementServiceImpl> service_;
  std::shared_ptr<const PlacementEngine> engine_;  // the current one; calls in flight may hold older ones
  std::unique_ptr<PolicyCatalog> catalog_;
  const PlacerRegistry* classic_ = nullptr;  // what serves without a learned policy
  PolicyRuntime runtime_;
  std::unique_ptr<grpc::Server> server_;
  std::thread loader_;
  absl::Mutex lifecycle_mu_;   // orders the readiness flip against Shutdown's health change
  absl::Notification loaded_;  // loading ended, ready or not
  std::atomic<bool> ready_{false};
  std::atomic<bool> shut_down_{false};
  int port_ = 0;
};

}  // namespace placement::server
