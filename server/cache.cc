#include "server/cache.h"

#include <algorithm>
#include <filesystem>
#include <system_error>
#include <utility>

#include <rocksdb/db.h>
#include <rocksdb/options.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "server/answer_memo.h"
#include "server/cache_entry.h"

namespace placement::server {
namespace {

constexpr char kKeyDomain[] = "placement.cache.key/v1";
constexpr int64_t kMinMemtable = int64_t{1} << 20;
constexpr int64_t kMaxMemtable = int64_t{64} << 20;

void AppendPart(std::string* out, absl::string_view part) { absl::StrAppend(out, part.size(), ":", part, ";"); }

absl::Status FromRocks(const rocksdb::Status& s, absl::string_view what) {
  if (s.ok()) return absl::OkStatus();
  return absl::UnavailableError(absl::StrCat("answer cache: ", what, ": ", s.ToString()));
}

}  // namespace

AnswerCache::AnswerCache(std::unique_ptr<rocksdb::DB> db, int64_t max_bytes, int64_t memory_bytes)
    : db_(std::move(db)),
      // A quarter of the store at most: the front holds a hot subset, not a second copy of the store.
      memo_(std::make_unique<AnswerMemo>(std::min(memory_bytes, max_bytes / 4))),
      max_bytes_(max_bytes) {}

AnswerCache::~AnswerCache() {
  if (db_ != nullptr) {
    // Close() releases the lock and syncs the log; a failure here has nobody left to report to.
    db_->Close().PermitUncheckedError();
  }
}

absl::StatusOr<std::unique_ptr<AnswerCache>> AnswerCache::Open(const CacheOptions& options) {
  if (options.dir.empty()) return absl::InvalidArgumentError("answer cache: the data directory is empty");
  if (options.max_bytes <= 0) return absl::InvalidArgumentError("answer cache: the size bound must be positive");
  if (options.memory_bytes < 0)
    return absl::InvalidArgumentError("answer cache: the memory bound must not be negative");
  std::error_code ec;
  // The answers describe the users' models: a directory this call creates is private to the server's user.
  if (std::filesystem::create_directories(options.dir, ec)) {
    std::filesystem::permissions(options.dir, std::filesystem::perms::owner_all, std::filesystem::perm_options::replace,
                                 ec);
  }
  if (ec)
    return absl::FailedPreconditionError(
        absl::StrCat("answer cache: cannot create '", options.dir, "': ", ec.message()));

  rocksdb::Options db_options;
  db_options.create_if_missing = true;
  db_options.compaction_style = rocksdb::kCompactionStyleFIFO;
  db_options.compaction_options_fifo.max_table_files_size = static_cast<uint64_t>(options.max_bytes);
  db_options.compaction_options_fifo.allow_compaction = false;
  db_options.write_buffer_size = static_cast<size_t>(std::clamp(options.max_bytes / 8, kMinMemtable, kMaxMemtable));
  db_options.keep_log_file_num = 3;
  rocksdb::DB* raw = nullptr;
  const rocksdb::Status s = rocksdb::DB::Open(db_options, options.dir, &raw);
  if (!s.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat("answer cache: cannot open RocksDB in '", options.dir, "': ", s.ToString()));
  }
  return std::unique_ptr<AnswerCache>(
      new AnswerCache(std::unique_ptr<rocksdb::DB>(raw), options.max_bytes, options.memory_bytes));
}

std::string AnswerCache::Key(const CacheKeyParts& p) {
  std::string text;
  AppendPart(&text, kKeyDomain);
  AppendPart(&text, p.graph_hash);
  AppendPart(&text, p.topology);
  AppendPart(&text, p.objective);
  AppendPart(&text, p.algorithm);
  AppendPart(&text, p.graph_options);
  AppendPart(&text, p.simulator);
  AppendPart(&text, absl::StrCat(p.seed));
  AppendPart(&text, absl::StrCat(p.budget_ms));
  AppendPart(&text, p.policy_version);
  AppendPart(&text, p.time_unit);
  // Parts are length-prefixed, so a key with one part more can never equal one without it.
  if (!p.cost_model.empty()) AppendPart(&text, p.cost_model);
  if (!p.plan_options.empty()) AppendPart(&text, absl::StrCat("plan=", p.plan_options));
  return Sha256Hex(text);
}

LookupResult AnswerCache::Lookup(absl::string_view key) {
  LookupResult result;
  if (std::shared_ptr<const placement::v1::PlaceResponse> recent = memo_->Find(key)) {
    hits_.fetch_add(1, std::memory_order_relaxed);
    result.outcome = LookupOutcome::kHit;
    result.response = *recent;
    return result;
  }
  std::string value;
  const rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), rocksdb::Slice(key.data(), key.size()), &value);
  if (s.IsNotFound()) {
    misses_.fetch_add(1, std::memory_order_relaxed);
    return result;
  }
  if (!s.ok()) {
    // A store that cannot be read (I/O error, corruption RocksDB itself detected) is a miss, like a damaged entry.
    corrupt_.fetch_add(1, std::memory_order_relaxed);
    result.outcome = LookupOutcome::kCorrupt;
    return result;
  }
  placement::v1::PlaceResponse response;
  switch (DecodeCacheEntry(value, &response)) {
    case EntryState::kValid:
      hits_.fetch_add(1, std::memory_order_relaxed);
      result.outcome = LookupOutcome::kHit;
      memo_->Put(key, std::make_shared<const placement::v1::PlaceResponse>(response));
      result.response = std::move(response);
      break;
    case EntryState::kCorrupt:
      corrupt_.fetch_add(1, std::memory_order_relaxed);
      result.outcome = LookupOutcome::kCorrupt;
      break;
    case EntryState::kOtherVersion:
      other_version_.fetch_add(1, std::memory_order_relaxed);
      result.outcome = LookupOutcome::kOtherVersion;
      break;
  }
  return result;
}

std::optional<placement::v1::PlaceResponse> AnswerCache::LookupRecent(absl::string_view key) {
  std::shared_ptr<const placement::v1::PlaceResponse> recent = memo_->Find(key);
  if (recent == nullptr) return std::nullopt;
  hits_.fetch_add(1, std::memory_order_relaxed);
  return *recent;
}

absl::Status AnswerCache::Insert(absl::string_view key, const placement::v1::PlaceResponse& response) {
  const std::string value = EncodeCacheEntry(response);
  const rocksdb::Status s = db_->Put(rocksdb::WriteOptions(), rocksdb::Slice(key.data(), key.size()), value);
  if (!s.ok()) {
    insert_errors_.fetch_add(1, std::memory_order_relaxed);
    return FromRocks(s, "insert");
  }
  inserts_.fetch_add(1, std::memory_order_relaxed);
  memo_->Put(key, std::make_shared<const placement::v1::PlaceResponse>(response));
  return absl::OkStatus();
}

CacheStats AnswerCache::stats() const {
  CacheStats s;
  s.hits = hits_.load(std::memory_order_relaxed);
  s.misses = misses_.load(std::memory_order_relaxed);
  s.corrupt = corrupt_.load(std::memory_order_relaxed);
  s.other_version = other_version_.load(std::memory_order_relaxed);
  s.inserts = inserts_.load(std::memory_order_relaxed);
  s.insert_errors = insert_errors_.load(std::memory_order_relaxed);
  return s;
}

int64_t AnswerCache::ApproximateBytes() const {
  uint64_t sst = 0;
  uint64_t memtable = 0;
  db_->GetIntProperty(rocksdb::DB::Properties::kTotalSstFilesSize, &sst);
  db_->GetIntProperty(rocksdb::DB::Properties::kCurSizeAllMemTables, &memtable);
  return static_cast<int64_t>(sst + memtable);
}

absl::Status AnswerCache::Flush() {
  if (absl::Status s = FromRocks(db_->Flush(rocksdb::FlushOptions()), "flush"); !s.ok()) return s;
  // FIFO compaction drops the oldest files when the total passes the bound; running it now applies the bound
  // at once rather than at the next background compaction.
  return FromRocks(db_->CompactRange(rocksdb::CompactRangeOptions(), nullptr, nullptr), "compaction");
}

}  // namespace placement::server
