// The answer cache: placement answers in RocksDB under the data directory, behind three calls (Key, Lookup,
// Insert) so the rest of the server never sees the store.
//
// What is cached: every successful Place answer, under a key that holds everything the answer depends on
// (CacheKeyParts). Heuristic and exact placers are deterministic for a key. Anytime placers (local search,
// AUTO, the ILPs with a time limit) are not: their answer depends on the time they get. The key therefore
// includes the nominal budget (the request's budget_ms, or the server's default), and the server does not
// store an answer whose time was cut short by the client's gRPC deadline; a repeat of the same request gets
// the answer first found within that budget, which is also what makes repeated answers stable.
//
// Size bound: RocksDB's FIFO compaction deletes the oldest table files once their total passes max_bytes, so
// the bound is approximate: a memtable (at most max_bytes / 8, capped at 64 MiB) sits on top of it, and
// deletion takes whole files, oldest first (entries are dropped in insertion order, not by last use).
//
// Entries carry a format version and a checksum (cache_entry.h). A damaged or old-format entry, or a RocksDB
// read error, is a miss, counted; the cache can lose answers but never returns a wrong one or fails a request.
//
// In front of RocksDB, the answers most recently looked up or inserted are kept parsed in memory (AnswerMemo,
// bounded by CacheOptions::memory_bytes): a hot answer is served without a read, a checksum or a parse.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "placement/v1/placement.pb.h"

namespace rocksdb {
class DB;
}

namespace placement::server {

class AnswerMemo;

struct CacheOptions {
  std::string dir;                       // created when missing
  int64_t max_bytes = int64_t{1} << 30;  // approximate bound on the stored answers
  // The recently used answers kept parsed in memory in front of RocksDB (answer_memo.h), at most a quarter of
  // max_bytes; 0: none.
  int64_t memory_bytes = int64_t{64} << 20;
};

// Everything a Place answer depends on. Strings are compared exactly, so callers pass canonical forms.
struct CacheKeyParts {
  std::string graph_hash;     // GraphHash of the placed graph (after import and training expansion)
  std::string topology;       // TopologyToJson: exact and canonical
  std::string objective;      // ObjectiveName
  std::string cost_model;     // CanonicalCostModel: "" for the default, so that its keys stay as they were
  std::string algorithm;      // the placer's registered name ("auto" for the default)
  std::string graph_options;  // batch, sequence, training, optimizer, multiplier
  std::string simulator;      // preset and priority
  uint64_t seed = 1;
  int64_t budget_ms = 0;  // the nominal budget
  std::string policy_version;
  std::string time_unit;
  std::string plan_options;  // "" for an operator placement (CanonicalPlanOptions)
};

struct CacheStats {
  int64_t hits = 0;
  int64_t misses = 0;         // absent keys
  int64_t corrupt = 0;        // present but damaged (or unreadable): also misses
  int64_t other_version = 0;  // present but written by another format version: also misses
  int64_t inserts = 0;
  int64_t insert_errors = 0;
};

enum class LookupOutcome { kHit, kMiss, kCorrupt, kOtherVersion };

struct LookupResult {
  LookupOutcome outcome = LookupOutcome::kMiss;
  std::optional<placement::v1::PlaceResponse> response;  // set for kHit
};

class AnswerCache {
 public:
  // Opens (or creates) the store. Fails when the directory cannot be used or another process holds it.
  static absl::StatusOr<std::unique_ptr<AnswerCache>> Open(const CacheOptions& options);
  ~AnswerCache();  // closes the store cleanly
  AnswerCache(const AnswerCache&) = delete;
  AnswerCache& operator=(const AnswerCache&) = delete;

  // Lower-case hex SHA-256 of the parts, each length-prefixed so no two different part lists collide.
  static std::string Key(const CacheKeyParts& parts);

  LookupResult Lookup(absl::string_view key);
  // Only the answers in memory: never blocks on the store. A hit is counted; an absent key is not a miss (the
  // caller goes on to Lookup).
  std::optional<placement::v1::PlaceResponse> LookupRecent(absl::string_view key);
  // Best effort: a failed write is counted and returned, never fatal to the request that made the answer.
  absl::Status Insert(absl::string_view key, const placement::v1::PlaceResponse& response);

  CacheStats stats() const;
  int64_t max_bytes() const { return max_bytes_; }
  // Bytes in table files plus the memtable, as RocksDB estimates them.
  int64_t ApproximateBytes() const;
  // Writes the memtable to a table file and lets FIFO compaction apply the bound (tests, shutdown).
  absl::Status Flush();

 private:
  AnswerCache(std::unique_ptr<rocksdb::DB> db, int64_t max_bytes, int64_t memory_bytes);

  std::unique_ptr<rocksdb::DB> db_;
  std::unique_ptr<AnswerMemo> memo_;
  const int64_t max_bytes_;
  std::atomic<int64_t> hits_{0}, misses_{0}, corrupt_{0}, other_version_{0}, inserts_{0}, insert_errors_{0};
};

}  // namespace placement::server
