// The real binary: started as a child process on 127.0.0.1 port 0, given a slow Place, then SIGTERM. The
// request in flight completes OK, the process exits 0 and leaves a cache the next server can open.
#include <signal.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "server/cache.h"
#include "server/tests/server_process.h"
#include "server/tests/test_util.h"

namespace placement::server {
namespace {

namespace pb = ::placement::v1;
using testing::ServerProcess;
using testing::TempDir;

TEST(Sigterm, DrainsTheRequestInFlightAndExitsZero) {
  TempDir dir;
  const std::string data_dir = dir.path() + "/data";
  // Some settings come from a --config flag file, as a deployment would pass them.
  const std::string config_file = dir.path() + "/server.flags";
  std::ofstream(config_file) << "# test settings\n--threads=2\n--grace_period=20s\n--max_operators=123456\n";
  ServerProcess process({"--config=" + config_file, "--listen=127.0.0.1:0", "--metrics_listen=127.0.0.1:0",
                         "--data_dir=" + data_dir, "--policy_device=cpu"},
                        data_dir + ".log");
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
