// A fixed set of worker threads with a bounded queue: placement work runs here, never on gRPC's threads.
//
// The bound is what keeps an overloaded server honest: a task that does not fit is refused at once (the RPC
// answers RESOURCE_EXHAUSTED) instead of waiting behind work that will outlive its client's deadline.
#pragma once

#include <cstdint>
#include <deque>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/any_invocable.h"
#include "absl/synchronization/mutex.h"

namespace placement::server {

class ThreadPool {
 public:
  // threads <= 0: one per core.
  ThreadPool(int32_t threads, int32_t max_queued);
  ~ThreadPool();  // runs what is queued, then joins
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // False when the queue is full or the pool is stopping; the task is then dropped unrun.
  bool TrySubmit(absl::AnyInvocable<void() &&> task);

  // Stops taking tasks, runs the queued ones, joins the workers. Idempotent.
  void Stop();

  int32_t threads() const { return static_cast<int32_t>(workers_.size()); }
  int32_t max_queued() const { return max_queued_; }

 private:
  void Work();
  bool HasWorkOrStopping() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const int32_t max_queued_;
  mutable absl::Mutex mu_;
  std::deque<absl::AnyInvocable<void() &&>> queue_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> workers_;
};

}  // namespace placement::server
