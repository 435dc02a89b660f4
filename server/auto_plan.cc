#include "server/auto_plan.h"

#include <algorithm>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "policy/parallel/batch_split.h"

namespace placement::server {
namespace {

namespace pb = ::placement::v1;

bool IsOneOf(const std::string& value, std::initializer_list<const char*> spellings) {
  const std::string lower = absl::AsciiStrToLower(value);
  for (const char* s : spellings) {
    if (lower == s) return true;
  }
  return false;
}

// What parallelism "auto" cannot take, or "" when it takes the request.
std::string AutoConflict(const pb::PlaceRequest& r) {
  if (!r.options().training()) return "it plans a training step: set options.training";
  if (r.objective() == pb::OBJECTIVE_LATENCY) return "it answers the fastest training step, not objective LATENCY";
  if (!IsOneOf(r.algorithm(), {"", "auto"})) return "algorithm: the plans come from auto";
  if (!IsOneOf(r.cost_model(), {"", "default"})) return "cost_model: the plans are scored by the default model";
  if (r.global_batch() != 0) return "global_batch: the global batch is options.batch_size, in samples";
  if (!IsOneOf(r.schedule(), {"", "1f1b"})) return "schedule: give parallelism data, pipeline or hybrid for gpipe";
  if (r.graph_source_case() != pb::PlaceRequest::kOnnx) return "it binds an ONNX model's batch: send onnx";
  return "";
}

// Whether the request leaves a training step's plan to the service: nothing of the plan set, several accelerators.
bool LeavesPlanToService(const pb::PlaceRequest& r) {
  if (!r.parallelism().empty() || r.objective() != pb::OBJECTIVE_STEP_TIME || !AutoConflict(r).empty()) return false;
  if (!r.has_topology() || r.topology().source_case() == pb::Topology::SOURCE_NOT_SET) return false;
  const absl::StatusOr<Topology> topology = ParseTopology(r.topology());
  return topology.ok() && Accelerators(*topology) > 1;  // a bad topology is the decoder's to report
}

// micro_batch_size splits the global batch of the default plan only; any other request would drop it unread,
// and an answer that ignored it would look like its answer.
absl::Status NotAutoPlanned(const pb::PlaceRequest& r) {
  return absl::InvalidArgumentError(absl::StrCat(
      "micro_batch_size: ", r.micro_batch_size(),
      " applies to the default plan of a training step (parallelism auto, or an ONNX model's training step on several "
      "accelerators with parallelism, algorithm, cost_model, schedule and global_batch unset), which splits "
      "options.batch_size into micro-batches; ",
      IsOneOf(r.parallelism(), {"data", "pipeline", "hybrid"})
          ? "a plan of parallelism data, pipeline or hybrid runs micro-batches of options.batch_size, global_batch "
            "of them"
          : "this request places one run of the graph at options.batch_size"));
}

}  // namespace

absl::StatusOr<std::optional<pb::PlaceRequest>> PlanRequestFor(const pb::PlaceRequest& request) {
  if (request.micro_batch_size() < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("micro_batch_size: must not be negative (got ", request.micro_batch_size(), ")"));
  }
  const bool asked = IsOneOf(request.parallelism(), {"auto"});
  if (asked) {
    if (const std::string conflict = AutoConflict(request); !conflict.empty())
      return absl::InvalidArgumentError(absl::StrCat("parallelism auto: ", conflict));
  } else if (!LeavesPlanToService(request)) {
    if (request.micro_batch_size() != 0) return NotAutoPlanned(request);
    return std::nullopt;
  }
  pb::PlaceRequest planned = request;
  planned.set_parallelism("hybrid");
  planned.set_objective(pb::OBJECTIVE_THROUGHPUT);
  // Read from the request as sent (SplitGlobalBatchOf); the plan's key holds the split it makes.
  planned.clear_micro_batch_size();
  return planned;
}

absl::StatusOr<bool> SplitGlobalBatchOf(const pb::PlaceRequest& asked, const DecodedInput& input,
                                        pb::PlaceRequest& planned, std::string* note) {
  constexpr BatchWords kFields{"options.batch_size", "micro_batch_size"};
  const int32_t devices = Accelerators(input.topology);
  const absl::StatusOr<BatchSplit> split =
      SplitStepBatch(asked.options().batch_size(), asked.micro_batch_size(), devices, input.fixed_batch, kFields);
  if (!split.ok()) return split.status();
  planned.set_global_batch(split->micro_batches);
  planned.mutable_options()->set_batch_size(split->micro_batch);
  *note = FixedBatchNote(*split, input.fixed_batch, devices, kFields);
  return split->micro_batch != input.samples_per_run;
}

}  // namespace placement::server
