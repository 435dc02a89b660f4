#include "server/server.h"

#include <sys/statvfs.h>

#include <algorithm>
#include <limits>
#include <utility>

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "policy/placer_families.h"
#include "server/cache.h"
#include "server/metrics.h"
#include "server/placement_engine.h"
#include "server/placement_service.h"
#include "server/request_log.h"
#include "server/thread_pool.h"
#include "server/ticker.h"

#ifndef PLACEMENT_VERSION
#define PLACEMENT_VERSION "unknown"
#endif

namespace placement::server {
namespace {

namespace pb = ::placement::v1;

absl::Status CheckOptions(const ServerOptions& o) {
  const ServerLimits& l = o.limits;
  if (l.max_message_bytes <= 0 || l.max_operators <= 0 || l.max_edges <= 0 || l.max_devices <= 0) {
    return absl::InvalidArgumentError("every limit (message size, operators, edges, devices) must be positive");
  }
  if (l.default_budget <= absl::ZeroDuration() || l.max_budget < l.default_budget) {
    return absl::InvalidArgumentError("the default budget must be positive and at most the maximum budget");
  }
  if (o.max_queued_requests < 0) return absl::InvalidArgumentError("--max_queued_requests must not be negative");
  if (o.heartbeat_period <= absl::ZeroDuration()) return absl::InvalidArgumentError("--heartbeat must be positive");
  if (o.policy_device != "auto" && o.policy_device != "cpu" && o.policy_device != "cuda" && o.policy_device != "none") {
    return absl::InvalidArgumentError(
        absl::StrCat("--policy_device '", o.policy_device, "' is not one of auto, cpu, cuda, none"));
  }
  return absl::OkStatus();
}

pb::ServerLimits LimitsToProto(const ServerOptions& o, const ThreadPool& pool) {
  pb::ServerLimits out;
  out.set_max_message_bytes(o.limits.max_message_bytes);
  out.set_max_operators(o.limits.max_operators);
  out.set_max_edges(o.limits.max_edges);
  out.set_max_devices(o.limits.max_devices);
  out.set_default_budget_ms(absl::ToInt64Milliseconds(o.limits.default_budget));
  out.set_max_budget_ms(absl::ToInt64Milliseconds(o.limits.max_budget));
  out.set_worker_threads(pool.threads());
  out.set_max_queued_requests(pool.max_queued());
  return out;
}

// The cache's size and bound, and the space of the filesystem under the data directory (zeros where statvfs
// fails: a scrape reports what it can).
Metrics::StorageFigures StorageFiguresOf(const AnswerCache& cache, const ServerOptions& o) {
  Metrics::StorageFigures f;
  f.cache_bytes = cache.ApproximateBytes();
  f.cache_limit_bytes = o.cache_max_bytes;
  struct statvfs fs;
  if (statvfs(o.data_dir.c_str(), &fs) == 0) {
    f.disk_available_bytes = static_cast<int64_t>(fs.f_bavail) * static_cast<int64_t>(fs.f_frsize);
    f.disk_size_bytes = static_cast<int64_t>(fs.f_blocks) * static_cast<int64_t>(fs.f_frsize);
  }
  return f;
}

pb::GetServerInfoResponse BaseInfo(const ServerOptions& o, const ThreadPool& pool) {
  pb::GetServerInfoResponse info;
  info.set_version(ServerVersion());
  info.set_policy_version(PolicyVersion());
  *info.mutable_limits() = LimitsToProto(o, pool);
  info.set_cache_capacity_bytes(o.cache_max_bytes);
  return info;
}

// ReloadPolicy's token: the admin token when one is set, else the token every call carries; "" refuses it.
std::string AdminToken(const ServerSecurityOptions& s) { return !s.admin_token.empty() ? s.admin_token : s.auth_token; }

}  // namespace

std::string ServerVersion() { return PLACEMENT_VERSION; }

// The placers are built into the server, so their version is the build's; a learned policy adds its weights'
// version.
std::string PolicyVersion(absl::string_view learned_version) {
  return absl::StrCat("placers-", PLACEMENT_VERSION, "/learned-", learned_version.empty() ? "none" : learned_version);
}

PlacementServer::PlacementServer(ServerOptions options) : options_(std::move(options)) {}

PlacementServer::~PlacementServer() { Shutdown(absl::ZeroDuration()); }

absl::StatusOr<std::unique_ptr<PlacementServer>> PlacementServer::Start(ServerOptions options) {
  if (absl::Status s = CheckOptions(options); !s.ok()) return s;
  std::unique_ptr<PlacementServer> server(new PlacementServer(std::move(options)));
  if (absl::Status s = server->Open(); !s.ok()) return s;  // the destructor closes what was opened
  server->loader_ = std::thread([p = server.get()] { p->Load(); });
  return server;
}

absl::Status PlacementServer::Open() {
  metrics_ = std::make_unique<Metrics>(ServerVersion());
  if (!options_.metrics_address.empty()) {
    if (absl::Status s = metrics_->Serve(options_.metrics_address); !s.ok()) return s;
  }
  absl::StatusOr<std::unique_ptr<AnswerCache>> cache =
      AnswerCache::Open(CacheOptions{options_.data_dir, options_.cache_max_bytes, options_.cache_memory_bytes});
  if (!cache.ok()) return cache.status();
  cache_ = *std::move(cache);
  metrics_->SetStorageSource([this] { return StorageFiguresOf(*cache_, options_); });
  pool_ = std::make_unique<ThreadPool>(options_.worker_threads, options_.max_queued_requests);
  ticker_ = std::make_unique<Ticker>(options_.heartbeat_period);

  const pb::GetServerInfoResponse info = BaseInfo(options_, *pool_);
  absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> credentials = MakeServerCredentials(options_.security);
  if (!credentials.ok()) return credentials.status();
  token_check_ = std::make_unique<BearerTokenCheck>(options_.security.auth_token);
  admin_check_ = std::make_unique<BearerTokenCheck>(AdminToken(options_.security));
  ServiceDeps deps{.pool = pool_.get(),
                   .metrics = metrics_.get(),
                   .ticker = ticker_.get(),
                   .token_check = token_check_.get(),
                   .admin_check = admin_check_.get(),
                   .reload = [this](const ReloadRequest& r) { return ReloadPolicies(r); }};
  service_ = std::make_unique<PlacementServiceImpl>(std::move(deps), info);

  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  builder.AddListeningPort(options_.listen_address, *credentials, &port_);
  builder.RegisterService(service_.get());
  const int max_message =
      static_cast<int>(std::min<int64_t>(options_.limits.max_message_bytes, std::numeric_limits<int>::max()));
  builder.SetMaxReceiveMessageSize(max_message);
  builder.SetMaxSendMessageSize(max_message);
  // Keepalive: find dead clients of long PlaceStream calls; let clients ping an idle connection once a minute.
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, 60'000);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 20'000);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS, 30'000);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  server_ = builder.BuildAndStart();
  if (server_ == nullptr || port_ == 0) {
    return absl::UnavailableError(absl::StrCat("cannot listen on '", options_.listen_address, "'"));
  }
  // Says how the port is protected, never with what (no token, no key material).
  const ServerSecurityOptions& sec = options_.security;
  LogLine("", absl::StrCat("transport: ",
                           sec.tls_cert_file.empty()        ? "plaintext"
                           : sec.tls_client_ca_file.empty() ? "TLS"
                                                            : "mutual TLS",
                           "; bearer token ", token_check_->required() ? "required" : "not required"));
  // Liveness ("") is SERVING from here on; readiness waits for Load.
  server_->GetHealthCheckService()->SetServingStatus(kServiceName, false);
  return absl::OkStatus();
}

void PlacementServer::Load() {
  classic_ = options_.registry != nullptr ? options_.registry : &DefaultPlacerRegistry();
  if (options_.policy_device != "none" && options_.policy_loader) {
    absl::StatusOr<PolicyRuntime> runtime = options_.policy_loader(options_.policy_device);
    if (!runtime.ok()) {
      LogLine("", absl::StrCat("not ready: the policy's device (--policy_device=", options_.policy_device,
                               ") failed: ", runtime.status().message()));
      loaded_.Notify();
      return;
    }
    runtime_ = *std::move(runtime);
  }
  catalog_ = std::make_unique<PolicyCatalog>(options_.policy_specs, options_.policies, options_.policy_file_loader,
                                             options_.data_dir + "/policies");
  if (options_.before_ready) options_.before_ready();
  {
    absl::MutexLock lock(&lifecycle_mu_);
    if (!shut_down_.load()) {
      Publish(catalog_->current());
      ready_.store(true, std::memory_order_release);
      server_->GetHealthCheckService()->SetServingStatus(kServiceName, true);
      metrics_->SetReady(true);
      LogLine("", absl::StrCat("ready: ", engine_->ListAlgorithms().algorithms_size(), " algorithms, policy device '",
                               runtime_.device, "', policy version ", engine_->DefaultPolicyVersion()));
    }
  }
  loaded_.Notify();
}

void PlacementServer::Publish(std::shared_ptr<const PolicySet> policies) {
  EngineConfig config;
  config.limits = options_.limits;
  config.version = ServerVersion();
  auto engine = std::make_shared<const PlacementEngine>(*classic_, std::move(policies), cache_.get(), metrics_.get(),
                                                        std::move(config));
  pb::GetServerInfoResponse info = BaseInfo(options_, *pool_);
  info.set_policy_device(runtime_.device);
  info.set_torch_version(runtime_.torch_version);
  info.set_policy_version(engine->DefaultPolicyVersion());
  ServedPoliciesToProto(engine->policies(), info.mutable_policies());
  engine_ = engine;
  service_->SetEngine(std::move(engine), std::move(info));
}

absl::StatusOr<ReloadResult> PlacementServer::ReloadPolicies(const ReloadRequest& request) {
  if (!ready()) {
    LogLine("", "policy reload refused: the server is not ready yet");
    return absl::UnavailableError("the server is starting: the policies are not loaded yet (retry)");
  }
  absl::StatusOr<ReloadResult> result = catalog_->Reload(request);
  metrics_->PolicyReload(result.ok());
  if (!result.ok()) {
    LogLine("", absl::StrCat("policy reload refused: ", result.status().message()));
    return result;
  }
  absl::MutexLock lock(&lifecycle_mu_);
  if (shut_down_.load()) return absl::UnavailableError("the server is stopping");
  Publish(result->set);
  std::string versions;
  for (const std::string& name : result->reloaded) {
    absl::StrAppend(&versions, versions.empty() ? "" : ", ", name, " ", result->set->Find(name)->version, " from ",
                    result->set->Find(name)->weights);
  }
  LogLine("",
          absl::StrCat("policy reloaded: ", versions, "; answers from now on carry ", engine_->DefaultPolicyVersion()));
  return result;
}

int PlacementServer::metrics_port() const { return metrics_ != nullptr ? metrics_->port() : 0; }

bool PlacementServer::WaitUntilReady(absl::Duration timeout) const {
  return loaded_.WaitForNotificationWithTimeout(timeout) && ready();
}

void PlacementServer::Shutdown(absl::Duration grace) {
  {
    absl::MutexLock lock(&lifecycle_mu_);
    if (shut_down_.exchange(true)) return;
    // Load balancers and readiness probes see NOT_SERVING before the port closes.
    if (server_ != nullptr) server_->GetHealthCheckService()->Shutdown();
    if (metrics_ != nullptr) metrics_->SetReady(false);
  }
  if (server_ != nullptr) {
    // Waits for the calls in flight; at the deadline gRPC cancels the rest, which sets their cancelled flags.
    server_->Shutdown(absl::ToChronoTime(absl::Now() + grace));
  }
  if (loader_.joinable()) loader_.join();
  ticker_.reset();
  if (pool_ != nullptr) pool_->Stop();
  const bool was_serving = server_ != nullptr && port_ != 0;
  if (metrics_ != nullptr) metrics_->SetStorageSource(nullptr);  // before what it reads closes
  cache_.reset();                                                // closes RocksDB
  if (was_serving) LogLine("", "stopped");
}

}  // namespace placement::server
