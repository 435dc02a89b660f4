#include "client/plan_json.h"

#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace placement::cli {
namespace {

nlohmann::json ParseOrNull(absl::string_view text) {
  return nlohmann::json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
}

bool IsPlan(const nlohmann::json& j) { return j.is_object() && j.contains("stages") && j["stages"].is_array(); }

int64_t IntOr(const nlohmann::json& j, const char* key, int64_t fallback) {
  return j.contains(key) && j[key].is_number_integer() ? j[key].get<int64_t>() : fallback;
}

absl::Status AddStage(const nlohmann::json& stage, const Graph& graph, const Topology& topology, ParallelPlan& plan) {
  const int32_t s = plan.num_stages();
  if (!stage.is_object() || !stage.contains("devices") || !stage.contains("operators") ||
      !stage["devices"].is_array() || !stage["operators"].is_array()) {
    return absl::InvalidArgumentError(absl::StrCat("stage ", s + 1, " needs 'devices' and 'operators' arrays"));
  }
  plan.stages.emplace_back();
  for (const nlohmann::json& name : stage["devices"]) {
    const DeviceId d = name.is_string() ? topology.FindDevice(name.get<std::string>()) : kNone;
    if (d == kNone)
      return absl::InvalidArgumentError(
          absl::StrCat("stage ", s + 1, " runs on ", name.dump(), ", which the cluster loaded here does not have"));
    plan.stages.back().devices.push_back(d);
  }
  for (const nlohmann::json& name : stage["operators"]) {
    const OpId op = name.is_string() ? graph.FindOp(name.get<std::string>()) : kNone;
    if (op == kNone)
      return absl::InvalidArgumentError(
          absl::StrCat("stage ", s + 1, " holds ", name.dump(), ", which the graph loaded here does not have"));
    plan.stage_of_op[op] = s;
  }
  return absl::OkStatus();
}

}  // namespace

std::optional<PlanBatch> PlanBatchOf(absl::string_view text) {
  const nlohmann::json j = ParseOrNull(text);
  if (!IsPlan(j)) return std::nullopt;
  PlanBatch b;
  b.micro_batch_size = IntOr(j, "micro_batch_size", 1);
  b.global_batch = IntOr(j, "global_batch", 0);
  return b;
}

absl::StatusOr<std::optional<PlanFile>> ParsePlanJson(absl::string_view text, const Graph& graph,
                                                      const Topology& topology) {
  const nlohmann::json j = ParseOrNull(text);
  if (!IsPlan(j)) return std::optional<PlanFile>();
  PlanFile file;
  file.plan.stage_of_op.assign(graph.num_ops(), -1);
  for (const nlohmann::json& stage : j["stages"]) {
    if (absl::Status s = AddStage(stage, graph, topology, file.plan); !s.ok()) return s;
  }
  for (OpId op = 0; op < graph.num_ops(); ++op) {
    if (file.plan.stage_of_op[op] < 0)
      return absl::InvalidArgumentError(absl::StrCat("no stage holds operator '", graph.name(op), "'"));
  }
  absl::StatusOr<Schedule> schedule =
      ParseSchedule(j.contains("schedule") && j["schedule"].is_string() ? j["schedule"].get<std::string>() : "");
  if (!schedule.ok()) return schedule.status();
  file.plan.schedule = *schedule;
  file.micro_batch_size = IntOr(j, "micro_batch_size", 1);
  // Files written before micro_batches was: global_batch counted micro-batches.
  file.plan.global_batch = j.contains("micro_batches") ? IntOr(j, "micro_batches", 0) : IntOr(j, "global_batch", 0);
  if (file.micro_batch_size < 1 || file.plan.global_batch < 0)
    return absl::InvalidArgumentError("micro_batch_size must be positive and micro_batches not negative");
  return std::optional<PlanFile>(std::move(file));
}

}  // namespace placement::cli
