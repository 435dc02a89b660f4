// The worker pool: runs what it accepts, refuses past its queue bound, drains on Stop.
#include "server/thread_pool.h"

#include <atomic>

#include <gtest/gtest.h>

#include "absl/synchronization/notification.h"

namespace placement::server {
namespace {

TEST(ThreadPool, RefusesBeyondItsQueueAndDrainsOnStop) {
  ThreadPool pool(1, 2);
  absl::Notification started, release;
  std::atomic<int> ran{0};
  ASSERT_TRUE(pool.TrySubmit([&] {
    started.Notify();
    release.WaitForNotification();
    ++ran;
  }));
  started.WaitForNotification();  // the only worker is busy; the queue holds two
  EXPECT_TRUE(pool.TrySubmit([&] { ++ran; }));
  EXPECT_TRUE(pool.TrySubmit([&] { ++ran; }));
  EXPECT_FALSE(pool.TrySubmit([&] { ++ran; }));
  release.Notify();
  pool.Stop();
  EXPECT_EQ(ran.load(), 3);
  EXPECT_FALSE(pool.TrySubmit([&] { ++ran; }));
}

}  // namespace
}  // namespace placement::server
