// The real binary and the learned policy's weights: loaded at start (version in the readiness line, policy
// placers registered), refused with a clear error when corrupt or missing, served without when
// --policy_fallback says so. Each run is bounded by coreutils' timeout.
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "server/tests/test_util.h"

namespace placement::server {
namespace {

using testing::TempDir;

struct ServerRun {
  int exit_code = -1;
  std::string log;  // stdout and stderr
};

// Runs the server with `flags` for at most `seconds` (a server that starts is stopped by timeout: exit 124).
ServerRun RunServer(const TempDir& dir, const std::string& flags, int seconds) {
  const std::string log = dir.path() + "/server.log";
  const std::string command = absl::StrCat("timeout ", seconds, " ", PLACEMENT_SERVER_PATH,
                                           " --listen=127.0.0.1:0 --metrics_listen= --data_dir=", dir.path(), "/data ",
                                           flags, " > ", log, " 2>&1");
  ServerRun run;
  const int status = std::system(command.c_str());
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream in(log);
  std::stringstream text;
  text << in.rdbuf();
  run.log = text.str();
  return run;
}

TEST(PolicyWeights, ShippedWeightsLoadAndNameTheirVersion) {
  TempDir dir;
  const ServerRun run = RunServer(dir, "--policy_device=cpu", 8);
  EXPECT_EQ(run.exit_code, 124) << run.log;  // still serving when stopped
  EXPECT_NE(run.log.find("policy gnn-3+"), std::string::npos) << run.log;
  EXPECT_NE(run.log.find("policy version placers-"), std::string::npos) << run.log;
  EXPECT_NE(run.log.find("/learned-gnn-3+"), std::string::npos) << run.log;
}

TEST(PolicyWeights, CorruptWeightsStopTheStartWithAClearError) {
  TempDir dir;
  const std::string weights = dir.path() + "/corrupt.pt";
  std::ofstream(weights) << "not a weights file";
  const ServerRun run = RunServer(dir, absl::StrCat("--policy_device=cpu --policy_weights=", weights), 20);
  EXPECT_EQ(run.exit_code, 1) << run.log;
  EXPECT_NE(run.log.find(weights), std::string::npos) << run.log;
  EXPECT_NE(run.log.find("cannot be read"), std::string::npos) << run.log;
}

TEST(PolicyWeights, MissingWeightsWithFallbackServeWithoutThePolicy) {
  TempDir dir;
  const ServerRun run = RunServer(
      dir, absl::StrCat("--policy_device=cpu --policy_fallback --policy_weights=", dir.path(), "/none.pt"), 8);
  EXPECT_EQ(run.exit_code, 124) << run.log;
  EXPECT_NE(run.log.find("not found"), std::string::npos) << run.log;
  EXPECT_NE(run.log.find("serving AUTO without it"), std::string::npos) << run.log;
  EXPECT_NE(run.log.find("/learned-none"), std::string::npos) << run.log;
}

}  // namespace
}  // namespace placement::server
