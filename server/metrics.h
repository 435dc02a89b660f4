// The service's Prometheus metrics: prometheus-cpp families, served on their own port at /metrics
// (metrics_http.h says why not through prometheus::Exposer).
//
//   placement_requests_total{method,code}                       counter: finished RPCs by gRPC code name
//   placement_request_duration_seconds{method,algorithm}        histogram: RPC wall time
//   placement_cache_hits_total / placement_cache_misses_total   counters: Place lookups (misses include the
//   placement_cache_invalid_entries_total{reason}               counter:   damaged and old-format entries,
//                                                                          also counted here by reason)
//   placement_graph_operators                                   histogram: operators of each graph placed or
//                                                                          simulated (after a training expansion)
//   placement_ratio_to_bound                                    histogram: answer value / lower bound
//   placement_policy_inference_seconds                          histogram: time in the learned policy; only
//                                                                          observed when a placer named
//                                                                          "policy..." runs, so it stays empty
//                                                                          until the learned policy is registered
//   placement_inflight_requests                                 gauge: RPCs being served
//   placement_ready                                             gauge: 1 while readiness is SERVING
//   placement_cache_bytes / placement_cache_limit_bytes         gauges: the answer cache's size and bound
//   placement_data_dir_available_bytes / _size_bytes            gauges: the cache's filesystem, free and in all
//                                                                          (these four read at every scrape)
//   placement_build_info{version}                               gauge: always 1
//
// Label values come from small fixed sets (method names, gRPC codes, registered placer names), so the number
// of series stays bounded whatever clients send.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"

namespace prometheus {
class Counter;
class Gauge;
class Histogram;
class Registry;
template <typename T>
class Family;
}  // namespace prometheus

namespace placement::server {

class MetricsEndpoint;

class Metrics {
 public:
  explicit Metrics(absl::string_view version);
  ~Metrics();
  Metrics(const Metrics&) = delete;
  Metrics& operator=(const Metrics&) = delete;

  // Serves /metrics at "host:port" (port 0 picks a free one). Fails when the address cannot be bound.
  absl::Status Serve(const std::string& address);
  int port() const;  // 0 when not serving

  // The metrics in the text exposition format, as a scrape returns them.
  std::string Text() const;

  void RequestFinished(absl::string_view method, absl::string_view code, absl::string_view algorithm, double seconds);
  void CacheHit();
  void CacheMiss();
  void CacheInvalidEntry(absl::string_view reason);  // "corrupt" or "other_version"; also a miss
  void GraphOperators(int64_t operators);
  void RatioToBound(double ratio);
  void PolicyInference(double seconds);
  void PolicyReload(bool swapped);
  void InflightChanged(int delta);
  // A Place request's x-graph-hash metadata against the SHA-256 of its graph payload.
  enum class GraphHashHeader { kAbsent, kMatch, kMismatch };
  void GraphHashHeaderChecked(GraphHashHeader result);
  void SetReady(bool ready);

  // What the storage gauges show, read at every scrape so that they are never stale.
  struct StorageFigures {
    int64_t cache_bytes = 0;
    int64_t cache_limit_bytes = 0;
    int64_t disk_available_bytes = 0;
    int64_t disk_size_bytes = 0;
  };
  // The function that reads them; an empty one stops reading (before what it reads is closed).
  void SetStorageSource(std::function<StorageFigures()> source);

 private:
  // The constructor's steps, each registering one group of families.
  void RegisterRequestSeries();
  void RegisterCacheSeries();
  void RegisterAnswerSeries();
  void RegisterServerState(absl::string_view version);
  void RegisterLabelledCounters();

  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Family<prometheus::Counter>* requests_ = nullptr;
  prometheus::Family<prometheus::Histogram>* duration_ = nullptr;
  prometheus::Family<prometheus::Counter>* invalid_entries_ = nullptr;
  prometheus::Counter* cache_hits_ = nullptr;
  prometheus::Counter* cache_misses_ = nullptr;
  prometheus::Histogram* operators_ = nullptr;
  prometheus::Histogram* ratio_ = nullptr;
  prometheus::Histogram* policy_ = nullptr;
  prometheus::Gauge* inflight_ = nullptr;
  prometheus::Counter* graph_hash_header_[3] = {};  // by GraphHashHeader
  prometheus::Gauge* ready_ = nullptr;
  prometheus::Counter* reloads_[2] = {};  // refused, swapped
  prometheus::Gauge* storage_[4] = {};    // cache bytes, cache limit, disk available, disk size
  mutable absl::Mutex storage_mu_;
  std::function<StorageFigures()> storage_source_ ABSL_GUARDED_BY(storage_mu_);
  std::unique_ptr<MetricsEndpoint> endpoint_;
};

}  // namespace placement::server
