#include "server/tests/server_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/time/clock.h"

namespace placement::server::testing {

ServerProcess::ServerProcess(const std::vector<std::string>& args, const std::string& log_file) {
  int out[2];
  if (::pipe(out) != 0) return;
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(PLACEMENT_SERVER_PATH));
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_ = ::fork();
  if (pid_ == 0) {
    ::dup2(out[1], STDOUT_FILENO);
    const int err = ::open(log_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (err >= 0) ::dup2(err, STDERR_FILENO);
    ::close(out[0]);
    ::close(out[1]);
    ::execv(PLACEMENT_SERVER_PATH, argv.data());
    ::_exit(127);
  }
  ::close(out[1]);
  out_ = out[0];
}

ServerProcess::~ServerProcess() {
  if (pid_ > 0 && !reaped_) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  if (out_ >= 0) ::close(out_);
}

int ServerProcess::PortFromLine(const std::string& prefix, absl::Duration timeout) {
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

int ServerProcess::WaitForExit(absl::Duration timeout) {
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

}  // namespace placement::server::testing
