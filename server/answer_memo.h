// The answers looked up or stored most recently, parsed, in memory: the answer cache's front, so that a hot
// answer costs a map lookup and a copy rather than a RocksDB read, a checksum and a parse (docs/BENCHMARKS.md
// has the figures). Least recently used entries leave first once the answers' serialized sizes pass the bound.
// Thread-safe.
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "placement/v1/placement.pb.h"

namespace placement::server {

class AnswerMemo {
 public:
  // 0 keeps nothing.
  explicit AnswerMemo(int64_t max_bytes) : max_bytes_(max_bytes) {}

  // The answer under `key`, now the most recently used; null when absent.
  std::shared_ptr<const placement::v1::PlaceResponse> Find(absl::string_view key);

  // Stores (or replaces) the answer; an answer larger than the whole bound is not kept.
  void Put(absl::string_view key, std::shared_ptr<const placement::v1::PlaceResponse> answer);

  int64_t bytes() const;
  int64_t entries() const;

 private:
  struct Entry {
    std::string key;
    std::shared_ptr<const placement::v1::PlaceResponse> answer;
    int64_t bytes = 0;
  };
  using Order = std::list<Entry>;  // most recently used first

  void EraseLocked(Order::iterator it) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const int64_t max_bytes_;
  mutable absl::Mutex mu_;
  Order order_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<absl::string_view, Order::iterator> index_ ABSL_GUARDED_BY(mu_);  // views of Entry::key
  int64_t bytes_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace placement::server
