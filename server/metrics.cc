#include "server/metrics.h"

#include <string>
#include <utility>
#include <vector>

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include "absl/strings/str_cat.h"
#include "server/metrics_http.h"

namespace placement::server {
namespace {

// Request times from a cache hit (about a millisecond) to a long search (minutes).
const std::vector<double> kSecondsBuckets = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
                                             1,     2.5,    5,     10,   30,    60,   120, 300};
// Graph sizes from toy graphs to the 100k-operator graphs the server is sized for.
const std::vector<double> kOperatorBuckets = {10, 30, 100, 300, 1000, 3000, 10000, 30000, 100000, 300000, 1000000};
// How far answers are from their lower bound: 1 is optimal.
const std::vector<double> kRatioBuckets = {1, 1.01, 1.02, 1.05, 1.1, 1.2, 1.5, 2, 3, 5, 10};

// Families without labels hold one series, registered here with its help text.
prometheus::Counter* OneCounter(prometheus::Registry& registry, const std::string& name, const std::string& help) {
  return &prometheus::BuildCounter().Name(name).Help(help).Register(registry).Add({});
}
prometheus::Gauge* OneGauge(prometheus::Registry& registry, const std::string& name, const std::string& help) {
  return &prometheus::BuildGauge().Name(name).Help(help).Register(registry).Add({});
}
prometheus::Histogram* OneHistogram(prometheus::Registry& registry, const std::string& name, const std::string& help,
                                    const std::vector<double>& buckets) {
  return &prometheus::BuildHistogram().Name(name).Help(help).Register(registry).Add({}, buckets);
}
prometheus::Family<prometheus::Counter>& CounterFamily(prometheus::Registry& registry, const std::string& name,
                                                       const std::string& help) {
  return prometheus::BuildCounter().Name(name).Help(help).Register(registry);
}

}  // namespace

Metrics::Metrics(absl::string_view version) : registry_(std::make_shared<prometheus::Registry>()) {
  // Registered in the order a scrape lists them.
  RegisterRequestSeries();
  RegisterCacheSeries();
  RegisterAnswerSeries();
  RegisterServerState(version);
  // Series that exist before the first request, so dashboards and alerts see zeros rather than nothing.
  RegisterLabelledCounters();
}

void Metrics::RegisterRequestSeries() {
  requests_ = &CounterFamily(*registry_, "placement_requests_total", "Finished RPCs by method and gRPC status code");
  duration_ = &prometheus::BuildHistogram()
                   .Name("placement_request_duration_seconds")
                   .Help("RPC wall time in seconds by method and requested algorithm")
                   .Register(*registry_);
}

void Metrics::RegisterCacheSeries() {
  cache_hits_ = OneCounter(*registry_, "placement_cache_hits_total", "Place requests answered from the answer cache");
  cache_misses_ =
      OneCounter(*registry_, "placement_cache_misses_total",
                 "Place requests the answer cache could not answer (absent, damaged or old-format entries)");
  invalid_entries_ =
      &CounterFamily(*registry_, "placement_cache_invalid_entries_total",
                     "Answer cache entries read as misses because they were damaged or of another format");
}

void Metrics::RegisterAnswerSeries() {
  operators_ =
      OneHistogram(*registry_, "placement_graph_operators",
                   "Operators of each graph placed or simulated (after a training expansion)", kOperatorBuckets);
  ratio_ = OneHistogram(*registry_, "placement_ratio_to_bound",
                        "Value of each computed answer divided by the objective's lower bound (1 is optimal)",
                        kRatioBuckets);
  policy_ = OneHistogram(*registry_, "placement_policy_inference_seconds",
                         "Time spent in the learned placement policy per request (empty until one is registered)",
                         kSecondsBuckets);
}

void Metrics::RegisterServerState(absl::string_view version) {
  inflight_ = OneGauge(*registry_, "placement_inflight_requests", "RPCs being served");
  ready_ = OneGauge(*registry_, "placement_ready",
                    "1 while the server is ready (readiness SERVING: the policy loaded, the cache open), else 0");
  const std::pair<const char*, const char*> storage[4] = {
      {"placement_cache_bytes", "Bytes of the answer cache on disk and in its write buffers"},
      {"placement_cache_limit_bytes", "The answer cache's bound (--cache_max_mb); the oldest answers go past it"},
      {"placement_data_dir_available_bytes", "Bytes free for the server on the data directory's filesystem"},
      {"placement_data_dir_size_bytes", "Size of the data directory's filesystem"}};
  for (int i = 0; i < 4; ++i) storage_[i] = OneGauge(*registry_, storage[i].first, storage[i].second);
  prometheus::BuildGauge()
      .Name("placement_build_info")
      .Help("Build of the placement server; always 1")
      .Register(*registry_)
      .Add({{"version", std::string(version)}})
      .Set(1);
}

void Metrics::RegisterLabelledCounters() {
  auto& header = CounterFamily(*registry_, "placement_graph_hash_header_total",
                               "Place requests by their x-graph-hash metadata against the SHA-256 of the graph payload "
                               "(a mismatch: the client's load-balancing key does not follow its graph)");
  graph_hash_header_[0] = &header.Add({{"result", "absent"}});
  graph_hash_header_[1] = &header.Add({{"result", "match"}});
  graph_hash_header_[2] = &header.Add({{"result", "mismatch"}});
  invalid_entries_->Add({{"reason", "corrupt"}});
  invalid_entries_->Add({{"reason", "other_version"}});
  auto& reloads = CounterFamily(*registry_, "placement_policy_reloads_total",
                                "Learned-policy weight swaps (ReloadPolicy, SIGHUP) by outcome: swapped, or refused (a "
                                "bad file, the old weights kept serving)");
  reloads_[0] = &reloads.Add({{"outcome", "refused"}});
  reloads_[1] = &reloads.Add({{"outcome", "swapped"}});
}

Metrics::~Metrics() = default;

absl::Status Metrics::Serve(const std::string& address) {
  absl::StatusOr<std::unique_ptr<MetricsEndpoint>> endpoint =
      MetricsEndpoint::Start(address, [this] { return Text(); });
  if (!endpoint.ok()) return endpoint.status();
  endpoint_ = *std::move(endpoint);
  return absl::OkStatus();
}

int Metrics::port() const { return endpoint_ != nullptr ? endpoint_->port() : 0; }

std::string Metrics::Text() const {
  {
    absl::MutexLock lock(&storage_mu_);
    if (storage_source_) {
      const StorageFigures f = storage_source_();
      const int64_t values[4] = {f.cache_bytes, f.cache_limit_bytes, f.disk_available_bytes, f.disk_size_bytes};
      for (int i = 0; i < 4; ++i) storage_[i]->Set(static_cast<double>(values[i]));
    }
  }
  return prometheus::TextSerializer().Serialize(registry_->Collect());
}

void Metrics::SetStorageSource(std::function<StorageFigures()> source) {
  absl::MutexLock lock(&storage_mu_);
  storage_source_ = std::move(source);
}

void Metrics::SetReady(bool ready) { ready_->Set(ready ? 1 : 0); }

void Metrics::RequestFinished(absl::string_view method, absl::string_view code, absl::string_view algorithm,
                              double seconds) {
  requests_->Add({{"method", std::string(method)}, {"code", std::string(code)}}).Increment();
  duration_->Add({{"method", std::string(method)}, {"algorithm", std::string(algorithm)}}, kSecondsBuckets)
      .Observe(seconds);
}

void Metrics::CacheHit() { cache_hits_->Increment(); }
void Metrics::CacheMiss() { cache_misses_->Increment(); }

void Metrics::CacheInvalidEntry(absl::string_view reason) {
  invalid_entries_->Add({{"reason", std::string(reason)}}).Increment();
  cache_misses_->Increment();
}

void Metrics::PolicyReload(bool swapped) { reloads_[swapped ? 1 : 0]->Increment(); }

void Metrics::GraphHashHeaderChecked(GraphHashHeader result) {
  graph_hash_header_[static_cast<int>(result)]->Increment();
}

void Metrics::GraphOperators(int64_t operators) { operators_->Observe(static_cast<double>(operators)); }
void Metrics::RatioToBound(double ratio) { ratio_->Observe(ratio); }
void Metrics::PolicyInference(double seconds) { policy_->Observe(seconds); }
void Metrics::InflightChanged(int delta) { inflight_->Increment(delta); }

}  // namespace placement::server
