#include "client/answer_report.h"

#include <algorithm>

#include "client/report.h"
#include "client/stage_report.h"

#include <map>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "graph/measured_costs.h"
#include "graph/units.h"

namespace placement::cli {
namespace {

namespace pb = ::placement::v1;

std::string ObjectiveText(pb::Objective o) {
  switch (o) {
    case pb::OBJECTIVE_THROUGHPUT:
      return "throughput";
    case pb::OBJECTIVE_LATENCY:
      return "latency";
    default:
      return "step_time";
  }
}

// Times in seconds read best with a unit; times in an input's own unit are printed as plain numbers.
std::string Time(double t, const std::string& unit) {
  if (unit == "s") return FormatSeconds(t);
  return absl::StrFormat("%.2f", t);
}

void ScoreJson(const pb::Score& s, nlohmann::ordered_json* out) {
  (*out)["objective"] = ObjectiveText(s.objective());
  (*out)["value"] = s.value();
  (*out)["time_unit"] = s.time_unit();
  (*out)["lower_bound"] = s.lower_bound();
  (*out)["ratio"] = s.ratio();
  (*out)["fits_memory"] = s.fits_memory();
}

MemoryBreakdown MemoryOf(const pb::DeviceScore& d) {
  MemoryBreakdown m;
  m.parameters = d.memory().parameters_bytes();
  m.gradients = d.memory().gradients_bytes();
  m.optimizer = d.memory().optimizer_bytes();
  m.activations = d.memory().activations_bytes();
  m.workspace = d.memory().workspace_bytes();
  return m;
}

nlohmann::ordered_json MemoryJson(const MemoryBreakdown& memory) {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (const auto& [key, bytes] : MemoryBreakdownFields(memory)) out[key] = bytes;
  return out;
}

void BoundAndDevicesJson(const pb::Score& s, nlohmann::ordered_json* out) {
  (*out)["bound"] = {{"critical_path", s.critical_path()},
                     {"work_per_device", s.work_per_device()},
                     {"largest_unit", s.largest_unit()},
                     {"min_devices_for_memory", s.min_devices_for_memory()}};
  nlohmann::ordered_json devices = nlohmann::ordered_json::array();
  for (const pb::DeviceScore& d : s.devices()) {
    devices.push_back({{"name", d.device()},
                       {"busy", d.busy_seconds()},
                       {"load", d.load_seconds()},
                       {"peak_memory", d.peak_memory_bytes()},
                       {"memory", MemoryJson(MemoryOf(d))},
                       {"capacity", d.capacity_bytes()},
                       {"oom", d.out_of_memory()},
                       {"utilization", d.utilization()}});
  }
  (*out)["devices"] = std::move(devices);
}

std::string ScoreTable(const pb::Score& s, const std::map<std::string, int>& ops_on) {
  const std::string& unit = s.time_unit();
  std::string out;
  absl::StrAppend(&out, "objective    ", ObjectiveText(s.objective()), "\n");
  absl::StrAppend(&out, "value        ", Time(s.value(), unit), unit == "s" ? "" : " (input time units)", "\n");
  absl::StrAppend(&out, "lower bound  ", Time(s.lower_bound(), unit), "  (ratio ", absl::StrFormat("%.3f", s.ratio()),
                  ")\n");
  absl::StrAppend(&out, "memory       ", s.fits_memory() ? "fits" : "OUT OF MEMORY on at least one device", "\n");
  std::string rows;
  const bool throughput = s.objective() == pb::OBJECTIVE_THROUGHPUT;
  absl::StrAppend(&rows, absl::StrFormat("%-14s %6s %12s %12s %12s %12s %6s  %s\n", "device", "ops", "busy",
                                         throughput ? "load" : "", "peak mem", "capacity", "util", ""));
  for (const pb::DeviceScore& d : s.devices()) {
    const auto it = ops_on.find(d.device());
    absl::StrAppend(&rows, absl::StrFormat("%-14s %6s %12s %12s %12s %12s %5.0f%%  %s\n", d.device(),
                                           ops_on.empty() ? "" : absl::StrCat(it == ops_on.end() ? 0 : it->second),
                                           Time(d.busy_seconds(), unit), throughput ? Time(d.load_seconds(), unit) : "",
                                           FormatBytes(static_cast<double>(d.peak_memory_bytes())),
                                           d.capacity_bytes() > 0 ? FormatBytes(static_cast<double>(d.capacity_bytes()))
                                                                  : "unlimited",
                                           100 * d.utilization(), d.out_of_memory() ? "OOM" : ""));
  }
  std::vector<DeviceMemory> memory;
  for (const pb::DeviceScore& d : s.devices()) memory.push_back(DeviceMemory{d.device(), MemoryOf(d)});
  return absl::StrCat(out, "\n", rows, MemoryBreakdownTable(memory));
}

nlohmann::ordered_json CostSourcesJson(const pb::CostSources& c) {
  return {{"measured_operators", c.measured_operators()},
          {"modelled_operators", c.modelled_operators()},
          {"measured_flops_share", c.measured_flops_share()}};
}

std::string CostsLine(const pb::CostSources& c) {
  return absl::StrCat("costs        ",
                      CostSourcesLine(c.measured_operators(), c.modelled_operators(), c.measured_flops_share()), "\n");
}

std::vector<ModuleDevice> ModulesOf(const google::protobuf::RepeatedPtrField<pb::ModulePlacement>& modules) {
  std::vector<ModuleDevice> out;
  out.reserve(modules.size());
  for (const pb::ModulePlacement& m : modules) out.push_back({m.module(), m.device()});
  return out;
}

void ModulesJson(const google::protobuf::RepeatedPtrField<pb::ModulePlacement>& modules, nlohmann::ordered_json* out) {
  if (modules.empty()) return;
  nlohmann::ordered_json map = nlohmann::ordered_json::object();
  for (const pb::ModulePlacement& m : modules) map[m.module()] = m.device();
  (*out)["modules"] = std::move(map);
}

// A plan's stages as the server sent them, for the same table and JSON as `placectl place`.
PlanSummary PlanFromAnswer(const pb::PlaceResponse& a) {
  PlanSummary plan;
  plan.schedule = a.schedule();
  if (!a.sharding().empty()) plan.sharding = a.sharding();
  if (!a.recompute().empty()) plan.recompute = a.recompute();
  plan.global_batch = a.global_batch();
  plan.micro_batch_size = std::max<int64_t>(a.micro_batch_size(), 1);
  plan.cost_model = a.cost_model();
  plan.step_time = a.step_time();
  plan.simulated_value = a.simulated_value();
  plan.bottleneck = a.bottleneck();
  for (const pb::Stage& s : a.stages()) {
    StageRow row;
    row.operators.assign(s.operators().begin(), s.operators().end());
    row.devices.assign(s.devices().begin(), s.devices().end());
    row.modules.assign(s.modules().begin(), s.modules().end());
    row.compute = s.compute_seconds();
    row.allreduce = s.allreduce_seconds();
    row.allreduce_kind = s.allreduce();
    row.period = s.period_seconds();
    row.memory = s.memory_bytes();
    row.in_flight = s.in_flight();
    row.weight_versions = s.weight_versions();
    plan.stages.push_back(std::move(row));
  }
  return plan;
}

}  // namespace

std::string PlaceAnswerJson(const pb::PlaceResponse& a) {
  nlohmann::ordered_json out;
  ScoreJson(a.score(), &out);
  out["graph_hash"] = a.graph_hash();
  AddPrecisionAndFiguresJson(a.precision(), a.device_figures(), &out);
  out["algorithm"] = a.algorithm();
  out["proven_optimal"] = a.proven_optimal();
  out["best_bound"] = a.best_bound();
  BoundAndDevicesJson(a.score(), &out);
  nlohmann::ordered_json assignment = nlohmann::ordered_json::object();
  for (const pb::Assignment& x : a.assignment()) assignment[x.op()] = x.device();
  out["assignment"] = std::move(assignment);
  ModulesJson(a.modules(), &out);
  out["cost_sources"] = CostSourcesJson(a.cost_sources());
  if (a.stages_size() > 0) AddPlanJson(PlanFromAnswer(a), &out);
  out["warnings"] = std::vector<std::string>(a.warnings().begin(), a.warnings().end());
  out["notes"] = std::vector<std::string>(a.notes().begin(), a.notes().end());
  out["num_operators"] = a.num_operators();
  out["cache_hit"] = a.cache_hit();
  out["compute_seconds"] = a.compute_seconds();
  out["policy_version"] = a.policy_version();
  out["request_id"] = a.request_id();
  return out.dump(2) + "\n";
}

std::string PlaceAnswerTable(const pb::PlaceResponse& a) {
  std::string out = absl::StrCat("algorithm    ", a.algorithm(), a.proven_optimal() ? " (proven optimal)" : "", "\n");
  std::map<std::string, int> ops_on;
  for (const pb::Assignment& x : a.assignment()) ++ops_on[x.device()];
  std::string score = ScoreTable(a.score(), ops_on);
  const size_t rows = score.find("\n\n");
  absl::StrAppend(&out, score.substr(0, rows + 1));
  if (a.best_bound() > a.score().lower_bound()) {
    absl::StrAppend(&out, "best bound   ", Time(a.best_bound(), a.score().time_unit()), "  (the placer's bound)\n");
  }
  absl::StrAppend(&out, "operators    ", a.num_operators(), ", graph ", a.graph_hash().substr(0, 16), "\n");
  absl::StrAppend(&out, CostsLine(a.cost_sources()));
  absl::StrAppend(&out, PrecisionAndFiguresLines(a.precision(), a.device_figures()));
  absl::StrAppend(
      &out, "answer       ",
      a.cache_hit() ? "from the server's cache" : absl::StrCat("computed in ", FormatSeconds(a.compute_seconds())),
      ", request ", a.request_id(), "\n");
  if (a.stages_size() > 0) absl::StrAppend(&out, PlanTable(PlanFromAnswer(a), a.score().time_unit()));
  absl::StrAppend(&out, score.substr(rows + 1));
  absl::StrAppend(&out, ModulesTable(ModulesOf(a.modules())));
  for (const std::string& n : a.notes()) absl::StrAppend(&out, "note: ", n, "\n");
  for (const std::string& w : a.warnings()) absl::StrAppend(&out, "warning: ", w, "\n");
  return out;
}

std::string SimulateAnswerJson(const pb::SimulateResponse& a) {
  nlohmann::ordered_json out;
  ScoreJson(a.score(), &out);
  out["graph_hash"] = a.graph_hash();
  AddPrecisionAndFiguresJson(a.precision(), a.device_figures(), &out);
  BoundAndDevicesJson(a.score(), &out);
  ModulesJson(a.modules(), &out);
  out["cost_sources"] = CostSourcesJson(a.cost_sources());
  out["warnings"] = std::vector<std::string>(a.warnings().begin(), a.warnings().end());
  out["request_id"] = a.request_id();
  return out.dump(2) + "\n";
}

std::string SimulateAnswerTable(const pb::SimulateResponse& a) {
  std::string out = ScoreTable(a.score(), {});
  absl::StrAppend(&out, CostsLine(a.cost_sources()));
  absl::StrAppend(&out, PrecisionAndFiguresLines(a.precision(), a.device_figures()));
  absl::StrAppend(&out, ModulesTable(ModulesOf(a.modules())));
  for (const std::string& w : a.warnings()) absl::StrAppend(&out, "warning: ", w, "\n");
  return absl::StrCat(out, "graph ", a.graph_hash().substr(0, 16), ", request ", a.request_id(), "\n");
}

}  // namespace placement::cli
