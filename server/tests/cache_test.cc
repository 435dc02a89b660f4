// The answer cache alone: keys, round trips, persistence, damaged and old-format entries, the size bound.
#include "server/cache.h"

#include <memory>
#include <string>

#include <gtest/gtest.h>
#include <rocksdb/db.h>

#include "absl/strings/str_cat.h"
#include "server/answer_memo.h"
#include "server/cache_entry.h"
#include "server/tests/test_util.h"

namespace placement::server {
namespace {

using testing::TempDir;

placement::v1::PlaceResponse Answer(const std::string& algorithm, double value) {
  placement::v1::PlaceResponse r;
  r.set_algorithm(algorithm);
  r.mutable_score()->set_value(value);
  r.set_graph_hash("abc");
  auto* a = r.add_assignment();
  a->set_op("x");
  a->set_device("gpu0");
  return r;
}

CacheKeyParts Parts() {
  CacheKeyParts p;
  p.graph_hash = "hash";
  p.topology = "{...}";
  p.objective = "step_time";
  p.algorithm = "auto";
  p.graph_options = "batch=0";
  p.simulator = "preset=default";
  p.seed = 1;
  p.budget_ms = 1000;
  p.policy_version = "v1";
  p.time_unit = "s";
  return p;
}

// Writes `value` under `key` straight into the store, as damage on disk would.
void WriteRaw(const std::string& dir, const std::string& key, const std::string& value) {
  rocksdb::Options options;
  options.create_if_missing = true;
  rocksdb::DB* raw = nullptr;
  ASSERT_TRUE(rocksdb::DB::Open(options, dir, &raw).ok());
  std::unique_ptr<rocksdb::DB> db(raw);
  ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), key, value).ok());
  ASSERT_TRUE(db->Close().ok());
}

TEST(CacheKey, EveryPartMatters) {
  const std::string base = AnswerCache::Key(Parts());
  EXPECT_EQ(base.size(), 64u);
  EXPECT_EQ(base, AnswerCache::Key(Parts()));
  auto changed = [&](auto mutate) {
    CacheKeyParts p = Parts();
    mutate(p);
    return AnswerCache::Key(p);
  };
  EXPECT_NE(base, changed([](CacheKeyParts& p) { p.graph_hash = "other"; }));
  EXPECT_NE(base, changed([](CacheKeyParts& p) { p.topology = "{}"; }));
  EXPECT_NE(base, changed([](CacheKeyParts& p) { p.objective = "latency"; }));
  EXPECT_NE(base, changed([](CacheKeyParts& p) { p.algorithm = "heft"; }));
  EXPECT_NE(base, changed([](CacheKeyParts& p) { p.graph_options = "batch=2"; }));
  EXPECT_NE(base, changed([](CacheKeyParts& p) { p.simulator = "preset=placeto"; }));
  EXPECT_NE(base, changed([](CacheKeyParts& p) { p.seed = 2; }));
  EXPECT_NE(base, changed([](CacheKeyParts& p) { p.budget_ms = 1001; }));
  EXPECT_NE(base, changed([](CacheKeyParts& p) { p.policy_version = "v2"; }));
  EXPECT_NE(base, changed([](CacheKeyParts& p) { p.time_unit = "input"; }));
  EXPECT_NE(base, changed([](CacheKeyParts& p) { p.cost_model = "tarnawski"; }));
  // Length prefixes keep shifted boundaries apart.
  EXPECT_NE(changed([](CacheKeyParts& p) {
              p.objective = "ab";
              p.algorithm = "c";
            }),
            changed([](CacheKeyParts& p) {
              p.objective = "a";
              p.algorithm = "bc";
            }));
}

TEST(CacheEntry, RoundTripsAndRejectsDamage) {
  const std::string bytes = EncodeCacheEntry(Answer("heft", 1.5));
  placement::v1::PlaceResponse back;
  ASSERT_EQ(DecodeCacheEntry(bytes, &back), EntryState::kValid);
  EXPECT_EQ(back.algorithm(), "heft");

  std::string flipped = bytes;
  flipped.back() ^= 0x01;
  EXPECT_EQ(DecodeCacheEntry(flipped, &back), EntryState::kCorrupt);
  EXPECT_EQ(DecodeCacheEntry(bytes.substr(0, 10), &back), EntryState::kCorrupt);
  EXPECT_EQ(DecodeCacheEntry("garbage that is long enough to have a header", &back), EntryState::kCorrupt);
  std::string other_version = bytes;
  other_version[4] = static_cast<char>(kCacheFormatVersion + 1);
  EXPECT_EQ(DecodeCacheEntry(other_version, &back), EntryState::kOtherVersion);
}

TEST(AnswerCache, InsertLookupAndPersistAcrossReopen) {
  TempDir dir;
  const std::string key = AnswerCache::Key(Parts());
  {
    auto cache = AnswerCache::Open({dir.path(), 1 << 20});
    ASSERT_TRUE(cache.ok()) << cache.status();
    EXPECT_EQ((*cache)->Lookup(key).outcome, LookupOutcome::kMiss);
    ASSERT_TRUE((*cache)->Insert(key, Answer("heft", 2.5)).ok());
    const LookupResult hit = (*cache)->Lookup(key);
    ASSERT_EQ(hit.outcome, LookupOutcome::kHit);
    EXPECT_EQ(hit.response->score().value(), 2.5);
    EXPECT_EQ((*cache)->stats().hits, 1);
    EXPECT_EQ((*cache)->stats().misses, 1);
    // A second handle on the same directory is refused rather than corrupting the store.
    EXPECT_FALSE(AnswerCache::Open({dir.path(), 1 << 20}).ok());
  }
  auto reopened = AnswerCache::Open({dir.path(), 1 << 20});
  ASSERT_TRUE(reopened.ok());
  const LookupResult hit = (*reopened)->Lookup(key);
  ASSERT_EQ(hit.outcome, LookupOutcome::kHit);
  EXPECT_EQ(hit.response->algorithm(), "heft");
}

TEST(AnswerCache, DamagedAndOldEntriesAreCountedMisses) {
  TempDir dir;
  const std::string garbage_key = AnswerCache::Key(Parts());
  CacheKeyParts other = Parts();
  other.seed = 7;
  const std::string old_key = AnswerCache::Key(other);
  std::string old_entry = EncodeCacheEntry(Answer("heft", 1));
  old_entry[4] = static_cast<char>(kCacheFormatVersion + 1);
  WriteRaw(dir.path(), garbage_key, "\x01\x02 not an entry");
  WriteRaw(dir.path(), old_key, old_entry);

  auto cache = AnswerCache::Open({dir.path(), 1 << 20});
  ASSERT_TRUE(cache.ok());
  EXPECT_EQ((*cache)->Lookup(garbage_key).outcome, LookupOutcome::kCorrupt);
  EXPECT_EQ((*cache)->Lookup(old_key).outcome, LookupOutcome::kOtherVersion);
  EXPECT_EQ((*cache)->stats().corrupt, 1);
  EXPECT_EQ((*cache)->stats().other_version, 1);
  // A fresh answer replaces the damaged one.
  ASSERT_TRUE((*cache)->Insert(garbage_key, Answer("m_topo", 3)).ok());
  EXPECT_EQ((*cache)->Lookup(garbage_key).outcome, LookupOutcome::kHit);
}

TEST(AnswerCache, StaysNearItsSizeBound) {
  TempDir dir;
  constexpr int64_t kBound = 1 << 20;
  auto cache = AnswerCache::Open({dir.path(), kBound});
  ASSERT_TRUE(cache.ok());
  uint64_t state = 12345;
  for (int i = 0; i < 64; ++i) {  // 64 entries of 64 KiB, 4 MiB in all
    // Random letters: RocksDB's block compression cannot shrink them much, so the bytes are really stored.
    std::string noise(64 << 10, 'a');
    for (char& c : noise) {
      state = state * 6364136223846793005ULL + 1442695040888963407ULL;
      c = static_cast<char>('a' + (state >> 59) % 26);
    }
    placement::v1::PlaceResponse big = Answer("heft", 1);
    big.add_notes(noise);
    CacheKeyParts p = Parts();
    p.seed = static_cast<uint64_t>(i);
    ASSERT_TRUE((*cache)->Insert(AnswerCache::Key(p), big).ok());
    if (i % 8 == 7) {
      ASSERT_TRUE((*cache)->Flush().ok());
    }
  }
  ASSERT_TRUE((*cache)->Flush().ok());
  // FIFO compaction drops whole files, oldest first, so the store may exceed the bound by about one file.
  EXPECT_LE((*cache)->ApproximateBytes(), 2 * kBound);
  CacheKeyParts newest = Parts();
  newest.seed = 63;
  EXPECT_EQ((*cache)->Lookup(AnswerCache::Key(newest)).outcome, LookupOutcome::kHit);
  CacheKeyParts oldest = Parts();
  oldest.seed = 0;
  EXPECT_EQ((*cache)->Lookup(AnswerCache::Key(oldest)).outcome, LookupOutcome::kMiss);
}

}  // namespace
}  // namespace placement::server

namespace placement::server {
namespace {

std::shared_ptr<const placement::v1::PlaceResponse> Shared(const std::string& algorithm, double value) {
  return std::make_shared<const placement::v1::PlaceResponse>(Answer(algorithm, value));
}

TEST(AnswerMemo, KeepsTheMostRecentlyUsedWithinItsBound) {
  AnswerMemo probe(int64_t{1} << 20);
  probe.Put("a", Shared("heft", 1));
  const int64_t one = probe.bytes();
  ASSERT_GT(one, 0);

  AnswerMemo memo(3 * one);
  memo.Put("a", Shared("heft", 1));
  memo.Put("b", Shared("heft", 2));
  memo.Put("c", Shared("heft", 3));
  ASSERT_NE(memo.Find("a"), nullptr);  // a is now the most recent; b the least
  memo.Put("d", Shared("heft", 4));
  EXPECT_EQ(memo.Find("b"), nullptr);
  ASSERT_NE(memo.Find("a"), nullptr);
  EXPECT_EQ(memo.Find("a")->score().value(), 1);
  EXPECT_EQ(memo.Find("d")->score().value(), 4);
  EXPECT_EQ(memo.entries(), 3);
  EXPECT_LE(memo.bytes(), 3 * one);

  memo.Put("a", Shared("heft", 5));  // replaced, not duplicated
  EXPECT_EQ(memo.entries(), 3);
  EXPECT_EQ(memo.Find("a")->score().value(), 5);

  AnswerMemo none(0);
  none.Put("a", Shared("heft", 1));
  EXPECT_EQ(none.Find("a"), nullptr);
  EXPECT_EQ(none.bytes(), 0);
}

TEST(AnswerCache, AnswersFromMemoryAndFromRocksDbAreTheSame) {
  TempDir dir;
  const std::string key = AnswerCache::Key(Parts());
  placement::v1::PlaceResponse from_memory;
  {
    auto cache = AnswerCache::Open({dir.path(), 1 << 20});
    ASSERT_TRUE(cache.ok());
    ASSERT_TRUE((*cache)->Insert(key, Answer("heft", 2.5)).ok());
    LookupResult hit = (*cache)->Lookup(key);
    ASSERT_EQ(hit.outcome, LookupOutcome::kHit);
    from_memory = *hit.response;
  }
  auto without_memory = AnswerCache::Open({dir.path(), 1 << 20, /*memory_bytes=*/0});
  ASSERT_TRUE(without_memory.ok());
  LookupResult hit = (*without_memory)->Lookup(key);
  ASSERT_EQ(hit.outcome, LookupOutcome::kHit);
  EXPECT_EQ(hit.response->SerializeAsString(), from_memory.SerializeAsString());
  EXPECT_EQ((*without_memory)->stats().hits, 1);
}

}  // namespace
}  // namespace placement::server
