// The service's work, without gRPC: decode a request, answer from the cache or run a placer within the
// budget, score, cache. The RPC layer (placement_service.h) calls it from the worker pool and maps its
// absl::Status to the wire.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "placement/v1/placement.pb.h"
#include "policy/registry.h"
#include "server/cache.h"
#include "server/limits.h"
#include "server/metrics.h"
#include "server/policy_catalog.h"
#include "server/transformer_answer.h"

namespace placement::server {

struct EngineConfig {
  ServerLimits limits;
  std::string version;  // of the server build
};

// What the RPC layer knows about one call.
struct CallControl {
  std::string request_id;
  absl::Time arrived = absl::Now();
  absl::Time client_deadline = absl::InfiniteFuture();  // the gRPC deadline
  const std::atomic<bool>* cancelled = nullptr;         // set when the client cancels or the server stops
  // PlaceStream: a phase of the work began ("decoded ...", "placing with ..."). May be empty.
  std::function<void(absl::string_view)> on_phase;
  // PlaceStream: an answer better than every one before it, while the placer runs. May be empty.
  std::function<void(const placement::v1::PlaceResponse&)> on_improved;
  // The request's cache key when PlaceFromMemory already computed it (Place then does not hash the payload again).
  std::string request_key;
  std::string graph_hash_header;  // the x-graph-hash metadata, when sent
};

// How long the placer may run: the nominal budget (the request's budget_ms capped at the server's maximum, or
// the server's default) from the call's arrival, cut to end early enough before the client's deadline for an
// answer of `num_ops` operators to still reach it.
struct BudgetPlan {
  absl::Time deadline;
  int64_t nominal_ms = 0;      // what the cache key records
  bool cut_by_client = false;  // the client's deadline, not the nominal budget, ends the work
  std::string warning;         // set when budget_ms was capped
};

BudgetPlan PlanBudget(int64_t budget_ms, const CallControl& control, const ServerLimits& limits, int64_t num_ops);

// Immutable: a policy swap makes a new engine (server.h), and a call keeps the one it started with. Each request
// is answered by one served policy (PlaceRequest.policy, "" the default): its registry places, and its version
// (PolicyVersion) is in the answer and in the cache key.
class PlacementEngine {
 public:
  // `classic` serves when `policies` has none (null or empty). `cache` may be null (no caching). `classic`,
  // `cache` and `metrics` must outlive the engine; it holds `policies`.
  PlacementEngine(const PlacerRegistry& classic, std::shared_ptr<const PolicySet> policies, AnswerCache* cache,
                  Metrics* metrics, EngineConfig config);

  absl::StatusOr<placement::v1::PlaceResponse> Place(const placement::v1::PlaceRequest& request,
                                                     const CallControl& control) const;
  // The answer when the cache holds it in memory under the request's key (AnswerCache::LookupRecent), without
  // blocking: cheap enough for gRPC's own thread. nullopt otherwise (Place then does the full work), also for
  // payloads too large to hash there.
  // Sets control->request_key when it computed the key.
  std::optional<placement::v1::PlaceResponse> PlaceFromMemory(const placement::v1::PlaceRequest& request,
                                                              CallControl* control) const;
  absl::StatusOr<placement::v1::SimulateResponse> Simulate(const placement::v1::SimulateRequest& request,
                                                           const CallControl& control) const;
  placement::v1::ListAlgorithmsResponse ListAlgorithms() const;

  // The metrics label for a requested algorithm: its registered name ("auto" for ""), or "unknown", so that
  // clients cannot create series.
  std::string AlgorithmLabel(absl::string_view requested) const;
  // The label of a Place request: a config.json's plan search has its own.
  std::string AlgorithmLabel(const placement::v1::PlaceRequest& request) const {
    return IsTransformerRequest(request) ? kTransformerSearch : AlgorithmLabel(request.algorithm());
  }

  const EngineConfig& config() const { return config_; }
  const PolicySet& policies() const { return *policies_; }
  // What an answer of the default policy carries.
  const std::string& DefaultPolicyVersion() const { return serving_.front().policy_version; }

 private:
  // A served policy as requests see it.
  struct Serving {
    std::string name;
    const PlacerRegistry* registry = nullptr;
    std::string policy_version;  // PolicyVersion(its weights' version)
  };
  // The policy `name` names ("" the default); INVALID_ARGUMENT listing the served ones when none is so named.
  absl::StatusOr<const Serving*> Resolve(absl::string_view name) const;

  // The cached answer for `key`, marked as a hit, with the metrics of the lookup counted (an absent key only
  // when `count_miss`: a request is one miss however many keys it tries).
  std::optional<placement::v1::PlaceResponse> Cached(const std::string& key, const CallControl& control,
                                                     bool count_miss) const;
  // The request's cache key; counts how its x-graph-hash metadata compares with the payload's hash.
  std::string RequestKey(const placement::v1::PlaceRequest& request, const std::string& algorithm,
                         const std::string& policy_version, const CallControl& control) const;
  // The steps of Place, in order (placement_engine.cc).
  struct PlaceRoute;    // what the request asks for, checked before its graph is decoded
  struct DecodedPlace;  // its graph decoded, with the placer's budget and the answer's cache key
  absl::StatusOr<PlaceRoute> Route(const placement::v1::PlaceRequest& request) const;
  // The answer's cache key for the request's decoded graph (decoded.parts and decoded.key).
  void KeyAnswer(const placement::v1::PlaceRequest& request, const PlaceRoute& route, DecodedPlace& decoded) const;
  absl::StatusOr<DecodedPlace> Decode(const placement::v1::PlaceRequest& request, const PlaceRoute& route,
                                      const CallControl& control) const;
  std::optional<placement::v1::PlaceResponse> CachedUnderGraphKey(const std::string& key,
                                                                  const std::string& request_key,
                                                                  const CallControl& control) const;
  absl::StatusOr<placement::v1::PlaceResponse> RunPlacer(const placement::v1::PlaceRequest& request,
                                                         const PlaceRoute& route, const DecodedPlace& decoded,
                                                         const CallControl& control) const;

  // A request with hf_config: its plan search, keyed and cached like any answer (placement_engine_transformer.cc).
  absl::StatusOr<placement::v1::PlaceResponse> PlaceTransformer(const placement::v1::PlaceRequest& request,
                                                                const CallControl& control) const;

  // Best effort: a failed write is logged.
  void Store(const std::string& key, const placement::v1::PlaceResponse& response, const CallControl& control) const;

  std::shared_ptr<const PolicySet> policies_;
  std::vector<Serving> serving_;  // as policies_->policies, or the classic registry alone
  AnswerCache* cache_;
  Metrics* metrics_;
  EngineConfig config_;
};

// The name an empty PlaceRequest.algorithm means.
inline constexpr char kDefaultAlgorithm[] = "auto";

}  // namespace placement::server
