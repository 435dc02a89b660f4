// The HTTP side of /metrics: a listening socket and one thread that answers GET /metrics with the text
// exposition format.
//
// prometheus-cpp's own Exposer is not used because it cannot run in this process: Debian builds civetweb with
// 100 KiB worker stacks, and libquadmath (linked through COIN-OR's CoinUtils) registers printf extensions,
// which send every printf in the process down glibc's slow path; civetweb's printf then overflows that stack
// on the first scrape. This endpoint is small on purpose: one request per connection, answered in order, with
// a receive timeout so a client that never finishes its request holds the thread for 2 seconds at most.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"

namespace placement::server {

class MetricsEndpoint {
 public:
  // Listens on "host:port" (port 0 picks a free one); `body` renders the metrics for each scrape.
  static absl::StatusOr<std::unique_ptr<MetricsEndpoint>> Start(const std::string& address,
                                                                std::function<std::string()> body);
  ~MetricsEndpoint();  // stops accepting and joins the thread (within about 100 ms)
  MetricsEndpoint(const MetricsEndpoint&) = delete;
  MetricsEndpoint& operator=(const MetricsEndpoint&) = delete;

  int port() const { return port_; }

 private:
  MetricsEndpoint(int fd, int port, std::function<std::string()> body);
  void Run();
  void Serve(int connection);

  const int fd_;
  const int port_;
  const std::function<std::string()> body_;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace placement::server
