#include "client/plan_json.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace placement::cli {
namespace {

int64_t IntOr(const nlohmann::json& j, const char* key, int64_t fallback) {
  return j.contains(key) && j[key].is_number_integer() ? j[key].get<int64_t>() : fallback;
}

// A JSON array of names; false when it is no array or holds something other than strings.
bool Names(const nlohmann::json& stage, const char* key, std::vector<std::string>& out) {
  if (!stage.contains(key) || !stage[key].is_array()) return false;
  for (const nlohmann::json& name : stage[key]) {
    if (!name.is_string()) return false;
    out.push_back(name.get<std::string>());
  }
  return true;
}

}  // namespace

absl::StatusOr<ParallelPlan> PlanFromNamedStages(const std::vector<NamedStage>& stages, const Graph& graph,
                                                 const Topology& topology) {
  ParallelPlan plan;
  plan.stage_of_op.assign(graph.num_ops(), -1);
  for (const NamedStage& stage : stages) {
    const int32_t s = plan.num_stages();
    plan.stages.emplace_back();
    for (const std::string& name : stage.devices) {
      const DeviceId d = topology.FindDevice(name);
      if (d == kNone)
        return absl::InvalidArgumentError(
            absl::StrCat("stage ", s + 1, " runs on '", name, "', which the cluster loaded here does not have"));
      plan.stages.back().devices.push_back(d);
    }
    for (const std::string& name : stage.operators) {
      const OpId op = graph.FindOp(name);
      if (op == kNone)
        return absl::InvalidArgumentError(
            absl::StrCat("stage ", s + 1, " holds '", name, "', which the graph loaded here does not have"));
      plan.stage_of_op[op] = s;
    }
  }
  for (OpId op = 0; op < graph.num_ops(); ++op) {
    if (plan.stage_of_op[op] < 0)
      return absl::InvalidArgumentError(absl::StrCat("stages leave out '", graph.name(op), "'"));
  }
  return plan;
}

std::optional<nlohmann::json> PlanDocument(absl::string_view text) {
  nlohmann::json j = nlohmann::json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("stages") || !j["stages"].is_array()) return std::nullopt;
  return j;
}

int64_t MicroBatchSizeOf(const nlohmann::json& plan) { return IntOr(plan, "micro_batch_size", 1); }

int64_t GlobalSamplesOf(const nlohmann::json& plan) { return IntOr(plan, "global_batch", 0); }

absl::StatusOr<PlanFile> ParsePlanDocument(const nlohmann::json& j, const Graph& graph, const Topology& topology) {
  std::vector<NamedStage> stages;
  for (const nlohmann::json& stage : j["stages"]) {
    stages.emplace_back();
    if (!stage.is_object() || !Names(stage, "devices", stages.back().devices) ||
        !Names(stage, "operators", stages.back().operators)) {
      return absl::InvalidArgumentError(
          absl::StrCat("stage ", stages.size(), " needs 'devices' and 'operators' arrays of names"));
    }
  }
  absl::StatusOr<ParallelPlan> plan = PlanFromNamedStages(stages, graph, topology);
  if (!plan.ok()) return plan.status();
  PlanFile file;
  file.plan = *std::move(plan);
  absl::StatusOr<Schedule> schedule =
      ParseSchedule(j.contains("schedule") && j["schedule"].is_string() ? j["schedule"].get<std::string>() : "");
  if (!schedule.ok()) return schedule.status();
  file.plan.schedule = *schedule;
  absl::StatusOr<Sharding> sharding =
      ParseSharding(j.contains("sharding") && j["sharding"].is_string() ? j["sharding"].get<std::string>() : "");
  if (!sharding.ok()) return sharding.status();
  file.plan.sharding = *sharding;
  absl::StatusOr<Recompute> recompute =
      ParseRecompute(j.contains("recompute") && j["recompute"].is_string() ? j["recompute"].get<std::string>() : "");
  if (!recompute.ok()) return recompute.status();
  file.plan.recompute = *recompute;
  file.micro_batch_size = MicroBatchSizeOf(j);
  // Files written before micro_batches was: global_batch counted micro-batches.
  file.plan.global_batch = j.contains("micro_batches") ? IntOr(j, "micro_batches", 0) : GlobalSamplesOf(j);
  if (file.micro_batch_size < 1 || file.plan.global_batch < 0)
    return absl::InvalidArgumentError("micro_batch_size must be positive and micro_batches not negative");
  return file;
}

}  // namespace placement::cli
