#include "server/thread_pool.h"

#include <algorithm>
#include <utility>

#include "server/available_cpus.h"

namespace placement::server {

ThreadPool::ThreadPool(int32_t threads, int32_t max_queued) : max_queued_(std::max<int32_t>(0, max_queued)) {
  if (threads <= 0) threads = AvailableCpus();  // the container's CPU limit, not the node's cores
  workers_.reserve(threads);
  for (int32_t i = 0; i < threads; ++i) workers_.emplace_back([this] { Work(); });
}

ThreadPool::~ThreadPool() { Stop(); }

bool ThreadPool::TrySubmit(absl::AnyInvocable<void() &&> task) {
  absl::MutexLock lock(&mu_);
  if (stopping_ || static_cast<int64_t>(queue_.size()) >= max_queued_) return false;
  queue_.push_back(std::move(task));
  return true;
}

void ThreadPool::Stop() {
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  for (std::thread& t : workers_) t.join();
}

bool ThreadPool::HasWorkOrStopping() const { return stopping_ || !queue_.empty(); }

void ThreadPool::Work() {
  while (true) {
    absl::AnyInvocable<void() &&> task;
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(this, &ThreadPool::HasWorkOrStopping));
      if (queue_.empty()) return;  // stopping and drained
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    std::move(task)();
  }
}

}  // namespace placement::server
