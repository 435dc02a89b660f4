#include "client/bench_command.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <random>

#include <nlohmann/json.hpp>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "client/flag_values.h"
#include "client/remote_commands.h"
#include "client/rpc_request.h"
#include "client/server_channel.h"
#include "placement/v1/placement.grpc.pb.h"

namespace placement::cli {
namespace {

namespace pb = ::placement::v1;
using Clock = std::chrono::steady_clock;

constexpr absl::Duration kCallAllowance = absl::Seconds(30);

struct Prepared {
  pb::PlaceRequest request;
  std::string graph_hash;  // x-graph-hash
};

// What one slot saw; merged at the end. A slot's calls run one after another, so it needs no lock.
struct SlotStats {
  std::vector<double> latencies_us;       // successful calls
  std::map<std::string, int64_t> errors;  // by gRPC code name
  std::string first_error;
  int64_t cache_hits = 0;
  int64_t unique = 0;
  std::map<std::string, int64_t> versions;  // answers by policy version
  int64_t mixed = 0;                        // answers whose notes name weights other than those of their policy version
};

// The weights' version an answer's policy version names ("placers-V/learned-<weights>").
absl::string_view LearnedVersion(absl::string_view policy_version) {
  const size_t at = policy_version.find("/learned-");
  return at == absl::string_view::npos ? absl::string_view() : policy_version.substr(at + 9);
}

// Whether a note of the answer names a policy ("policy <weights> on <device>", the learned placers' first note,
// "<weights>/tuned" for a fine-tuned copy) other than the one its policy version says: an answer computed on two
// sets of weights, or labelled with the wrong one.
bool MixesVersions(const pb::PlaceResponse& r) {
  const absl::string_view version = LearnedVersion(r.policy_version());
  for (absl::string_view note : r.notes()) {
    for (size_t at = note.find("policy "); at != absl::string_view::npos; at = note.find("policy ", at + 1)) {
      const absl::string_view rest = note.substr(at + 7);
      const absl::string_view word = rest.substr(0, rest.find(' '));
      if (word.find('+') == absl::string_view::npos || rest.substr(word.size(), 4) != " on ") continue;
      if (word.substr(0, word.find('/')) != version) return true;
    }
  }
  return false;
}

class LoadGenerator {
 public:
  LoadGenerator(pb::PlacementService::Stub* stub, const std::vector<Prepared>& prepared, const BenchOptions& o,
                absl::Duration budget, uint64_t unique_salt)
      : stub_(stub),
        prepared_(prepared),
        options_(o),
        budget_(budget),
        unique_salt_(unique_salt),
        slots_(o.concurrency) {}

  // Runs until the deadline or the request count; returns the wall time.
  absl::Duration Run(absl::Duration duration) {
    const absl::Time begin = absl::Now();
    end_ = options_.requests > 0 ? absl::InfiniteFuture() : begin + duration;
    active_.store(static_cast<int32_t>(slots_.size()));
    for (Slot& slot : slots_) Next(&slot);
    // absl::Notification may be destroyed once seen notified, even while Notify is still returning.
    finished_.WaitForNotification();
    return absl::Now() - begin;
  }

  std::vector<SlotStats> TakeStats() {
    std::vector<SlotStats> out;
    for (Slot& s : slots_) out.push_back(std::move(s.stats));
    return out;
  }

 private:
  struct Slot {
    std::unique_ptr<grpc::ClientContext> context;
    pb::PlaceRequest unique_request;  // a copy with a fresh seed, for the unique share
    pb::PlaceResponse response;
    Clock::time_point started;
    SlotStats stats;
  };

  // Request n is unique when the running count of unique ones, n * F rounded down, steps up at n.
  bool IsUnique(int64_t n) const {
    const double f = options_.unique_fraction;
    return static_cast<int64_t>((n + 1) * f) > static_cast<int64_t>(n * f);
  }

  void Next(Slot* slot) {
    const int64_t n = issued_.fetch_add(1, std::memory_order_relaxed);
    if ((options_.requests > 0 && n >= options_.requests) || absl::Now() >= end_) {
      if (active_.fetch_sub(1) == 1) finished_.Notify();
      return;
    }
    const Prepared& p = prepared_[n % prepared_.size()];
    const pb::PlaceRequest* request = &p.request;
    if (IsUnique(n)) {
      slot->unique_request = p.request;
      slot->unique_request.set_seed(unique_salt_ + static_cast<uint64_t>(n));
      request = &slot->unique_request;
      ++slot->stats.unique;
    }
    slot->context = std::make_unique<grpc::ClientContext>();
    slot->context->set_deadline(std::chrono::system_clock::now() +
                                absl::ToChronoMilliseconds(budget_ + kCallAllowance));
    slot->context->AddMetadata(kGraphHashHeader, p.graph_hash);
    slot->response.Clear();
    slot->started = Clock::now();
    stub_->async()->Place(slot->context.get(), request, &slot->response, [this, slot](grpc::Status status) {
      const double us = std::chrono::duration<double, std::micro>(Clock::now() - slot->started).count();
      if (status.ok()) {
        slot->stats.latencies_us.push_back(us);
        if (slot->response.cache_hit()) ++slot->stats.cache_hits;
        ++slot->stats.versions[slot->response.policy_version()];
        if (MixesVersions(slot->response)) ++slot->stats.mixed;
      } else {
        ++slot->stats.errors[CodeName(status.error_code())];
        if (slot->stats.first_error.empty()) slot->stats.first_error = status.error_message();
      }
      Next(slot);
    });
  }

  static std::string CodeName(grpc::StatusCode code) {
    return absl::StatusCodeToString(static_cast<absl::StatusCode>(code));
  }

  pb::PlacementService::Stub* stub_;
  const std::vector<Prepared>& prepared_;
  const BenchOptions& options_;
  const absl::Duration budget_;
  const uint64_t unique_salt_;
  std::vector<Slot> slots_;
  std::atomic<int64_t> issued_{0};
  absl::Time end_;
  std::atomic<int32_t> active_{0};  // slots still issuing calls
  absl::Notification finished_;
};

double Percentile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  const size_t i = static_cast<size_t>(std::ceil(q * sorted.size())) - 1;
  return sorted[std::min(i, sorted.size() - 1)];
}

absl::Status Validate(const BenchOptions& o) {
  if (o.graph_paths.empty()) return absl::InvalidArgumentError("bench needs at least one GRAPH");
  if (o.concurrency < 1 || o.concurrency > 4096) {
    return absl::InvalidArgumentError(absl::StrCat("--concurrency ", o.concurrency, " is not in 1..4096"));
  }
  if (o.requests < 0) return absl::InvalidArgumentError("--requests must not be negative");
  if (!(o.unique_fraction >= 0 && o.unique_fraction <= 1)) {
    return absl::InvalidArgumentError(absl::StrCat("--unique_fraction ", o.unique_fraction, " is not in 0..1"));
  }
  if (o.output != "table" && o.output != "json") {
    return absl::InvalidArgumentError(absl::StrCat("--output '", o.output, "' is not one of table, json"));
  }
  return absl::OkStatus();
}

// The report of a run: latency percentiles, requests/s, errors by code, answers by policy version.
std::string Report(const BenchOptions& o, double wall, std::vector<SlotStats> stats) {
  std::vector<double> latencies;
  std::map<std::string, int64_t> errors;
  std::string first_error;
  std::map<std::string, int64_t> versions;
  int64_t hits = 0, unique = 0, failed = 0, mixed = 0;
  for (SlotStats& s : stats) {
    for (const auto& [version, n] : s.versions) versions[version] += n;
    mixed += s.mixed;
    latencies.insert(latencies.end(), s.latencies_us.begin(), s.latencies_us.end());
    for (const auto& [code, n] : s.errors) {
      errors[code] += n;
      failed += n;
    }
    if (first_error.empty()) first_error = s.first_error;
    hits += s.cache_hits;
    unique += s.unique;
  }
  std::sort(latencies.begin(), latencies.end());
  const int64_t ok = static_cast<int64_t>(latencies.size());
  const double rps = wall > 0 ? (ok + failed) / wall : 0;
  const double p50 = Percentile(latencies, 0.50), p90 = Percentile(latencies, 0.90), p99 = Percentile(latencies, 0.99);
  const double max = latencies.empty() ? 0 : latencies.back();

  if (o.output == "json") {
    nlohmann::ordered_json out;
    out["server"] = o.server;
    out["graphs"] = o.graph_paths;
    out["concurrency"] = o.concurrency;
    out["unique_fraction"] = o.unique_fraction;
    out["seconds"] = wall;
    out["requests"] = ok + failed;
    out["ok"] = ok;
    out["cache_hits"] = hits;
    out["unique_requests"] = unique;
    out["requests_per_second"] = rps;
    out["latency_ms"] = {{"p50", p50 / 1e3}, {"p90", p90 / 1e3}, {"p99", p99 / 1e3}, {"max", max / 1e3}};
    out["errors"] = errors;
    if (!first_error.empty()) out["first_error"] = first_error;
    out["policy_versions"] = versions;
    out["answers_mixing_versions"] = mixed;
    return out.dump(2) + "\n";
  }
  std::string out;
  absl::StrAppend(&out,
                  absl::StrFormat("server       %s, %d graph(s), concurrency %d, unique fraction %.3g\n", o.server,
                                  static_cast<int>(o.graph_paths.size()), o.concurrency, o.unique_fraction));
  absl::StrAppend(&out,
                  absl::StrFormat("requests     %d in %.2f s: %.0f requests/s (%d ok, %d cache hits, %d unique)\n",
                                  ok + failed, wall, rps, ok, hits, unique));
  absl::StrAppend(&out, absl::StrFormat("latency      p50 %.3f ms  p90 %.3f ms  p99 %.3f ms  max %.3f ms\n", p50 / 1e3,
                                        p90 / 1e3, p99 / 1e3, max / 1e3));
  if (errors.empty()) {
    absl::StrAppend(&out, "errors       none\n");
  } else {
    for (const auto& [code, n] : errors) absl::StrAppend(&out, "errors       ", code, ": ", n, "\n");
    absl::StrAppend(&out, "first error  ", first_error, "\n");
  }
  for (const auto& [version, n] : versions) absl::StrAppend(&out, "answers      ", n, " from ", version, "\n");
  absl::StrAppend(&out, "mixed        ", mixed, " answers name weights other than their policy version's\n");
  return out;
}

}  // namespace

absl::StatusOr<std::string> RunBench(const BenchOptions& o) {
  if (absl::Status s = Validate(o); !s.ok()) return s;
  absl::StatusOr<absl::Duration> budget = ParsePositiveDuration("deadline", o.deadline);
  if (!budget.ok()) return budget.status();
  absl::StatusOr<absl::Duration> duration = ParsePositiveDuration("duration", o.duration);
  if (!duration.ok()) return duration.status();
  absl::StatusOr<pb::Objective> objective = ObjectiveFromFlag(o.objective);
  if (!objective.ok()) return objective.status();

  std::vector<Prepared> prepared;
  for (const std::string& path : o.graph_paths) {
    absl::StatusOr<GraphPayload> payload = ReadGraphPayload(path);
    if (!payload.ok()) return payload.status();
    Prepared p;
    SetGraph(*payload, o.load, &p.request);
    if (absl::Status s = SetTopology(o.topology_file, o.devices, p.request.mutable_topology()); !s.ok()) return s;
    p.request.set_objective(*objective);
    p.request.set_cost_model(o.cost_model);
    p.request.set_algorithm(o.algorithm);
    SetPlanRequest(o.plan, &p.request);
    p.request.set_policy(o.policy);
    p.request.set_budget_ms(absl::ToInt64Milliseconds(*budget));
    p.graph_hash = payload->sha256;
    prepared.push_back(std::move(p));
  }

  absl::StatusOr<std::shared_ptr<grpc::Channel>> channel = MakeServerChannel(o.server);
  if (!channel.ok()) return channel.status();
  std::unique_ptr<pb::PlacementService::Stub> stub = pb::PlacementService::NewStub(*channel);
  if (o.warmup) {
    // Untimed: fills the cache for the repeated requests, and fails fast when the server is not there.
    for (const Prepared& p : prepared) {
      grpc::ClientContext context;
      context.set_deadline(std::chrono::system_clock::now() + absl::ToChronoMilliseconds(*budget + kCallAllowance));
      context.AddMetadata(kGraphHashHeader, p.graph_hash);
      pb::PlaceResponse response;
      const grpc::Status status = stub->Place(&context, p.request, &response);
      if (!status.ok()) return FromGrpc(status, o.server);
    }
  }

  // Seeds for unique requests start at a random point so that a second run is uncached too.
  std::mt19937_64 random(std::random_device{}());
  const uint64_t salt = (random() | (uint64_t{1} << 62)) & ~uint64_t{0xFFFFFFFF};
  LoadGenerator generator(stub.get(), prepared, o, *budget, salt);
  const double wall = absl::ToDoubleSeconds(generator.Run(*duration));

  return Report(o, wall, generator.TakeStats());
}

}  // namespace placement::cli
