// The /metrics endpoint over HTTP: every metric the service documents is there, with the right labels, and
// the scrape passes `promtool check metrics`.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "server/tests/test_util.h"

namespace placement::server {
namespace {

namespace pb = ::placement::v1;
using testing::ContextWithin;
using testing::TempDir;

TEST(Metrics, ScrapeHasTheMetricsAndPassesPromtool) {
  TempDir dir;
  auto server = testing::StartReadyServer(testing::TestOptions(dir.path()));
  ASSERT_NE(server, nullptr);
  ASSERT_GT(server->metrics_port(), 0);
  auto stub = testing::StubFor(server->port());
  const pb::PlaceRequest request = testing::PlaceRequestFor(testing::ChainGraph(20), "2xA100", "heft");
  for (int i = 0; i < 2; ++i) {  // a miss, then a hit
    auto context = ContextWithin();
    pb::PlaceResponse response;
    ASSERT_TRUE(stub->Place(context.get(), request, &response).ok());
  }
  {
    auto context = ContextWithin();
    pb::PlaceResponse response;
    EXPECT_FALSE(
        stub->Place(context.get(), testing::PlaceRequestFor(testing::ChainGraph(2), "2xA100", "nope"), &response).ok());
  }

  absl::StatusOr<std::string> text = testing::HttpGet(server->metrics_port(), "/metrics");
  ASSERT_TRUE(text.ok()) << text.status();
  for (const char* expected : {
           "placement_requests_total{code=\"OK\",method=\"Place\"} 2",
           "placement_requests_total{code=\"INVALID_ARGUMENT\",method=\"Place\"} 1",
           "placement_request_duration_seconds_bucket{algorithm=\"heft\",method=\"Place\",le=\"0.001\"}",
           "placement_request_duration_seconds_count{algorithm=\"unknown\",method=\"Place\"} 1",
           "placement_cache_hits_total 1",
           "placement_cache_misses_total 1",
           "placement_graph_operators_count 1",                       // the hit is answered before the graph is decoded
           "placement_graph_hash_header_total{result=\"absent\"} 3",  // no header in these requests
           "placement_ratio_to_bound_count 1",
           "placement_policy_inference_seconds_count 0",
           "placement_inflight_requests 0",
           "placement_ready 1",
           "placement_build_info{version=\"",
       }) {
    EXPECT_NE(text->find(expected), std::string::npos) << expected << "\n" << *text;
  }
  // The storage gauges are read at the scrape: the cache holds the answer, its filesystem has room.
  for (const char* gauge : {"placement_cache_bytes ", "placement_cache_limit_bytes ",
                            "placement_data_dir_available_bytes ", "placement_data_dir_size_bytes "}) {
    const size_t at = text->find(std::string("\n") + gauge);
    ASSERT_NE(at, std::string::npos) << gauge << "\n" << *text;
    EXPECT_GT(std::stod(text->substr(at + 1 + std::string(gauge).size())), 0) << gauge;
  }
  EXPECT_FALSE(testing::HttpGet(server->metrics_port(), "/other").ok());

  if (std::system("command -v promtool > /dev/null 2>&1") != 0) {
    GTEST_SKIP() << "promtool is not installed (scripts/deps.sh installs Debian's prometheus package)";
  }
  const std::string path = dir.path() + "/scrape.txt";
  std::ofstream(path) << *text;
  const std::string command = "promtool check metrics < " + path + " > " + dir.path() + "/promtool.txt 2>&1";
  const int rc = std::system(command.c_str());
  std::ifstream report(dir.path() + "/promtool.txt");
  const std::string output((std::istreambuf_iterator<char>(report)), std::istreambuf_iterator<char>());
  EXPECT_EQ(rc, 0) << output;
}

}  // namespace
}  // namespace placement::server
