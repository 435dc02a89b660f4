// The placectl commands that talk to a placement server: submit (PlaceStream, with progress), simulate
// (Simulate), algorithms (ListAlgorithms), info (GetServerInfo) and health (grpc.health.v1). Each returns the
// text to print; a failed call comes back as an absl::Status with the server's code and message (UNAVAILABLE
// naming the address when nothing answers there), which placectl maps to its exit code.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "client/graph_loader.h"
#include "client/place_command.h"
#include "client/simulate_command.h"
#include "placement/v1/placement.pb.h"

namespace placement::cli {

struct SubmitOptions {
  std::string server;
  std::string graph_path;
  GraphLoadOptions load;
  std::string topology_file;
  std::string devices;
  std::string objective = "step_time";
  std::string cost_model = "default";  // sent as it is; the server checks it
  std::string algorithm = "auto";
  std::string policy;            // the served policy to ask (PlaceRequest.policy); "" the default
  std::string deadline = "10s";  // the placer's budget; the call may take this plus transfer and decoding time
  std::string output = "table";  // table | json
  uint64_t seed = 1;
  bool skip_cache = false;
  bool progress = false;  // a progress line on stderr (overwritten in place on a terminal)
  bool progress_overwrite = false;
  std::string chart_path;  // when set, the schedule chart of the answer is written there
  PlanOptions plan;
  // A Hugging Face config.json (sent as hf_config): the plan keys the server's search holds fixed (--plan).
  std::string transformer_plan;
};

// A config.json is answered with its training plan, shown as `placectl place` shows it (submit_transformer.h).
absl::StatusOr<std::string> RunSubmit(const SubmitOptions& options);

struct RemoteSimulateOptions {
  SimulateOptions simulate;  // what `placectl simulate --local` takes
  std::string server;
  absl::Duration timeout = absl::Seconds(60);
};

absl::StatusOr<std::string> RunRemoteSimulate(const RemoteSimulateOptions& options);

absl::StatusOr<std::string> RunRemoteAlgorithms(const std::string& server, absl::Duration timeout);
absl::StatusOr<std::string> RunInfo(const std::string& server, const std::string& output, absl::Duration timeout);

// Liveness and readiness; UNAVAILABLE when the server is not ready (or cannot be reached).
absl::StatusOr<std::string> RunHealth(const std::string& server, absl::Duration timeout);

// A server's answer as JSON (field names as in the .proto, every field printed).
absl::StatusOr<std::string> MessageJson(const google::protobuf::Message& message);

// "policies       NAME (default): VERSION from FILE on DEVICE", a line per served policy.
std::string DescribePolicies(const google::protobuf::RepeatedPtrField<placement::v1::ServedPolicy>& policies);

}  // namespace placement::cli
