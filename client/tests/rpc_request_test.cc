// What placectl sends: the graph file's bytes as they are, the x-graph-hash header over exactly those bytes,
// the cluster flags, and gRPC failures turned into messages and exit codes.
#include "client/rpc_request.h"

#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "client/exit_codes.h"
#include "graph/canonical.h"

namespace placement::cli {
namespace {

const std::string kSource = PLACEMENT_SOURCE_DIR;

std::string FileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(RpcRequest, Sha256HexIsTheStandardDigest) {
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(RpcRequest, OnnxIsSentAsItsBytesWithTheirHash) {
  const std::string path = kSource + "/tests/data/corpus/resnet50.onnx";
  absl::StatusOr<GraphPayload> payload = ReadGraphPayload(path);
  ASSERT_TRUE(payload.ok()) << payload.status();
  EXPECT_TRUE(payload->onnx);
  EXPECT_EQ(payload->bytes, FileBytes(path));
  EXPECT_EQ(payload->sha256, Sha256Hex(FileBytes(path)));

  placement::v1::PlaceRequest request;
  GraphLoadOptions load;
  load.batch = 8;
  SetGraph(*payload, load, &request);
  EXPECT_EQ(request.onnx(), payload->bytes);
  EXPECT_EQ(request.options().batch_size(), 8);
  EXPECT_FALSE(request.options().training());
}

TEST(RpcRequest, JsonIsSentAsTextAndSimulateToo) {
  const std::string path = kSource + "/examples/graphs/tiny_pipeline.json";
  absl::StatusOr<GraphPayload> payload = ReadGraphPayload(path);
  ASSERT_TRUE(payload.ok()) << payload.status();
  EXPECT_FALSE(payload->onnx);
  placement::v1::SimulateRequest request;
  GraphLoadOptions load;
  load.training = true;
  load.optimizer = "sgd";
  SetGraph(*payload, load, &request);
  EXPECT_EQ(request.graph_json(), FileBytes(path));
  EXPECT_TRUE(request.options().training());
  EXPECT_EQ(request.options().optimizer(), "sgd");
}

TEST(RpcRequest, MissingFileIsNotFound) {
  EXPECT_EQ(ReadGraphPayload("/nonexistent/model.onnx").status().code(), absl::StatusCode::kNotFound);
}

TEST(RpcRequest, TopologyFromOneFlagOnly) {
  placement::v1::Topology t;
  ASSERT_TRUE(SetTopology("", "4xA100", &t).ok());
  EXPECT_EQ(t.shorthand(), "4xA100");
  placement::v1::Topology both;
  EXPECT_EQ(SetTopology("cluster.json", "4xA100", &both).code(), absl::StatusCode::kInvalidArgument);
  placement::v1::Topology none;
  ASSERT_TRUE(SetTopology("", "", &none).ok());
  EXPECT_EQ(none.source_case(), placement::v1::Topology::SOURCE_NOT_SET);
}

TEST(RpcRequest, FailuresKeepTheirCodeAndUnavailableNamesTheAddress) {
  const absl::Status unreachable =
      FromGrpc(grpc::Status(grpc::StatusCode::UNAVAILABLE, "failed to connect to all addresses"), "10.0.0.1:7");
  EXPECT_EQ(unreachable.message(), "cannot reach the server at 10.0.0.1:7: failed to connect to all addresses");
  EXPECT_EQ(ExitCodeFor(unreachable), kExitUnavailable);
  const absl::Status bad = FromGrpc(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "graph: cycle"), "h:1");
  EXPECT_EQ(bad.message(), "graph: cycle");
  EXPECT_EQ(ExitCodeFor(bad), kExitBadInput);
  EXPECT_EQ(ExitCodeFor(FromGrpc(grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED, "limit"), "h:1")), kExitInfeasible);
  EXPECT_EQ(ExitCodeFor(FromGrpc(grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED, "late"), "h:1")), kExitInfeasible);
  EXPECT_EQ(ExitCodeFor(FromGrpc(grpc::Status(grpc::StatusCode::INTERNAL, "bug"), "h:1")), kExitInternal);
}

}  // namespace
}  // namespace placement::cli
