// Place, Simulate, ListAlgorithms and GetServerInfo through a real server on 127.0.0.1 with a real RocksDB
// cache: repeats are cache hits with the same answer, the cache survives a restart, damaged entries are
// recomputed.
#include <memory>
#include <string>

#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>
#include <rocksdb/db.h>

#include "graph/canonical.h"
#include "graph/onnx/tests/test_models.h"
#include "proto/placement/v1/metadata.h"
#include "server/tests/test_util.h"

namespace placement::server {
namespace {

namespace pb = ::placement::v1;
using google::protobuf::util::MessageDifferencer;
using testing::ContextWithin;
using testing::PlaceOn;
using testing::PlaceRequestFor;
using testing::StartReadyServer;
using testing::StubFor;
using testing::TempDir;
using testing::TestOptions;

// The answer without what legitimately differs between two calls.
pb::PlaceResponse Comparable(pb::PlaceResponse r) {
  r.clear_request_id();
  r.clear_cache_hit();
  r.clear_compute_seconds();
  return r;
}

TEST(Place, RepeatIsACacheHitWithTheSameAnswer) {
  TempDir dir;
  auto server = StartReadyServer(TestOptions(dir.path()));
  ASSERT_NE(server, nullptr);
  pb::PlaceRequest request = PlaceRequestFor(testing::LayeredGraph(200), "4xA100");
  request.set_budget_ms(300);

  absl::StatusOr<pb::PlaceResponse> first = PlaceOn(server->port(), request);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_FALSE(first->cache_hit());
  EXPECT_EQ(first->assignment_size(), first->num_operators());
  EXPECT_EQ(first->num_devices(), 4);
  EXPECT_EQ(first->score().devices_size(), 4);
  EXPECT_GT(first->score().value(), 0);
  EXPECT_GE(first->score().ratio(), 1.0 - 1e-9);
  EXPECT_EQ(first->graph_hash().size(), 64u);
  EXPECT_EQ(first->policy_version(), PolicyVersion());
  EXPECT_EQ(first->algorithm().rfind("auto:", 0), 0u) << first->algorithm();
  EXPECT_FALSE(first->request_id().empty());

  absl::StatusOr<pb::PlaceResponse> second = PlaceOn(server->port(), request);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_TRUE(second->cache_hit());
  EXPECT_NE(second->request_id(), first->request_id());
  EXPECT_TRUE(MessageDifferencer::Equals(Comparable(*first), Comparable(*second)));

  // Another algorithm is another key.
  absl::StatusOr<pb::PlaceResponse> heft = PlaceOn(server->port(), PlaceRequestFor(request.graph(), "4xA100", "heft"));
  ASSERT_TRUE(heft.ok()) << heft.status();
  EXPECT_FALSE(heft->cache_hit());
  EXPECT_EQ(heft->algorithm(), "heft");
}

TEST(Place, CacheSurvivesARestartAndDamageIsRecomputed) {
  TempDir dir;
  const pb::PlaceRequest request = PlaceRequestFor(testing::ChainGraph(30), "2xV100", "m_topo");
  pb::PlaceResponse original;
  {
    auto server = StartReadyServer(TestOptions(dir.path()));
    ASSERT_NE(server, nullptr);
    absl::StatusOr<pb::PlaceResponse> r = PlaceOn(server->port(), request);
    ASSERT_TRUE(r.ok()) << r.status();
    original = *r;
  }
  {
    auto server = StartReadyServer(TestOptions(dir.path()));
    ASSERT_NE(server, nullptr);
    absl::StatusOr<pb::PlaceResponse> r = PlaceOn(server->port(), request);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_TRUE(r->cache_hit());
    EXPECT_TRUE(MessageDifferencer::Equals(Comparable(original), Comparable(*r)));
  }
  {
    // Overwrite every stored answer with garbage, as a damaged disk would.
    rocksdb::DB* raw = nullptr;
    ASSERT_TRUE(rocksdb::DB::Open(rocksdb::Options(), dir.path(), &raw).ok());
    std::unique_ptr<rocksdb::DB> db(raw);
    std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(rocksdb::ReadOptions()));
    int damaged = 0;
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), it->key(), "garbage, not an answer").ok());
      ++damaged;
    }
    EXPECT_EQ(damaged, 2);  // under the request's key and under the canonical graph's key
    it.reset();
    ASSERT_TRUE(db->Close().ok());
  }
  auto server = StartReadyServer(TestOptions(dir.path()));
  ASSERT_NE(server, nullptr);
  absl::StatusOr<pb::PlaceResponse> recomputed = PlaceOn(server->port(), request);
  ASSERT_TRUE(recomputed.ok()) << recomputed.status();
  EXPECT_FALSE(recomputed->cache_hit());
  EXPECT_TRUE(MessageDifferencer::Equals(Comparable(original), Comparable(*recomputed)));
  const std::string metrics = server->metrics().Text();
  EXPECT_NE(metrics.find("placement_cache_invalid_entries_total{reason=\"corrupt\"} 2"), std::string::npos) << metrics;
  absl::StatusOr<pb::PlaceResponse> hit = PlaceOn(server->port(), request);
  ASSERT_TRUE(hit.ok());
  EXPECT_TRUE(hit->cache_hit());
}

TEST(Place, RequestIdComesBackInMetadata) {
  TempDir dir;
  auto server = StartReadyServer(TestOptions(dir.path()));
  ASSERT_NE(server, nullptr);
  auto context = ContextWithin();
  context->AddMetadata("x-request-id", "client-chosen-42");
  pb::PlaceResponse response;
  const grpc::Status s =
      StubFor(server->port())->Place(context.get(), PlaceRequestFor(testing::ChainGraph(5), "2xA100"), &response);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(response.request_id(), "client-chosen-42");
  const auto& metadata = context->GetServerInitialMetadata();
  auto it = metadata.find("x-request-id");
  ASSERT_NE(it, metadata.end());
  EXPECT_EQ(std::string(it->second.data(), it->second.size()), "client-chosen-42");
}

TEST(Place, JsonInputWithItsOwnDevicesAndSimulateAgrees) {
  TempDir dir;
  auto server = StartReadyServer(TestOptions(dir.path()));
  ASSERT_NE(server, nullptr);
  // A Tarnawski graph: its accelerators and CPUs come with it, its times stay in the input's unit.
  pb::PlaceRequest request;
  request.set_graph_json(testing::ReadSourceFile("examples/graphs/tiny_pipeline.json"));
  request.set_objective(pb::OBJECTIVE_THROUGHPUT);
  absl::StatusOr<pb::PlaceResponse> placed = PlaceOn(server->port(), request);
  ASSERT_TRUE(placed.ok()) << placed.status();
  EXPECT_EQ(placed->num_devices(), 3);
  EXPECT_EQ(placed->score().time_unit(), "input");

  pb::SimulateRequest simulate;
  simulate.set_graph_json(request.graph_json());
  simulate.set_objective(pb::OBJECTIVE_THROUGHPUT);
  *simulate.mutable_assignment() = placed->assignment();
  auto context = ContextWithin();
  pb::SimulateResponse scored;
  const grpc::Status s = StubFor(server->port())->Simulate(context.get(), simulate, &scored);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_DOUBLE_EQ(scored.score().value(), placed->score().value());
  EXPECT_EQ(scored.graph_hash(), placed->graph_hash());
}

// How many graphs the server decoded: each decoded request observes its operator count once.
std::string DecodedCount(PlacementServer& server) {
  const std::string text = server.metrics().Text();
  const size_t at = text.find("placement_graph_operators_count ");
  return at == std::string::npos ? "absent" : text.substr(at, text.find('\n', at) - at);
}

TEST(Place, RepeatedOnnxRequestIsAnsweredWithoutDecodingAndOtherBytesOfTheSameGraphHit) {
  TempDir dir;
  auto server = StartReadyServer(TestOptions(dir.path()));
  ASSERT_NE(server, nullptr);
  pb::PlaceRequest request;
  request.set_onnx(testing::ReadSourceFile("tests/data/corpus/resnet50.onnx"));
  request.mutable_topology()->set_shorthand("2xA100");
  request.set_algorithm("m_topo");
  absl::StatusOr<pb::PlaceResponse> first = PlaceOn(server->port(), request);
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_FALSE(first->cache_hit());
  const std::string decoded_once = DecodedCount(*server);
  EXPECT_EQ(decoded_once, "placement_graph_operators_count 1");

  absl::StatusOr<pb::PlaceResponse> repeat = PlaceOn(server->port(), request);
  ASSERT_TRUE(repeat.ok()) << repeat.status();
  EXPECT_TRUE(repeat->cache_hit());
  EXPECT_TRUE(MessageDifferencer::Equals(Comparable(*first), Comparable(*repeat)));
  EXPECT_EQ(DecodedCount(*server), decoded_once);  // answered from the request's key, before the import

  // Changing what the request key holds changes the answer's key: another seed is computed afresh.
  request.set_seed(7);
  absl::StatusOr<pb::PlaceResponse> other_seed = PlaceOn(server->port(), request);
  ASSERT_TRUE(other_seed.ok()) << other_seed.status();
  EXPECT_FALSE(other_seed->cache_hit());

  // The same JSON graph sent with different spacing: a miss on the request key, a hit on the canonical one,
  // after which those bytes hit without decoding too.
  pb::PlaceRequest json;
  json.set_graph_json(testing::ReadSourceFile("examples/graphs/tiny_pipeline.json"));
  json.set_objective(pb::OBJECTIVE_THROUGHPUT);
  ASSERT_TRUE(PlaceOn(server->port(), json).ok());
  json.set_graph_json("  \n" + json.graph_json());
  absl::StatusOr<pb::PlaceResponse> respaced = PlaceOn(server->port(), json);
  ASSERT_TRUE(respaced.ok()) << respaced.status();
  EXPECT_TRUE(respaced->cache_hit());
  const std::string decoded = DecodedCount(*server);
  absl::StatusOr<pb::PlaceResponse> again = PlaceOn(server->port(), json);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(again->cache_hit());
  EXPECT_EQ(DecodedCount(*server), decoded);
}

TEST(Place, AnAnswerInMemoryIsNotGivenToAnInvalidOrSkipCacheRequest) {
  TempDir dir;
  auto server = StartReadyServer(TestOptions(dir.path()));
  ASSERT_NE(server, nullptr);
  pb::PlaceRequest request = PlaceRequestFor(testing::ChainGraph(12), "2xA100", "m_topo");
  ASSERT_TRUE(PlaceOn(server->port(), request).ok());
  absl::StatusOr<pb::PlaceResponse> hit = PlaceOn(server->port(), request);
  ASSERT_TRUE(hit.ok());
  ASSERT_TRUE(hit->cache_hit());

  // A negative budget plans the default budget, the same key as budget 0: it must still be refused.
  request.set_budget_ms(-1);
  absl::StatusOr<pb::PlaceResponse> negative = PlaceOn(server->port(), request);
  EXPECT_EQ(negative.status().code(), absl::StatusCode::kInvalidArgument) << negative.status();
  request.set_budget_ms(0);
  request.set_skip_cache(true);
  absl::StatusOr<pb::PlaceResponse> fresh = PlaceOn(server->port(), request);
  ASSERT_TRUE(fresh.ok());
  EXPECT_FALSE(fresh->cache_hit());
}

TEST(Place, TheGraphHashHeaderIsCheckedAgainstThePayload) {
  TempDir dir;
  auto server = StartReadyServer(TestOptions(dir.path()));
  ASSERT_NE(server, nullptr);
  pb::PlaceRequest request;
  request.set_graph_json(testing::ReadSourceFile("examples/graphs/tiny_pipeline.json"));
  request.set_objective(pb::OBJECTIVE_THROUGHPUT);
  for (const std::string& header : {Sha256Hex(request.graph_json()), std::string(64, '0')}) {
    auto context = ContextWithin();
    context->AddMetadata(::placement::v1::kGraphHashHeader, header);
    pb::PlaceResponse response;
    ASSERT_TRUE(StubFor(server->port())->Place(context.get(), request, &response).ok());
  }
  const std::string text = server->metrics().Text();
  for (const char* expected : {"placement_graph_hash_header_total{result=\"match\"} 1",
                               "placement_graph_hash_header_total{result=\"mismatch\"} 1",
                               "placement_graph_hash_header_total{result=\"absent\"} 0"}) {
    EXPECT_NE(text.find(expected), std::string::npos) << expected << "\n" << text;
  }
}

TEST(Place, TrainingExpansionOfAnOnnxModel) {
  TempDir dir;
  auto server = StartReadyServer(TestOptions(dir.path()));
  ASSERT_NE(server, nullptr);
  pb::PlaceRequest request;
  request.set_onnx(testing::ReadSourceFile("tests/data/corpus/mobilenet_v3_large.onnx"));
  request.mutable_topology()->set_shorthand("2xA100");
  request.set_algorithm("heft");
  request.mutable_options()->set_batch_size(8);
  absl::StatusOr<pb::PlaceResponse> inference = PlaceOn(server->port(), request);
  ASSERT_TRUE(inference.ok()) << inference.status();
  request.mutable_options()->set_training(true);
  absl::StatusOr<pb::PlaceResponse> training = PlaceOn(server->port(), request);
  ASSERT_TRUE(training.ok()) << training.status();
  EXPECT_GT(training->num_operators(), 2 * inference->num_operators() - 1);
  EXPECT_NE(training->graph_hash(), inference->graph_hash());
  // Each device's memory by kind: the weights once, a gradient per weight, Adam's two moments, what autograd keeps.
  int64_t parameters = 0, gradients = 0, optimizer = 0, activations = 0;
  for (const pb::DeviceScore& d : training->score().devices()) {
    parameters += d.memory().parameters_bytes();
    gradients += d.memory().gradients_bytes();
    optimizer += d.memory().optimizer_bytes();
    activations += d.memory().activations_bytes();
    EXPECT_GE(d.peak_memory_bytes(), d.memory().parameters_bytes() + d.memory().optimizer_bytes());
  }
  EXPECT_GT(parameters, 5483032 * 4 * 99 / 100);  // mobilenet_v3_large's float32 weights
  EXPECT_EQ(gradients, parameters);
  EXPECT_EQ(optimizer, 2 * parameters);
  EXPECT_GT(activations, 0);
  for (const pb::DeviceScore& d : inference->score().devices()) EXPECT_EQ(d.memory().gradients_bytes(), 0);
}

TEST(Place, OnnxOptionsGiveDataDependentSizesAndEnterTheCacheKey) {
  TempDir dir;
  auto server = StartReadyServer(TestOptions(dir.path()));
  ASSERT_NE(server, nullptr);
  pb::PlaceRequest request;
  request.set_onnx(onnx_testing::Serialize(onnx_testing::NonZeroModel()));
  request.mutable_topology()->set_shorthand("2xA100");
  request.set_algorithm("heft");
  absl::StatusOr<pb::PlaceResponse> assumed = PlaceOn(server->port(), request);
  ASSERT_TRUE(assumed.ok()) << assumed.status();
  ASSERT_EQ(assumed->warnings_size(), 1);
  EXPECT_NE(assumed->warnings(0).find("tensor 'hits' dimension 1 depends on the data"), std::string::npos);
  (*request.mutable_options()->mutable_dims())["hits:1"] = 7;
  absl::StatusOr<pb::PlaceResponse> given = PlaceOn(server->port(), request);
  ASSERT_TRUE(given.ok()) << given.status();
  EXPECT_FALSE(given->cache_hit());
  EXPECT_EQ(given->warnings_size(), 0);
  EXPECT_NE(given->graph_hash(), assumed->graph_hash());
  // The same options on a graph whose costs are fixed are the request's mistake.
  request.clear_onnx();
  request.set_graph_json(testing::ReadSourceFile("examples/graphs/tiny_pipeline.json"));
  absl::StatusOr<pb::PlaceResponse> wrong = PlaceOn(server->port(), request);
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(wrong.status().message().find("apply to ONNX models"), std::string::npos);
}

TEST(Place, MeasuredCostsInTheRequestAreUsedAndCounted) {
  TempDir dir;
  auto server = StartReadyServer(TestOptions(dir.path()));
  ASSERT_NE(server, nullptr);
  pb::PlaceRequest request;
  request.set_onnx(testing::ReadSourceFile("tests/data/corpus/vgg16.onnx"));
  request.mutable_topology()->set_shorthand("1xA100");
  request.set_algorithm("single_device");
  absl::StatusOr<pb::PlaceResponse> modelled = PlaceOn(server->port(), request);
  ASSERT_TRUE(modelled.ok()) << modelled.status();
  EXPECT_EQ(modelled->cost_sources().measured_operators(), 0);
  EXPECT_EQ(modelled->cost_sources().modelled_operators(), 38);
  request.mutable_options()->set_costs(R"({"/features/features.0/Conv": {"*": 0.5}})");
  absl::StatusOr<pb::PlaceResponse> measured = PlaceOn(server->port(), request);
  ASSERT_TRUE(measured.ok()) << measured.status();
  EXPECT_FALSE(measured->cache_hit());
  EXPECT_EQ(measured->cost_sources().measured_operators(), 1);
  EXPECT_GT(measured->score().value(), 0.5);
  request.mutable_options()->set_costs(R"({"x": {"*": "soon"}})");
  absl::StatusOr<pb::PlaceResponse> bad = PlaceOn(server->port(), request);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("options.costs: key 'x' / '*'"), std::string::npos) << bad.status();
}

TEST(Place, AProfilerTraceInTheRequestIsMatchedByModuleAndKeyedByItsKind) {
  TempDir dir;
  auto server = StartReadyServer(TestOptions(dir.path()));
  ASSERT_NE(server, nullptr);
  pb::PlaceRequest request;
  request.set_onnx(testing::ReadSourceFile("tests/data/torch_trace/resnet18_b1.onnx"));
  request.mutable_topology()->set_shorthand("1xCPU");
  request.set_algorithm("single_device");
  request.mutable_options()->set_costs(testing::ReadSourceFile("tests/data/torch_trace/resnet18_b1_cpu1.trace.json"));
  request.mutable_options()->set_costs_kind("cpu");
  absl::StatusOr<pb::PlaceResponse> measured = PlaceOn(server->port(), request);
  ASSERT_TRUE(measured.ok()) << measured.status();
  EXPECT_EQ(measured->cost_sources().modelled_operators(), 16);
  EXPECT_EQ(measured->cost_sources().measured_operators(), 49);
  // The same trace said to be an A100's is another question, not the cached answer.
  request.mutable_topology()->set_shorthand("1xCPU+1xA100");
  request.mutable_options()->set_costs_kind("A100");
  absl::StatusOr<pb::PlaceResponse> other = PlaceOn(server->port(), request);
  ASSERT_TRUE(other.ok()) << other.status();
  EXPECT_FALSE(other->cache_hit());
  request.mutable_options()->set_costs(R"([{"ph": "X", "name": "module:#0", "ts": 0}])");
  absl::StatusOr<pb::PlaceResponse> bad = PlaceOn(server->port(), request);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("trace event 0"), std::string::npos) << bad.status();
}

TEST(Discovery, ListAlgorithmsAndServerInfo) {
  TempDir dir;
  ServerOptions options = TestOptions(dir.path());
  options.policy_device = "cpu";
  options.policy_loader = [](const std::string& preference) -> absl::StatusOr<PolicyRuntime> {
    return PolicyRuntime{preference, "test-runtime"};
  };
  auto server = StartReadyServer(options);
  ASSERT_NE(server, nullptr);
  auto stub = StubFor(server->port());

  pb::ListAlgorithmsResponse list;
  auto c1 = ContextWithin();
  ASSERT_TRUE(stub->ListAlgorithms(c1.get(), pb::ListAlgorithmsRequest(), &list).ok());
  EXPECT_EQ(list.default_algorithm(), "auto");
  bool has_auto = false, has_heft = false;
  for (const pb::AlgorithmInfo& a : list.algorithms()) {
    has_auto = has_auto || a.name() == "auto";
    has_heft = has_heft || a.name() == "heft";
    EXPECT_FALSE(a.description().empty()) << a.name();
    EXPECT_GT(a.objectives_size(), 0) << a.name();
  }
  EXPECT_TRUE(has_auto);
  EXPECT_TRUE(has_heft);

  pb::GetServerInfoResponse info;
  auto c2 = ContextWithin();
  ASSERT_TRUE(stub->GetServerInfo(c2.get(), pb::GetServerInfoRequest(), &info).ok());
  EXPECT_TRUE(info.ready());
  EXPECT_EQ(info.version(), ServerVersion());
  EXPECT_EQ(info.policy_version(), PolicyVersion());
  EXPECT_EQ(info.policy_device(), "cpu");
  EXPECT_EQ(info.torch_version(), "test-runtime");
  EXPECT_EQ(info.limits().max_operators(), options.limits.max_operators);
  EXPECT_EQ(info.limits().max_message_bytes(), int64_t{256} << 20);
  EXPECT_EQ(info.limits().worker_threads(), 2);
}

}  // namespace
}  // namespace placement::server
