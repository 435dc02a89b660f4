// The real binary: started as a child process on 127.0.0.1 port 0, given a slow Place, then SIGTERM. The
// request in flight completes OK, the process exits 0 and leaves a cache the next server can open.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "server/cache.h"
#include "server/tests/test_util.h"

namespace placement::server {
namespace {

namespace pb = ::placement::v1;
using testing::TempDir;

// A placement_server child with its stdout on a pipe; killed on destruction if still running.
class ServerProcess {
 public:
  ServerProcess(const std::string& data_dir, const std::string& config_file) {
    int out[2];
    if (::pipe(out) != 0) return;
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(out[1], STDOUT_FILENO);
      const int err = ::open((data_dir + ".log").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (err >= 0) ::dup2(err, STDERR_FILENO);
      ::close(out[0]);
      ::close(out[1]);
      const std::string data = "--data_dir=" + data_dir;
      const std::string config = "--config=" + config_file;
      ::execl(PLACEMENT_SERVER_PATH, PLACEMENT_SERVER_PATH, config.c_str(), "--listen=127.0.0.1:0",
              "--metrics_listen=127.0.0.1:0", data.c_str(), "--policy_device=cpu", static_cast<char*>(nullptr));
      ::_exit(127);
    }
    ::close(out[1]);
    out_ = out[0];
  }
  ~ServerProcess() {
    if (pid_ > 0 && !reaped_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    if (out_ >= 0) ::close(out_);
  }

  // Reads stdout lines until one starts with `prefix`; returns the port after its last ':' (0 on timeout).
  int PortFromLine(const std::string& prefix, absl::Duration timeout) {
    const absl::Time until = absl::Now() + timeout;
    while (absl::Now() < until) {
      for (size_t nl; (nl = buffer_.find('\n')) != std::string::npos;) {
        const std::string line = buffer_.substr(0, nl);
        buffer_.erase(0, nl + 1);
        int port = 0;
        if (line.rfind(prefix, 0) == 0 && absl::SimpleAtoi(line.substr(line.rfind(':') + 1), &port)) return port;
      }
      pollfd p{out_, POLLIN, 0};
      if (::poll(&p, 1, 100) > 0) {
        char chunk[512];
        const ssize_t n = ::read(out_, chunk, sizeof(chunk));
        if (n <= 0) return 0;
        buffer_.append(chunk, static_cast<size_t>(n));
      }
    }
    return 0;
  }

  // The exit status once the process ends within `timeout`; -1 otherwise.
  int WaitForExit(absl::Duration timeout) {
    const absl::Time until = absl::Now() + timeout;
    while (absl::Now() < until) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        reaped_ = true;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return -1;
  }

  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  int out_ = -1;
  bool reaped_ = false;
  std::string buffer_;
};

TEST(Sigterm, DrainsTheRequestInFlightAndExitsZero) {
  TempDir dir;
  const std::string data_dir = dir.path() + "/data";
  // Some settings come from a --config flag file, as a deployment would pass them.
  const std::string config_file = dir.path() + "/server.flags";
  std::ofstream(config_file) << "# test settings\n--threads=2\n--grace_period=20s\n--max_operators=123456\n";
  ServerProcess process(data_dir, config_file);
  ASSERT_GT(process.pid(), 0);
  const int port = process.PortFromLine("listening on ", absl::Seconds(30));
  ASSERT_GT(port, 0) << "no 'listening on' line; see " << data_dir << ".log";
  const int metrics_port = process.PortFromLine("metrics on ", absl::Seconds(5));
  ASSERT_GT(metrics_port, 0);

  {
    auto context = testing::ContextWithin(std::chrono::seconds(10));
    context->set_wait_for_ready(true);
    pb::GetServerInfoResponse info;
    ASSERT_TRUE(testing::StubFor(port)->GetServerInfo(context.get(), pb::GetServerInfoRequest(), &info).ok());
    EXPECT_EQ(info.limits().max_operators(), 123456);
    EXPECT_EQ(info.limits().worker_threads(), 2);
  }

  // A Place that takes about 1.5 s: the portfolio on a graph too large to settle before its budget.
  pb::PlaceRequest request = testing::PlaceRequestFor(testing::LayeredGraph(3000), "8xV100");
  request.set_budget_ms(1500);
  grpc::Status status;
  pb::PlaceResponse response;
  std::thread client([&] {
    auto context = testing::ContextWithin(std::chrono::seconds(30));
    context->set_wait_for_ready(true);  // the server may still be loading its placers
    status = testing::StubFor(port)->Place(context.get(), request, &response);
  });

  // Wait until the request is being served, then ask the server to stop.
  bool in_flight = false;
  for (const absl::Time until = absl::Now() + absl::Seconds(20); !in_flight && absl::Now() < until;) {
    absl::StatusOr<std::string> metrics = testing::HttpGet(metrics_port, "/metrics");
    in_flight = metrics.ok() && metrics->find("placement_inflight_requests 1") != std::string::npos;
    if (!in_flight) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_TRUE(in_flight);
  ASSERT_EQ(::kill(process.pid(), SIGTERM), 0);

  client.join();
  EXPECT_TRUE(status.ok()) << status.error_code() << " " << status.error_message();
  EXPECT_EQ(response.num_operators(), request.graph().operators_size());
  EXPECT_EQ(process.WaitForExit(absl::Seconds(30)), 0);

  // RocksDB was closed cleanly: the next server opens it and finds the drained request's answer.
  auto cache = AnswerCache::Open({data_dir, 64 << 20});
  ASSERT_TRUE(cache.ok()) << cache.status();
}

}  // namespace
}  // namespace placement::server
