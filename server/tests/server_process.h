// A placement_server binary started as a child process (stdout on a pipe, stderr to a log file), for tests of
// what only a real process shows: signals, restarts, crashes.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "absl/time/time.h"

namespace placement::server::testing {

class ServerProcess {
 public:
  // Runs PLACEMENT_SERVER_PATH with `args` (flags such as --data_dir=...), stderr into `log_file`.
  ServerProcess(const std::vector<std::string>& args, const std::string& log_file);
  ~ServerProcess();  // SIGKILL when still running
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  // Reads stdout lines until one starts with `prefix`; returns the port after its last ':' (0 on timeout).
  int PortFromLine(const std::string& prefix, absl::Duration timeout);
  // The exit status once the process ends within `timeout` (128 + signal when killed); -1 otherwise.
  int WaitForExit(absl::Duration timeout);

  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  int out_ = -1;
  bool reaped_ = false;
  std::string buffer_;
};

}  // namespace placement::server::testing
