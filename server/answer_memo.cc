#include "server/answer_memo.h"

#include <utility>

namespace placement::server {

// What an entry costs beyond its answer's serialized size: the key, the list node, the index slot.
constexpr int64_t kEntryOverhead = 256;

std::shared_ptr<const placement::v1::PlaceResponse> AnswerMemo::Find(absl::string_view key) {
  absl::MutexLock lock(&mu_);
  const auto it = index_.find(key);
  if (it == index_.end()) return nullptr;
  order_.splice(order_.begin(), order_, it->second);
  return it->second->answer;
}

void AnswerMemo::Put(absl::string_view key, std::shared_ptr<const placement::v1::PlaceResponse> answer) {
  // Parsed messages take a few times their serialized size; the bound counts serialized bytes, the figure
  // that is cheap to get and proportional.
  const int64_t bytes =
      static_cast<int64_t>(answer->ByteSizeLong()) + static_cast<int64_t>(key.size()) + kEntryOverhead;
  absl::MutexLock lock(&mu_);
  if (const auto it = index_.find(key); it != index_.end()) EraseLocked(it->second);
  if (bytes > max_bytes_) return;
  order_.push_front(Entry{std::string(key), std::move(answer), bytes});
  index_.emplace(order_.front().key, order_.begin());
  bytes_ += bytes;
  while (bytes_ > max_bytes_) EraseLocked(std::prev(order_.end()));
}

void AnswerMemo::EraseLocked(Order::iterator it) {
  bytes_ -= it->bytes;
  index_.erase(absl::string_view(it->key));
  order_.erase(it);
}

int64_t AnswerMemo::bytes() const {
  absl::MutexLock lock(&mu_);
  return bytes_;
}

int64_t AnswerMemo::entries() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int64_t>(order_.size());
}

}  // namespace placement::server
