// Crash consistency of the answer cache: a real placement_server process is SIGKILLed while clients keep it
// writing cache entries. Restarted on the same data directory, it starts, serves every answer it had
// acknowledged as a cache hit with the identical assignment, and finds no corrupt entry.
//
// Why this holds: PlacementEngine::Place inserts the answer (RocksDB Put, write-ahead log on) before it
// returns it, and RocksDB hands each log record to the kernel before Put returns, so an acknowledged answer
// outlives the process. (Surviving a power loss would need a synced log; see docs/RELIABILITY.md.)
#include <signal.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "server/tests/server_process.h"
#include "server/tests/test_util.h"

namespace placement::server {
namespace {

namespace pb = ::placement::v1;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::ServerProcess;
using testing::TempDir;

constexpr int kClients = 4;
constexpr int kKillAfterAcks = 120;

// Request i: a small graph of its own (a layered graph, seeded by i), placed by HEFT within a short budget
// and a long deadline, so the answer is cached (a budget cut short by the deadline is not).
pb::PlaceRequest RequestNumber(int i) {
  pb::PlaceRequest r =
      testing::PlaceRequestFor(testing::LayeredGraph(30 + i % 20, /*seed=*/1000 + i), "4xA100", "heft");
  r.set_budget_ms(500);
  return r;
}

std::map<std::string, std::string> AssignmentOf(const pb::PlaceResponse& r) {
  std::map<std::string, std::string> out;
  for (const pb::Assignment& a : r.assignment()) out[a.op()] = a.device();
  return out;
}

std::vector<std::string> ServerArgs(const std::string& data_dir) {
  return {"--listen=127.0.0.1:0", "--metrics_listen=127.0.0.1:0", "--data_dir=" + data_dir, "--policy_device=none",
          "--threads=2"};
}

// True once GetServerInfo says ready (placers loaded), within 30 s.
bool WaitUntilReady(int port) {
  auto stub = testing::StubFor(port);
  for (const absl::Time until = absl::Now() + absl::Seconds(30); absl::Now() < until;) {
    auto context = testing::ContextWithin(std::chrono::seconds(5));
    context->set_wait_for_ready(true);
    pb::GetServerInfoResponse info;
    if (stub->GetServerInfo(context.get(), pb::GetServerInfoRequest(), &info).ok() && info.ready()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

TEST(CrashConsistency, EveryAcknowledgedAnswerSurvivesSigkill) {
  TempDir dir;
  const std::string data_dir = dir.path() + "/data";
  std::map<int, std::map<std::string, std::string>> acknowledged;  // request number -> assignment
  {
    ServerProcess process(ServerArgs(data_dir), data_dir + ".first.log");
    ASSERT_GT(process.pid(), 0);
    const int port = process.PortFromLine("listening on ", absl::Seconds(30));
    ASSERT_GT(port, 0) << "no 'listening on' line; see " << data_dir << ".first.log";

    ASSERT_TRUE(WaitUntilReady(port));

    std::mutex mu;
    std::atomic<int> next{0};
    std::atomic<int> acks{0};
    std::vector<std::thread> clients;
    for (int c = 0; c < kClients; ++c) {
      clients.emplace_back([&] {
        auto stub = testing::StubFor(port);
        // Until the server dies: every call after the kill fails, which ends the loop.
        for (int i = next++; i < 100'000; i = next++) {
          auto context = testing::ContextWithin(std::chrono::seconds(30));
          pb::PlaceResponse response;
          const grpc::Status s = stub->Place(context.get(), RequestNumber(i), &response);
          if (!s.ok()) return;
          std::lock_guard<std::mutex> lock(mu);
          acknowledged[i] = AssignmentOf(response);
          ++acks;
        }
      });
    }
    while (acks.load() < kKillAfterAcks) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    ASSERT_EQ(::kill(process.pid(), SIGKILL), 0);  // mid-stream: the clients still have calls in flight
    EXPECT_EQ(process.WaitForExit(absl::Seconds(10)), 128 + SIGKILL);
    for (std::thread& t : clients) t.join();
  }
  ASSERT_GE(acknowledged.size(), static_cast<size_t>(kKillAfterAcks));

  ServerProcess restarted(ServerArgs(data_dir), data_dir + ".second.log");
  const int port = restarted.PortFromLine("listening on ", absl::Seconds(30));
  ASSERT_GT(port, 0) << "the server did not start on the killed server's data; see " << data_dir << ".second.log";
  const int metrics_port = restarted.PortFromLine("metrics on ", absl::Seconds(5));
  ASSERT_GT(metrics_port, 0);

  ASSERT_TRUE(WaitUntilReady(port));
  auto stub = testing::StubFor(port);
  int misses = 0;
  for (const auto& [i, assignment] : acknowledged) {
    auto context = testing::ContextWithin(std::chrono::seconds(30));
    pb::PlaceResponse response;
    const grpc::Status s = stub->Place(context.get(), RequestNumber(i), &response);
    ASSERT_TRUE(s.ok()) << "request " << i << ": " << s.error_message();
    if (!response.cache_hit()) ++misses;
    EXPECT_TRUE(response.cache_hit()) << "acknowledged answer " << i << " was lost";
    EXPECT_EQ(AssignmentOf(response), assignment) << "request " << i;
  }
  EXPECT_EQ(misses, 0) << "of " << acknowledged.size() << " acknowledged answers";

  absl::StatusOr<std::string> metrics = testing::HttpGet(metrics_port, "/metrics");
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  EXPECT_THAT(*metrics, HasSubstr("placement_cache_invalid_entries_total{reason=\"corrupt\"} 0"));
  EXPECT_THAT(*metrics, Not(HasSubstr("placement_cache_invalid_entries_total{reason=\"corrupt\"} 1")));
}

}  // namespace
}  // namespace placement::server
