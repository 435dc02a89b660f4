// placement.v1.PlacementService on gRPC's callback API.
//
// Place, PlaceStream and Simulate hand their work to the worker pool and finish their reactor from there, so
// gRPC's own threads never run a placer; a full pool queue answers RESOURCE_EXHAUSTED at once. A client's
// cancellation (or the server's shutdown after its grace period) sets the call's cancelled flag, which the
// placers' Budget polls. ListAlgorithms and GetServerInfo are cheap and answer inline. Until the server is
// ready (cache open, placers and policy loaded) every method but GetServerInfo answers UNAVAILABLE. Each call
// holds the engine it started with: a policy swap (ReloadPolicy) changes what later calls get, never a call in
// flight.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "placement/v1/placement.grpc.pb.h"
#include "server/metrics.h"
#include "server/placement_engine.h"
#include "server/policy_catalog.h"
#include "server/security.h"
#include "server/thread_pool.h"
#include "server/ticker.h"

namespace placement::server {

// The service's name in grpc.health.v1: its readiness. The overall service ("") is liveness.
inline constexpr char kServiceName[] = "placement.v1.PlacementService";

// What the handlers share; owned by PlacementServer, outlives every call.
struct ServiceDeps {
  ThreadPool* pool = nullptr;
  Metrics* metrics = nullptr;
  Ticker* ticker = nullptr;                       // PlaceStream heartbeats
  const BearerTokenCheck* token_check = nullptr;  // null: no token required
  // ReloadPolicy: the admin token's check (null or none required: the RPC is refused) and what it calls.
  const BearerTokenCheck* admin_check = nullptr;
  std::function<absl::StatusOr<ReloadResult>(const ReloadRequest&)> reload;
};

// The policies of `set` as GetServerInfo and ReloadPolicy list them, the default first.
void ServedPoliciesToProto(const PolicySet& set,
                           google::protobuf::RepeatedPtrField<placement::v1::ServedPolicy>* policies);

class PlacementServiceImpl final : public placement::v1::PlacementService::CallbackService {
 public:
  // `info` is what GetServerInfo answers before the server is ready (version, limits).
  PlacementServiceImpl(ServiceDeps deps, placement::v1::GetServerInfoResponse info);

  // Makes the server ready, or swaps its engine (new policies): calls from now on use `engine`; each call holds
  // the engine it started with until it ends.
  void SetEngine(std::shared_ptr<const PlacementEngine> engine, placement::v1::GetServerInfoResponse info);
  std::shared_ptr<const PlacementEngine> engine() const;

  grpc::ServerUnaryReactor* Place(grpc::CallbackServerContext* context, const placement::v1::PlaceRequest* request,
                                  placement::v1::PlaceResponse* response) override;
  grpc::ServerWriteReactor<placement::v1::PlaceProgress>* PlaceStream(
      grpc::CallbackServerContext* context, const placement::v1::PlaceRequest* request) override;
  grpc::ServerUnaryReactor* Simulate(grpc::CallbackServerContext* context,
                                     const placement::v1::SimulateRequest* request,
                                     placement::v1::SimulateResponse* response) override;
  grpc::ServerUnaryReactor* ListAlgorithms(grpc::CallbackServerContext* context,
                                           const placement::v1::ListAlgorithmsRequest* request,
                                           placement::v1::ListAlgorithmsResponse* response) override;
  grpc::ServerUnaryReactor* GetServerInfo(grpc::CallbackServerContext* context,
                                          const placement::v1::GetServerInfoRequest* request,
                                          placement::v1::GetServerInfoResponse* response) override;
  // Runs on the pool (it reads and checks weights files); see PlacementServer::ReloadPolicies.
  grpc::ServerUnaryReactor* ReloadPolicy(grpc::CallbackServerContext* context,
                                         const placement::v1::ReloadPolicyRequest* request,
                                         placement::v1::ReloadPolicyResponse* response) override;

 private:
  ServiceDeps deps_;
  mutable absl::Mutex mu_;  // held only to copy or swap what it guards
  std::shared_ptr<const PlacementEngine> engine_ ABSL_GUARDED_BY(mu_);
  placement::v1::GetServerInfoResponse info_ ABSL_GUARDED_BY(mu_);
};

}  // namespace placement::server
