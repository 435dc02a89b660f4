#include "server/ticker.h"

#include <utility>

namespace placement::server {

Ticker::Ticker(absl::Duration period) : period_(period) {
  thread_ = std::thread([this] { Run(); });
}

Ticker::~Ticker() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  thread_.join();
}

int64_t Ticker::Add(std::function<void()> callback) {
  absl::MutexLock lock(&mu_);
  const int64_t id = next_id_++;
  callbacks_.emplace(id, std::move(callback));
  return id;
}

void Ticker::Remove(int64_t id) {
  absl::MutexLock lock(&mu_);
  callbacks_.erase(id);
}

void Ticker::Run() {
  absl::MutexLock lock(&mu_);
  while (true) {
    // Sleeps a period, waking early only to stop.
    mu_.AwaitWithTimeout(absl::Condition(&stopping_), period_);
    if (stopping_) return;
    for (auto& [id, callback] : callbacks_) callback();
  }
}

}  // namespace placement::server
