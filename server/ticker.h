// One thread that calls every registered callback at a fixed period: the heartbeats of PlaceStream. A thread
// per stream would tie threads to waiting clients; a timer per stream would need its own lifetime dance.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace placement::server {

class Ticker {
 public:
  explicit Ticker(absl::Duration period);
  ~Ticker();  // stops the thread; callbacks still registered are dropped
  Ticker(const Ticker&) = delete;
  Ticker& operator=(const Ticker&) = delete;

  // The callback runs on the ticker's thread every period until Remove; it must be quick and must not call
  // Add or Remove.
  int64_t Add(std::function<void()> callback);
  // After Remove returns, the callback is not running and will not run again.
  void Remove(int64_t id);

  absl::Duration period() const { return period_; }

 private:
  void Run();

  const absl::Duration period_;
  absl::Mutex mu_;  // held while callbacks run, which is what makes Remove a barrier
  std::map<int64_t, std::function<void()>> callbacks_ ABSL_GUARDED_BY(mu_);
  int64_t next_id_ ABSL_GUARDED_BY(mu_) = 0;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace placement::server
