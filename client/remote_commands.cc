#include "client/remote_commands.h"

#include <chrono>
#include <fstream>
#include <iostream>
#include <memory>

#include <google/protobuf/util/json_util.h>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "client/answer_chart.h"
#include "client/answer_report.h"
#include "client/chart_file.h"
#include "client/flag_values.h"
#include "client/rpc_request.h"
#include "client/server_channel.h"
#include "client/submit_transformer.h"
#include "graph/file_io.h"
#include "graph/units.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "placement/v1/placement.grpc.pb.h"

namespace placement::cli {
namespace {

namespace pb = ::placement::v1;
namespace health = ::grpc::health::v1;

// The server's readiness service (server/placement_service.h: kServiceName).
constexpr char kReadinessService[] = "placement.v1.PlacementService";
// Beyond the placer's budget, what a call may spend on sending, decoding a large model and the answer's way back.
constexpr absl::Duration kCallAllowance = absl::Seconds(30);

void SetDeadline(absl::Duration timeout, grpc::ClientContext* context) {
  context->set_deadline(std::chrono::system_clock::now() + absl::ToChronoMilliseconds(timeout));
}

absl::Status CheckOutput(const std::string& output) {
  if (output == "table" || output == "json") return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("--output '", output, "' is not one of table, json"));
}

// The progress of one PlaceStream on stderr: one line per event, or one line rewritten in place on a terminal.
class ProgressLine {
 public:
  explicit ProgressLine(bool overwrite) : overwrite_(overwrite) {}
  ~ProgressLine() {
    if (overwrite_ && shown_) std::cerr << "\r\033[K" << std::flush;
  }

  void Show(const pb::PlaceProgress& p) {
    // An improvement's own message repeats what the "best" part says; the line keeps the phase it came in.
    if (p.kind() == pb::PlaceProgress::KIND_IMPROVED) {
      best_ = absl::StrCat(" | best ", ValueText(p.answer().score()), " (", p.answer().algorithm(), ")");
    } else {
      phase_ = p.message();
    }
    const std::string line = absl::StrFormat("[%6.1fs] %s%s", p.elapsed_seconds(), phase_, best_);
    if (overwrite_) {
      std::cerr << "\r\033[K" << line << std::flush;
    } else {
      std::cerr << line << "\n";
    }
    shown_ = true;
  }

 private:
  static std::string ValueText(const pb::Score& s) {
    return s.time_unit() == "s" ? FormatSeconds(s.value()) : absl::StrFormat("%.4g %s", s.value(), s.time_unit());
  }

  const bool overwrite_;
  bool shown_ = false;
  std::string phase_;
  std::string best_;
};

}  // namespace

absl::StatusOr<std::string> RunSubmit(const SubmitOptions& o) {
  if (absl::Status s = CheckOutput(o.output); !s.ok()) return s;
  absl::StatusOr<pb::Objective> objective = ObjectiveFromFlag(o.objective);
  if (!objective.ok()) return objective.status();
  absl::StatusOr<absl::Duration> budget = ParsePositiveDuration("deadline", o.deadline);
  if (!budget.ok()) return budget.status();
  if (absl::Status s = CheckChartApplies(o.chart_path, o.cost_model); !s.ok()) return s;
  absl::StatusOr<GraphPayload> payload = ReadGraphPayload(o.graph_path);
  if (!payload.ok()) return payload.status();
  if (absl::Status s = CheckTransformerSubmit(*payload, o); !s.ok()) return s;

  pb::PlaceRequest request;
  SetGraph(*payload, o.load, &request);
  request.set_transformer_plan(o.transformer_plan);
  if (absl::Status s = SetTopology(o.topology_file, o.devices, request.mutable_topology()); !s.ok()) return s;
  request.set_objective(*objective);
  request.set_cost_model(o.cost_model);
  request.set_algorithm(o.algorithm);
  SetPlanRequest(o.plan, &request);
  request.set_policy(o.policy);
  request.set_budget_ms(absl::ToInt64Milliseconds(*budget));
  request.set_seed(o.seed);
  request.set_skip_cache(o.skip_cache);

  absl::StatusOr<std::shared_ptr<grpc::Channel>> channel = MakeServerChannel(o.server);
  if (!channel.ok()) return channel.status();
  std::unique_ptr<pb::PlacementService::Stub> stub = pb::PlacementService::NewStub(*channel);
  grpc::ClientContext context;
  SetDeadline(*budget + kCallAllowance, &context);
  AddGraphHashHeader(*payload, &context);
  std::optional<pb::PlaceResponse> answer;
  grpc::Status status;
  {
    std::optional<ProgressLine> progress;
    if (o.progress) progress.emplace(o.progress_overwrite);
    std::unique_ptr<grpc::ClientReader<pb::PlaceProgress>> reader = stub->PlaceStream(&context, request);
    pb::PlaceProgress message;
    while (reader->Read(&message)) {
      if (message.kind() == pb::PlaceProgress::KIND_RESULT) {
        answer = std::move(*message.mutable_answer());
      } else if (progress.has_value()) {
        progress->Show(message);
      }
    }
    status = reader->Finish();
  }
  if (!status.ok()) return FromGrpc(status, o.server);
  if (!answer.has_value()) return absl::InternalError("the server ended the stream without an answer");
  if (payload->hf_config) return TransformerAnswerText(*answer, payload->bytes, o.graph_path, o.output);

  if (!o.chart_path.empty()) {
    if (absl::Status s = WriteAnswerChart(o.chart_path, {o.graph_path, o.load, o.topology_file, o.devices}, *answer);
        !s.ok()) {
      return s;
    }
  }
  return o.output == "json" ? PlaceAnswerJson(*answer) : PlaceAnswerTable(*answer);
}

absl::StatusOr<std::string> RunRemoteSimulate(const RemoteSimulateOptions& remote) {
  const SimulateOptions& o = remote.simulate;
  if (absl::Status s = CheckOutput(o.output); !s.ok()) return s;
  if (o.placement_path.empty()) return absl::InvalidArgumentError("simulate needs --placement FILE");
  absl::StatusOr<pb::Objective> objective = ObjectiveFromFlag(o.objective);
  if (!objective.ok()) return objective.status();
  absl::StatusOr<GraphPayload> payload = ReadGraphPayload(o.graph_path);
  if (!payload.ok()) return payload.status();
  if (payload->hf_config) {  // the server plans a config's training step; its operator graph is made here
    return absl::InvalidArgumentError(absl::StrCat(
        o.graph_path, ": a Hugging Face config.json is simulated locally (without --server), or planned with submit"));
  }
  absl::StatusOr<std::string> placement = ReadWholeFile(o.placement_path);
  if (!placement.ok()) return placement.status();

  pb::SimulateRequest request;
  SetGraph(*payload, o.load, &request);
  if (absl::Status s = SetTopology(o.topology_file, o.devices, request.mutable_topology()); !s.ok()) return s;
  request.set_objective(*objective);
  request.set_cost_model(o.cost_model);
  request.set_placement_json(*std::move(placement));
  request.mutable_simulator()->set_preset(o.simulator);
  request.mutable_simulator()->set_priority(o.priority);

  absl::StatusOr<std::shared_ptr<grpc::Channel>> channel = MakeServerChannel(remote.server);
  if (!channel.ok()) return channel.status();
  std::unique_ptr<pb::PlacementService::Stub> stub = pb::PlacementService::NewStub(*channel);
  grpc::ClientContext context;
  SetDeadline(remote.timeout, &context);
  AddGraphHashHeader(*payload, &context);
  pb::SimulateResponse response;
  const grpc::Status status = stub->Simulate(&context, request, &response);
  if (!status.ok()) return FromGrpc(status, remote.server);
  if (!o.chart_path.empty()) {  // drawn here, from the same files the request was made of
    if (absl::StatusOr<std::string> local = RunSimulate(o); !local.ok()) return local.status();
  }
  return o.output == "json" ? SimulateAnswerJson(response) : SimulateAnswerTable(response);
}

absl::StatusOr<std::string> RunRemoteAlgorithms(const std::string& server, absl::Duration timeout) {
  absl::StatusOr<std::shared_ptr<grpc::Channel>> channel = MakeServerChannel(server);
  if (!channel.ok()) return channel.status();
  std::unique_ptr<pb::PlacementService::Stub> stub = pb::PlacementService::NewStub(*channel);
  grpc::ClientContext context;
  SetDeadline(timeout, &context);
  pb::ListAlgorithmsResponse response;
  const grpc::Status status = stub->ListAlgorithms(&context, pb::ListAlgorithmsRequest(), &response);
  if (!status.ok()) return FromGrpc(status, server);
  std::string out = absl::StrFormat("%-16s %-28s %s\n", "algorithm", "objectives", "description");
  for (const pb::AlgorithmInfo& a : response.algorithms()) {
    std::string models;  // the cost models other than the default, as `placectl algorithms --local` shows them
    for (const std::string& m : a.cost_models()) {
      if (m != "default") absl::StrAppend(&models, models.empty() ? "(" : ",", m);
    }
    if (!models.empty()) models += ")";
    const std::string objectives = absl::StrJoin(a.objectives(), ",", [&](std::string* s, int o) {
      absl::StrAppend(s, absl::AsciiStrToLower(pb::Objective_Name(o).substr(sizeof("OBJECTIVE_") - 1)), models);
    });
    absl::StrAppend(&out, absl::StrFormat("%-16s %-28s %s\n", a.name(), objectives, a.description()));
  }
  absl::StrAppend(&out, "default: ", response.default_algorithm(), "\n");
  return out;
}

absl::StatusOr<std::string> MessageJson(const google::protobuf::Message& message) {
  std::string json;
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  if (!google::protobuf::util::MessageToJsonString(message, &json, options).ok()) {
    return absl::InternalError("cannot render the server's answer as JSON");
  }
  return json;
}

std::string DescribePolicies(const google::protobuf::RepeatedPtrField<pb::ServedPolicy>& policies) {
  std::string out;
  for (const pb::ServedPolicy& p : policies) {
    absl::StrAppend(&out, out.empty() ? "policies       " : "               ", p.name(),
                    p.is_default() ? " (default)" : "", ": ", p.version(), " from ", p.weights(), " on ", p.device(),
                    "\n");
  }
  return out;
}

absl::StatusOr<std::string> RunInfo(const std::string& server, const std::string& output, absl::Duration timeout) {
  if (absl::Status s = CheckOutput(output); !s.ok()) return s;
  absl::StatusOr<std::shared_ptr<grpc::Channel>> channel = MakeServerChannel(server);
  if (!channel.ok()) return channel.status();
  std::unique_ptr<pb::PlacementService::Stub> stub = pb::PlacementService::NewStub(*channel);
  grpc::ClientContext context;
  SetDeadline(timeout, &context);
  pb::GetServerInfoResponse info;
  const grpc::Status status = stub->GetServerInfo(&context, pb::GetServerInfoRequest(), &info);
  if (!status.ok()) return FromGrpc(status, server);
  if (output == "json") return MessageJson(info);
  const pb::ServerLimits& l = info.limits();
  std::string out;
  absl::StrAppend(&out, "server         ", server, "\n");
  absl::StrAppend(&out, "version        ", info.version(), "\n");
  absl::StrAppend(&out, "policy         ", info.policy_version(), " on ",
                  info.policy_device().empty() ? "(not loaded)" : info.policy_device(),
                  info.torch_version().empty() ? "" : absl::StrCat(", torch ", info.torch_version()), "\n");
  absl::StrAppend(&out, "ready          ", info.ready() ? "yes" : "no", "\n");
  absl::StrAppend(&out, "cache          ", FormatBytes(static_cast<double>(info.cache_capacity_bytes())), "\n");
  absl::StrAppend(&out, "limits         ", l.max_operators(), " operators, ", l.max_edges(), " edges, ",
                  l.max_devices(), " devices, ", FormatBytes(static_cast<double>(l.max_message_bytes())),
                  " per message\n");
  absl::StrAppend(&out, "budget         ", l.default_budget_ms(), " ms by default, at most ", l.max_budget_ms(),
                  " ms\n");
  absl::StrAppend(&out, "workers        ", l.worker_threads(), " threads, up to ", l.max_queued_requests(),
                  " queued\n");
  absl::StrAppend(&out, DescribePolicies(info.policies()));
  return out;
}

absl::StatusOr<std::string> RunHealth(const std::string& server, absl::Duration timeout) {
  absl::StatusOr<std::shared_ptr<grpc::Channel>> channel = MakeServerChannel(server);
  if (!channel.ok()) return channel.status();
  std::unique_ptr<health::Health::Stub> stub = health::Health::NewStub(*channel);
  std::string out;
  bool ready = false;
  for (const char* service : {"", kReadinessService}) {
    grpc::ClientContext context;
    SetDeadline(timeout, &context);
    health::HealthCheckRequest request;
    request.set_service(service);
    health::HealthCheckResponse response;
    const grpc::Status status = stub->Check(&context, request, &response);
    if (!status.ok()) return FromGrpc(status, server);
    const std::string state = health::HealthCheckResponse::ServingStatus_Name(response.status());
    absl::StrAppend(&out, *service == '\0' ? "liveness   " : "readiness  ", state, "\n");
    if (*service != '\0') ready = response.status() == health::HealthCheckResponse::SERVING;
  }
  if (!ready) return absl::UnavailableError(absl::StrCat("the server at ", server, " is not ready:\n", out));
  return out;
}

}  // namespace placement::cli
