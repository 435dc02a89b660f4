// placement_probe: a small client of placement_server, for scripts and for trying the service by hand.
//
//   placement_probe [--server HOST:PORT] place GRAPH [--devices SPEC | --topology FILE] [--objective O]
//                   [--algorithm A] [--budget_ms N] [--training] [--batch N] [--seq N] [--stream]
//   placement_probe [--server HOST:PORT] health [--service NAME]     exit 0 when SERVING
//   placement_probe [--server HOST:PORT] info | algorithms
//   with [--tls] [--tls_ca FILE] [--tls_cert FILE --tls_key FILE] [--token_file FILE | $PLACEMENT_AUTH_TOKEN]
//
// GRAPH is an ONNX model or a JSON graph (placement.graph/v1 or Tarnawski), sent as bytes: the server reads it.
// place sends the `x-graph-hash` metadata (lower-case hex SHA-256 of those bytes, as placectl does), so that a
// balancer hashing on it (deploy/nginx) sends repeats of a graph to the replica whose cache holds the answer.

#include <iostream>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_format.h"
#include "client/security/security_flags.h"
#include "graph/canonical.h"
#include "graph/file_io.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "placement/v1/placement.grpc.pb.h"
#include "proto/placement/v1/metadata.h"

ABSL_FLAG(std::string, server, "127.0.0.1:50051", "the server's address");
ABSL_FLAG(std::string, devices, "", "cluster shorthand, e.g. 4xA100 (default: the devices the graph carries)");
ABSL_FLAG(std::string, topology, "", "cluster JSON file");
ABSL_FLAG(std::string, objective, "step_time", "step_time | throughput | latency");
ABSL_FLAG(std::string, algorithm, "auto", "a placer name (see `algorithms`)");
ABSL_FLAG(int64_t, budget_ms, 0, "placer budget; 0: the server's default");
ABSL_FLAG(int64_t, deadline_ms, 60000, "gRPC deadline of the call");
ABSL_FLAG(bool, training, false, "place one training step");
ABSL_FLAG(int64_t, batch, 0, "ONNX batch size");
ABSL_FLAG(int64_t, seq, 0, "ONNX sequence length");
ABSL_FLAG(bool, stream, false, "place: use PlaceStream and print the progress");
ABSL_FLAG(bool, graph_hash_header, true,
          "place: send the x-graph-hash metadata (SHA-256 hex of the graph bytes) that balancers route on");
ABSL_FLAG(std::string, service, "placement.v1.PlacementService", "health: the service to ask about (\"\" = liveness)");

namespace {

namespace pb = ::placement::v1;

constexpr char kUsage[] =
    "placement_probe [--server HOST:PORT] place GRAPH [--devices SPEC | --topology FILE] [--objective O] "
    "[--algorithm A] [--budget_ms N] [--training] [--stream] [--nograph_hash_header]\n"
    "placement_probe [--server HOST:PORT] health [--service NAME] | info | algorithms";

// The routing key a balancer hashes on: lower-case hex SHA-256 of the graph payload exactly as sent.
void Deadline(grpc::ClientContext* context) {
  context->set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(absl::GetFlag(FLAGS_deadline_ms)));
}

int Failed(const grpc::Status& status) {
  std::cerr << "placement_probe: " << status.error_code() << " " << status.error_message() << "\n";
  return 1;
}

void PrintAnswer(const pb::PlaceResponse& r) {
  const pb::Score& s = r.score();
  std::cout << absl::StrFormat("algorithm      %s\nvalue          %.6g %s (lower bound %.6g, ratio %.3f%s)\n",
                               r.algorithm(), s.value(), s.time_unit(), s.lower_bound(), s.ratio(),
                               r.proven_optimal() ? ", optimal" : "");
  std::cout << absl::StrFormat("graph          %d operators, %d devices, hash %s\n", r.num_operators(), r.num_devices(),
                               r.graph_hash().substr(0, 16));
  std::cout << absl::StrFormat("cache_hit      %s\nrequest_id     %s\ncomputed in    %.3f s\n",
                               r.cache_hit() ? "true" : "false", r.request_id(), r.compute_seconds());
  for (const pb::DeviceScore& d : s.devices()) {
    std::cout << absl::StrFormat("  %-14s busy %.6g  load %.6g  peak %d / %d bytes  utilization %.0f%%\n", d.device(),
                                 d.busy_seconds(), d.load_seconds(), d.peak_memory_bytes(), d.capacity_bytes(),
                                 100 * d.utilization());
  }
  for (const std::string& w : r.warnings()) std::cout << "warning: " << w << "\n";
}

int Place(pb::PlacementService::Stub& stub, const std::string& graph_path) {
  pb::PlaceRequest request;
  absl::StatusOr<std::string> read = placement::ReadWholeFile(graph_path);
  if (!read.ok()) {
    std::cerr << "placement_probe: cannot read '" << graph_path << "'\n";
    return 2;
  }
  const std::string& bytes = *read;
  const size_t first = bytes.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && bytes[first] == '{') {
    request.set_graph_json(bytes);
  } else {
    request.set_onnx(bytes);
  }
  if (!absl::GetFlag(FLAGS_devices).empty()) request.mutable_topology()->set_shorthand(absl::GetFlag(FLAGS_devices));
  if (!absl::GetFlag(FLAGS_topology).empty()) {
    absl::StatusOr<std::string> json = placement::ReadWholeFile(absl::GetFlag(FLAGS_topology));
    if (!json.ok()) {
      std::cerr << "placement_probe: cannot read '" << absl::GetFlag(FLAGS_topology) << "'\n";
      return 2;
    }
    request.mutable_topology()->set_json(*json);
  }
  const std::string objective = absl::GetFlag(FLAGS_objective);
  request.set_objective(objective == "throughput" ? pb::OBJECTIVE_THROUGHPUT
                        : objective == "latency"  ? pb::OBJECTIVE_LATENCY
                                                  : pb::OBJECTIVE_STEP_TIME);
  request.set_algorithm(absl::GetFlag(FLAGS_algorithm));
  request.set_budget_ms(absl::GetFlag(FLAGS_budget_ms));
  request.mutable_options()->set_training(absl::GetFlag(FLAGS_training));
  request.mutable_options()->set_batch_size(absl::GetFlag(FLAGS_batch));
  request.mutable_options()->set_sequence_length(absl::GetFlag(FLAGS_seq));

  grpc::ClientContext context;
  Deadline(&context);
  if (absl::GetFlag(FLAGS_graph_hash_header)) context.AddMetadata(pb::kGraphHashHeader, placement::Sha256Hex(bytes));
  if (!absl::GetFlag(FLAGS_stream)) {
    pb::PlaceResponse response;
    const grpc::Status status = stub.Place(&context, request, &response);
    if (!status.ok()) return Failed(status);
    PrintAnswer(response);
    return 0;
  }
  std::unique_ptr<grpc::ClientReader<pb::PlaceProgress>> reader = stub.PlaceStream(&context, request);
  pb::PlaceProgress progress;
  while (reader->Read(&progress)) {
    std::cout << absl::StrFormat("[%7.3f s] %s %s\n", progress.elapsed_seconds(),
                                 pb::PlaceProgress::Kind_Name(progress.kind()), progress.message());
    if (progress.kind() == pb::PlaceProgress::KIND_RESULT) PrintAnswer(progress.answer());
  }
  const grpc::Status status = reader->Finish();
  return status.ok() ? 0 : Failed(status);
}

int Health(const std::shared_ptr<grpc::Channel>& channel) {
  auto stub = grpc::health::v1::Health::NewStub(channel);
  grpc::health::v1::HealthCheckRequest request;
  request.set_service(absl::GetFlag(FLAGS_service));
  grpc::health::v1::HealthCheckResponse response;
  grpc::ClientContext context;
  Deadline(&context);
  const grpc::Status status = stub->Check(&context, request, &response);
  if (!status.ok()) return Failed(status);
  std::cout << grpc::health::v1::HealthCheckResponse::ServingStatus_Name(response.status()) << "\n";
  return response.status() == grpc::health::v1::HealthCheckResponse::SERVING ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(kUsage);
  std::vector<char*> args = absl::ParseCommandLine(argc, argv);
  if (args.size() < 2) {
    std::cerr << kUsage << "\n";
    return 2;
  }
  const std::string command = args[1];
  // Answers for 100k-operator graphs are megabytes (MakeSecureChannel receives up to 256 MiB).
  absl::StatusOr<std::shared_ptr<grpc::Channel>> secure = placement::client::MakeSecureChannel(
      absl::GetFlag(FLAGS_server), placement::client::ClientSecurityOptionsFromFlags());
  if (!secure.ok()) {
    std::cerr << "placement_probe: " << secure.status().message() << "\n";
    return 2;
  }
  std::shared_ptr<grpc::Channel> channel = *std::move(secure);
  auto stub = pb::PlacementService::NewStub(channel);
  if (command == "place" && args.size() == 3) return Place(*stub, args[2]);
  if (command == "health" && args.size() == 2) return Health(channel);
  if (command == "info" && args.size() == 2) {
    pb::GetServerInfoResponse info;
    grpc::ClientContext context;
    Deadline(&context);
    const grpc::Status status = stub->GetServerInfo(&context, pb::GetServerInfoRequest(), &info);
    if (!status.ok()) return Failed(status);
    std::cout << info.DebugString();
    return 0;
  }
  if (command == "algorithms" && args.size() == 2) {
    pb::ListAlgorithmsResponse list;
    grpc::ClientContext context;
    Deadline(&context);
    const grpc::Status status = stub->ListAlgorithms(&context, pb::ListAlgorithmsRequest(), &list);
    if (!status.ok()) return Failed(status);
    for (const pb::AlgorithmInfo& a : list.algorithms())
      std::cout << absl::StrFormat("%-16s %s\n", a.name(), a.description());
    return 0;
  }
  std::cerr << kUsage << "\n";
  return 2;
}
