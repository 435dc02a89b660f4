// placectl against a real server: the placectl binary run as a user would, a placement server in this process
// on 127.0.0.1 with a port picked by the kernel and a real RocksDB cache in a temporary directory.
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/placectl_run.h"

#include "server/tests/test_util.h"

namespace {

namespace fs = std::filesystem;
using placement::server::PlacementServer;
using placement::server::testing::StartReadyServer;
using placement::server::testing::TempDir;
using placement::server::testing::TestOptions;
using ::testing::HasSubstr;

using Result = placement::testing::PlacectlResult;
using placement::testing::RunPlacectl;
using placement::testing::Slurp;

const std::string kSource = PLACEMENT_SOURCE_DIR;
const std::string kVgg = kSource + "/tests/data/corpus/vgg16.onnx";

// One server for the suite: each test uses its own requests, so they do not see each other's cache entries
// unless they mean to.
class PlacectlServer : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    server_ = StartReadyServer(TestOptions(dir_->path())).release();
  }
  static void TearDownTestSuite() {
    delete server_;
    delete dir_;
  }
  void SetUp() override { ASSERT_NE(server_, nullptr); }

  static std::string Server() { return "--server 127.0.0.1:" + std::to_string(server_->port()); }

  static TempDir* dir_;
  static PlacementServer* server_;
};

TempDir* PlacectlServer::dir_ = nullptr;
PlacementServer* PlacectlServer::server_ = nullptr;

TEST_F(PlacectlServer, SubmitPrintsJsonAndTheRepeatIsACacheHitWithTheSameAnswer) {
  const std::string args = "submit " + kVgg + " " + Server() + " --devices 2xA100 --algorithm heft --deadline 5s";
  Result first = RunPlacectl(args + " --output json");
  ASSERT_EQ(first.exit_code, 0) << first.err;
  nlohmann::json a = nlohmann::json::parse(first.out);
  EXPECT_EQ(a["algorithm"], "heft");
  EXPECT_EQ(a["objective"], "step_time");
  EXPECT_FALSE(a["cache_hit"].get<bool>());
  EXPECT_GT(a["value"].get<double>(), 0);
  EXPECT_EQ(a["assignment"].size(), a["num_operators"].get<size_t>());
  EXPECT_EQ(a["devices"].size(), 2u);
  EXPECT_EQ(a["graph_hash"].get<std::string>().size(), 64u);

  Result again = RunPlacectl(args + " --output json");
  ASSERT_EQ(again.exit_code, 0) << again.err;
  nlohmann::json b = nlohmann::json::parse(again.out);
  EXPECT_TRUE(b["cache_hit"].get<bool>());
  EXPECT_EQ(b["assignment"], a["assignment"]);
  EXPECT_EQ(b["value"], a["value"]);

  Result table = RunPlacectl(args);
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_THAT(table.out, HasSubstr("algorithm    heft"));
  EXPECT_THAT(table.out, HasSubstr("from the server's cache"));
  EXPECT_THAT(table.out, HasSubstr("lower bound"));

  // Every call carried x-graph-hash, the SHA-256 of the file's bytes, as the server found.
  const std::string metrics = server_->metrics().Text();
  EXPECT_THAT(metrics, HasSubstr("placement_graph_hash_header_total{result=\"absent\"} 0"));
  EXPECT_THAT(metrics, HasSubstr("placement_graph_hash_header_total{result=\"mismatch\"} 0"));
  EXPECT_THAT(metrics, ::testing::Not(HasSubstr("placement_graph_hash_header_total{result=\"match\"} 0")));
}

TEST_F(PlacectlServer, SubmitShowsProgressAndDrawsTheChartAndSimulateOnTheServerAgrees) {
  TempDir out;
  const std::string chart = out.path() + "/schedule.html";
  const std::string placement = out.path() + "/placement.json";
  Result placed = RunPlacectl("submit " + kVgg + " " + Server() +
                              " --devices 4xV100 --algorithm m_topo --progress --output json --chart " + chart);
  ASSERT_EQ(placed.exit_code, 0) << placed.err;
  EXPECT_THAT(placed.err, HasSubstr("started"));
  const std::string html = Slurp(chart);
  EXPECT_THAT(html, HasSubstr("<svg"));
  EXPECT_THAT(html, HasSubstr("m_topo"));
  std::ofstream(placement) << placed.out;

  Result scored = RunPlacectl("simulate " + kVgg + " --placement " + placement + " --devices 4xV100 " + Server() +
                              " --output json");
  ASSERT_EQ(scored.exit_code, 0) << scored.err;
  EXPECT_DOUBLE_EQ(nlohmann::json::parse(scored.out)["value"].get<double>(),
                   nlohmann::json::parse(placed.out)["value"].get<double>());
}

TEST_F(PlacectlServer, TheTarnawskiCostModelOnTheServerAndItsErrors) {
  const std::string tiny = kSource + "/examples/graphs/tiny_pipeline.json";
  const std::string split = kSource + "/examples/placements/tiny_pipeline_split.json";
  Result scored = RunPlacectl("simulate " + tiny + " --placement " + split + " " + Server() +
                              " --objective latency --cost_model tarnawski --output json");
  ASSERT_EQ(scored.exit_code, 0) << scored.err;
  EXPECT_NEAR(nlohmann::json::parse(scored.out)["value"].get<double>(), 17.6, 1e-9);
  Result placed = RunPlacectl("submit " + tiny + " " + Server() +
                              " --objective latency --cost_model tarnawski --deadline 2s"
                              " --output json");
  ASSERT_EQ(placed.exit_code, 0) << placed.err;
  EXPECT_LE(nlohmann::json::parse(placed.out)["value"].get<double>(), 17.6 + 1e-9);
  Result unknown = RunPlacectl("submit " + tiny + " " + Server() + " --objective latency --cost_model roofline");
  EXPECT_EQ(unknown.exit_code, 2) << unknown.err;  // a usage error, refused before the call
  EXPECT_THAT(unknown.err, HasSubstr("roofline"));
  Result mismatched = RunPlacectl("simulate " + tiny + " --placement " + split + " " + Server() +
                                  " --objective throughput --cost_model tarnawski");
  EXPECT_EQ(mismatched.exit_code, 3) << mismatched.err;
  EXPECT_THAT(mismatched.err, HasSubstr("latency"));
  Result listed = RunPlacectl("algorithms " + Server());
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  EXPECT_THAT(listed.out, HasSubstr("latency(tarnawski)"));
}

TEST_F(PlacectlServer, SubmitPlanPrintsItsStagesAndChartsAFewMicroBatches) {
  TempDir out;
  const std::string chart = out.path() + "/plan.html";
  const std::string profile = kSource + "/examples/graphs/convnet_pipedream.txt";
  Result r = RunPlacectl(
      "submit " + profile + " " + Server() +
      " --training --devices 2x4xV100 --objective throughput --parallelism hybrid --output json --chart " + chart);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_GT(j["stages"].size(), 0u);
  EXPECT_GT(j["stages"][0]["devices"].size(), 0u);
  EXPECT_GT(j["stages"][0]["operators"].size(), 0u);
  EXPECT_GT(j["simulated_value"].get<double>(), 0);
  const std::string html = Slurp(chart);
  EXPECT_THAT(html, HasSubstr("<svg"));
  EXPECT_THAT(html, HasSubstr("micro-batches of the plan"));
  Result table = RunPlacectl("submit " + profile + " " + Server() +
                             " --training --devices 2x4xV100 --objective throughput --parallelism hybrid");
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_THAT(table.out, HasSubstr("replicas"));
  EXPECT_THAT(table.out, HasSubstr("from the server's cache"));
}

// --micro_batch reaches the server (PlaceRequest.micro_batch_size): the default plan of a training step splits the
// global batch --batch into micro-batches of that size, and a request it cannot apply to says so.
TEST_F(PlacectlServer, SubmitSendsTheMicroBatchOfTheDefaultPlan) {
  const std::string resnet = kSource + "/tests/data/corpus/resnet50.onnx";
  const std::string step = "submit " + resnet + " " + Server() + " --training --devices 8xH100 --batch 32";
  Result split = RunPlacectl(step + " --micro_batch 8 --output json");
  ASSERT_EQ(split.exit_code, 0) << split.err;
  const nlohmann::json j = nlohmann::json::parse(split.out);
  EXPECT_EQ(j["micro_batch_size"], 8);
  EXPECT_EQ(j["micro_batches"], 4);
  EXPECT_EQ(j["global_batch"], 32);

  Result not_a_divisor = RunPlacectl(step + " --micro_batch 5");
  EXPECT_EQ(not_a_divisor.exit_code, 3) << not_a_divisor.err;
  EXPECT_THAT(not_a_divisor.err, HasSubstr("micro_batch_size 5 does not divide options.batch_size 32"));
  Result operators = RunPlacectl(step + " --micro_batch 8 --parallelism operator");
  EXPECT_EQ(operators.exit_code, 3) << operators.err;
  EXPECT_THAT(operators.err, HasSubstr("micro_batch_size: 8 applies to the default plan"));
}

// Local and remote answers name the precision and whose figures the devices got, in the same words.
TEST_F(PlacectlServer, AnswersNameThePrecisionAndTheDeviceFiguresLocallyAndFromTheServer) {
  const std::string resnet = kSource + "/tests/data/corpus/resnet50.onnx";
  const std::string run = resnet + " --devices 1xH100 --precision amp_bf16 --batch 8";
  Result local = RunPlacectl("place " + run + " --output json");
  ASSERT_EQ(local.exit_code, 0) << local.err;
  Result remote = RunPlacectl("submit " + run + " " + Server() + " --output json");
  ASSERT_EQ(remote.exit_code, 0) << remote.err;
  const nlohmann::json l = nlohmann::json::parse(local.out), r = nlohmann::json::parse(remote.out);
  EXPECT_EQ(l["precision"], "amp_bf16");
  EXPECT_EQ(r["precision"], "amp_bf16");
  EXPECT_THAT(l["device_figures"].get<std::string>(), HasSubstr("H100 at amp_bf16: measured"));
  EXPECT_EQ(r["device_figures"], l["device_figures"]);
  EXPECT_NEAR(r["value"].get<double>(), l["value"].get<double>(), 1e-9 * l["value"].get<double>());

  Result table = RunPlacectl("submit " + resnet + " --devices 2xA100 " + Server());
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_THAT(table.out, HasSubstr("precision    fp32\n"));
  EXPECT_THAT(table.out, HasSubstr("figures      A100 at fp32: derived from the H100's float32 measurements"));
}

// The figures placectl place computes locally, from the server: the same JSON but for the search's own time and the
// notes, which name the request's fields.
TEST_F(PlacectlServer, SubmitOfAConfigPrintsTheTransformerPlanPlaceWouldPrint) {
  const std::string config = kSource + "/bench/megatron/configs/gpt-1.7b.json";
  const std::string run = config + " --training --devices 2x8xA100 --batch 64 --precision amp_bf16";
  Result remote = RunPlacectl("submit " + run + " " + Server() + " --output json");
  ASSERT_EQ(remote.exit_code, 0) << remote.err;
  Result local = RunPlacectl("place " + run + " --output json");
  ASSERT_EQ(local.exit_code, 0) << local.err;
  nlohmann::json r = nlohmann::json::parse(remote.out);
  nlohmann::json l = nlohmann::json::parse(local.out);
  EXPECT_EQ(r["format"], "placement.transformer_plan/v1");
  EXPECT_TRUE(r["memory"]["fits"].get<bool>());
  for (nlohmann::json* j : {&r, &l}) {
    j->at("search").erase("seconds");
    j->erase("notes");
  }
  EXPECT_EQ(r, l);

  Result table = RunPlacectl("submit " + run + " " + Server());
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_THAT(table.out, HasSubstr("plan        " + l["plan"]["text"].get<std::string>()));
  EXPECT_THAT(table.out, HasSubstr("from the server's cache"));

  Result fixed = RunPlacectl("submit " + run + " " + Server() + " --plan tp=2,pp=2 --output json");
  ASSERT_EQ(fixed.exit_code, 0) << fixed.err;
  EXPECT_EQ(nlohmann::json::parse(fixed.out)["plan"]["tp"], 2);
  EXPECT_EQ(nlohmann::json::parse(fixed.out)["plan"]["pp"], 2);

  Result no_training = RunPlacectl("submit " + config + " " + Server() + " --devices 2x8xA100 --batch 64");
  EXPECT_EQ(no_training.exit_code, 2) << no_training.err;
  EXPECT_THAT(no_training.err, HasSubstr("--training"));
  Result pipeline = RunPlacectl("submit " + run + " " + Server() + " --parallelism pipeline");
  EXPECT_EQ(pipeline.exit_code, 3) << pipeline.err;
  EXPECT_THAT(pipeline.err, HasSubstr("placectl submit: parallelism: 'pipeline'"));
  Result plan_of_a_graph = RunPlacectl("submit " + kVgg + " " + Server() + " --devices 2xA100 --plan tp=2");
  EXPECT_EQ(plan_of_a_graph.exit_code, 2) << plan_of_a_graph.err;
  EXPECT_THAT(plan_of_a_graph.err, HasSubstr("not a Hugging Face config.json"));
}

TEST_F(PlacectlServer, BadGraphIsABadInputExitWithTheServersMessage) {
  TempDir out;
  const std::string bad = out.path() + "/bad.json";
  std::ofstream(bad) << R"({"format": "placement.graph/v1", "operators": [{"name": "a", "op_type": 7}]})";
  Result r = RunPlacectl("submit " + bad + " " + Server() + " --devices 2xA100");
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_THAT(r.err, HasSubstr("placectl submit: graph_json:"));
}

TEST_F(PlacectlServer, HealthInfoAndAlgorithmsComeFromTheServer) {
  Result health = RunPlacectl("health " + Server());
  ASSERT_EQ(health.exit_code, 0) << health.err;
  EXPECT_THAT(health.out, HasSubstr("liveness   SERVING"));
  EXPECT_THAT(health.out, HasSubstr("readiness  SERVING"));

  Result info = RunPlacectl("info " + Server() + " --output json");
  ASSERT_EQ(info.exit_code, 0) << info.err;
  nlohmann::json j = nlohmann::json::parse(info.out);
  EXPECT_TRUE(j["ready"].get<bool>());
  EXPECT_EQ(j["limits"]["worker_threads"], 2);
  EXPECT_THAT(RunPlacectl("info " + Server()).out, HasSubstr("ready          yes"));

  Result algorithms = RunPlacectl("algorithms " + Server());
  ASSERT_EQ(algorithms.exit_code, 0) << algorithms.err;
  EXPECT_THAT(algorithms.out, HasSubstr("heft"));
  EXPECT_THAT(algorithms.out, HasSubstr("default: auto"));
}

TEST_F(PlacectlServer, BenchReportsFiguresForRepeatsAndTheUniqueShare) {
  Result r = RunPlacectl("bench " + kVgg + " " + Server() +
                         " --devices 2xA100 --algorithm heft --concurrency 4 --requests 40 --unique_fraction 0.25 "
                         "--output json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["requests"], 40);
  EXPECT_EQ(j["ok"], 40) << r.out;
  EXPECT_EQ(j["unique_requests"], 10);
  EXPECT_EQ(j["cache_hits"], 30);  // the warm-up filled the cache for the repeats; unique ones never hit
  EXPECT_GT(j["requests_per_second"].get<double>(), 0);
  EXPECT_GT(j["latency_ms"]["p50"].get<double>(), 0);
  EXPECT_GE(j["latency_ms"]["p99"].get<double>(), j["latency_ms"]["p50"].get<double>());
  EXPECT_TRUE(j["errors"].empty());

  Result timed = RunPlacectl("bench " + kVgg + " " + Server() + " --devices 2xA100 --algorithm heft --duration 1s");
  ASSERT_EQ(timed.exit_code, 0) << timed.err;
  EXPECT_THAT(timed.out, HasSubstr("requests/s"));
  EXPECT_THAT(timed.out, HasSubstr("p99"));
  EXPECT_THAT(timed.out, HasSubstr("errors       none"));
}

TEST_F(PlacectlServer, ReloadIsRefusedWithoutATokenAndAnUnknownPolicyIsABadInput) {
  Result reload = RunPlacectl("reload " + Server());
  EXPECT_EQ(reload.exit_code, 6) << reload.err;
  EXPECT_THAT(reload.err, HasSubstr("SIGHUP"));
  Result missing = RunPlacectl("reload " + Server() + " --weights /nonexistent/policy.pt");
  EXPECT_EQ(missing.exit_code, 3) << missing.err;
  EXPECT_THAT(missing.err, HasSubstr("/nonexistent/policy.pt"));
  Result unknown = RunPlacectl("submit " + kVgg + " " + Server() + " --devices 2xV100 --algorithm heft --policy mine");
  EXPECT_EQ(unknown.exit_code, 3) << unknown.err;
  EXPECT_THAT(unknown.err, HasSubstr("'mine' is not served here"));
}

// A port nothing listens on: bound, then closed.
int ClosedPort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

TEST(PlacectlUnreachable, EveryServerCommandSaysItCannotReachTheServerWithExitCode5) {
  const std::string address = "127.0.0.1:" + std::to_string(ClosedPort());
  // --timeout bounds the calls of health and info; submit and bench take theirs from --deadline.
  for (const std::string& command :
       {"submit " + kVgg + " --devices 2xA100 --deadline 5s", std::string("health --timeout 5s"),
        std::string("info --timeout 5s"), "bench " + kVgg + " --devices 2xA100 --requests 1 --deadline 5s"}) {
    Result r = RunPlacectl(command + " --server " + address);
    EXPECT_EQ(r.exit_code, 5) << command << ": " << r.err;
    EXPECT_THAT(r.err, HasSubstr("cannot reach the server at " + address)) << command;
  }
}

// The security flags reach every server command: a server that wants a bearer token refuses placectl without
// it (exit 6, the server's word in the message) and answers with it, from a file or from the environment.
TEST(PlacectlSecurity, TokenFromFileOrEnvironmentIsSentAndAMissingOneIsRefused) {
  TempDir dir;
  placement::server::ServerOptions options = TestOptions(dir.path());
  options.security.auth_token = "placectl-test-token-5e4d";
  std::unique_ptr<PlacementServer> server = StartReadyServer(options);
  ASSERT_NE(server, nullptr);
  const std::string address = "--server 127.0.0.1:" + std::to_string(server->port());
  const std::string submit = "submit " + kVgg + " " + address + " --devices 2xV100 --algorithm heft --output json";

  Result refused = RunPlacectl(submit);
  EXPECT_EQ(refused.exit_code, 6) << refused.err;
  EXPECT_THAT(refused.err, HasSubstr("requires a bearer token"));

  const std::string token_file = dir.path() + "/token";
  std::ofstream(token_file) << "placectl-test-token-5e4d\n";
  fs::permissions(token_file, fs::perms::owner_read | fs::perms::owner_write);
  Result with_file = RunPlacectl(submit + " --token_file " + token_file);
  EXPECT_EQ(with_file.exit_code, 0) << with_file.err;

  Result with_env = RunPlacectl("info " + address + " --output json");
  EXPECT_EQ(with_env.exit_code, 6) << with_env.err;
  ::setenv("PLACEMENT_AUTH_TOKEN", "placectl-test-token-5e4d", 1);
  with_env = RunPlacectl("info " + address + " --output json");
  // With the token, reload reaches the server, which has no learned policy to reload (exit 4).
  Result reload = RunPlacectl("reload " + address);
  ::unsetenv("PLACEMENT_AUTH_TOKEN");
  EXPECT_EQ(with_env.exit_code, 0) << with_env.err;
  EXPECT_EQ(reload.exit_code, 4) << reload.err;
  EXPECT_THAT(reload.err, HasSubstr("without the learned policy"));
}

}  // namespace
