#include "client/report.h"

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "graph/units.h"

namespace placement::cli {
namespace {

// Each device's memory by kind: a plan's as its model counts it per stage (every replica holds its stage's), a
// placement's from the graph.
std::vector<MemoryBreakdown> DeviceMemoryOf(const Report& r) {
  if (r.plan != nullptr && !r.plan->device_memory.empty()) return r.plan->device_memory;
  return BreakDownMemory(*r.graph, *r.placement, *r.evaluation);
}

// Times in seconds read best with a unit; times in an input's own unit are printed as plain numbers.
std::string Time(double t, const std::string& unit) {
  if (unit == "s") return FormatSeconds(t);
  return absl::StrFormat("%.2f", t);
}

std::string Memory(int64_t bytes) { return FormatBytes(static_cast<double>(bytes)); }

nlohmann::ordered_json BlocksJson(const Report& r) {
  nlohmann::ordered_json blocks = nlohmann::ordered_json::array();
  for (const LatencyBlock& b : r.evaluation->blocks) {
    blocks.push_back({{"device", r.topology->device(b.device).name},
                      {"piece", b.piece},
                      {"operators", b.num_ops},
                      {"ready", b.ready},
                      {"compute", b.compute},
                      {"transfer", b.transfer},
                      {"finish", b.finish}});
  }
  return blocks;
}

std::string BlocksTable(const Report& r) {
  std::string out;
  for (const LatencyBlock& b : r.evaluation->blocks) {
    absl::StrAppend(
        &out,
        absl::StrFormat("block %-10s #%-3d %6d ops  ready %10s  compute %10s  transfer %10s  finish %10s\n",
                        r.topology->device(b.device).name, b.piece, b.num_ops, Time(b.ready, r.time_unit),
                        Time(b.compute, r.time_unit), Time(b.transfer, r.time_unit), Time(b.finish, r.time_unit)));
  }
  return out;
}

nlohmann::ordered_json MemoryJson(const MemoryBreakdown& memory) {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (const auto& [key, bytes] : MemoryBreakdownFields(memory)) out[key] = bytes;
  return out;
}

}  // namespace

std::string ReportJson(const Report& r) {
  const Evaluation& e = *r.evaluation;
  nlohmann::ordered_json out;
  out["objective"] = std::string(ObjectiveName(e.objective));
  out["cost_model"] = std::string(CostModelName(e.cost_model));
  out["value"] = e.value;
  out["time_unit"] = r.time_unit;
  out["lower_bound"] = e.bound.value;
  out["ratio"] = e.ratio;
  out["fits_memory"] = e.fits_memory;
  out["graph_hash"] = r.graph_hash;
  AddPrecisionAndFiguresJson(r.precision, r.topology->description(), &out);
  if (!r.algorithm.empty()) {
    out["algorithm"] = r.algorithm;
    out["proven_optimal"] = r.proven_optimal;
    out["best_bound"] = r.best_bound;
  }
  out["bound"] = {{"critical_path", e.bound.critical_path},
                  {"work_per_device", e.bound.work_per_device},
                  {"largest_unit", e.bound.largest_unit},
                  {"min_devices_for_memory", e.bound.min_devices_for_memory}};
  if (e.cost_model == CostModelKind::kTarnawski) {
    out["blocks"] = BlocksJson(r);
  } else if (e.objective != Objective::kThroughput) {
    out["transfers"] = e.simulation.transfers;
    out["bytes_moved"] = e.simulation.bytes_moved;
  }
  nlohmann::ordered_json devices = nlohmann::ordered_json::array();
  const std::vector<MemoryBreakdown> memory = DeviceMemoryOf(r);
  for (DeviceId d = 0; d < r.topology->num_devices(); ++d) {
    const DeviceScore& s = e.devices[d];
    devices.push_back({{"name", r.topology->device(d).name},
                       {"kind", r.topology->device(d).kind},
                       {"busy", s.busy},
                       {"load", s.load},
                       {"peak_memory", s.peak_memory},
                       {"memory", MemoryJson(memory[d])},
                       {"capacity", s.capacity},
                       {"oom", s.oom}});
  }
  out["devices"] = std::move(devices);
  nlohmann::ordered_json assignment = nlohmann::ordered_json::object();
  for (OpId op : r.graph->topo_order()) {
    assignment[std::string(r.graph->name(op))] = r.topology->device(r.placement->device[op]).name;
  }
  out["assignment"] = std::move(assignment);
  nlohmann::ordered_json modules = nlohmann::ordered_json::object();
  for (ModuleDevice& m : ModuleDeviceMap(*r.graph, *r.placement, *r.topology)) modules[m.module] = m.device;
  if (!modules.empty()) out["modules"] = std::move(modules);
  out["cost_sources"] = {{"measured_operators", r.cost_sources.measured_ops},
                         {"modelled_operators", r.cost_sources.modelled_ops},
                         {"measured_flops_share", r.cost_sources.measured_flops_share}};
  if (r.plan != nullptr) AddPlanJson(*r.plan, &out);
  out["warnings"] = r.warnings;
  if (!r.algorithm.empty()) out["notes"] = r.notes;
  return out.dump(2) + "\n";
}

std::string PrecisionAndFiguresLines(absl::string_view precision, absl::string_view figures) {
  std::string out;
  if (!precision.empty()) absl::StrAppend(&out, "precision    ", precision, "\n");
  if (!figures.empty()) absl::StrAppend(&out, "figures      ", figures, "\n");
  return out;
}

void AddPrecisionAndFiguresJson(absl::string_view precision, absl::string_view figures, nlohmann::ordered_json* out) {
  if (!precision.empty()) (*out)["precision"] = std::string(precision);
  if (!figures.empty()) (*out)["device_figures"] = std::string(figures);
}

std::string ReportTable(const Report& r) {
  const Evaluation& e = *r.evaluation;
  std::string out;
  if (!r.algorithm.empty()) {
    absl::StrAppend(&out, "algorithm    ", r.algorithm, r.proven_optimal ? " (proven optimal)" : "", "\n");
  }
  absl::StrAppend(&out, "objective    ", ObjectiveName(e.objective), "\n");
  if (e.cost_model != CostModelKind::kDefault) {
    absl::StrAppend(&out, "cost model   ", CostModelName(e.cost_model),
                    e.cost_model == CostModelKind::kTarnawski
                        ? " (Tarnawski et al.: accelerator blocks, CPU operators one by one)"
                        : "",
                    "\n");
  }
  // A plan's value is its time per micro-batch; the plan lines below give its step and samples per second.
  const std::string per =
      r.plan == nullptr ? ""
      : r.plan->micro_batch_size > 1
          ? absl::StrCat(" per micro-batch of ", r.plan->micro_batch_size, " samples")
          : " per micro-batch";
  absl::StrAppend(&out, "value        ", Time(e.value, r.time_unit), per,
                  r.time_unit == "s" ? "" : " (input time units)", "\n");
  absl::StrAppend(&out, "lower bound  ", Time(e.bound.value, r.time_unit), "  (ratio ",
                  absl::StrFormat("%.3f", e.ratio), ")\n");
  if (!r.algorithm.empty() && r.best_bound > e.bound.value) {
    absl::StrAppend(&out, "best bound   ", Time(r.best_bound, r.time_unit), "  (the placer's bound)\n");
  }
  absl::StrAppend(&out, "memory       ", e.fits_memory ? "fits" : "OUT OF MEMORY on at least one device", "\n");
  absl::StrAppend(&out, "operators    ", r.graph->num_ops(), ", edges ", r.graph->num_edges(), ", graph ",
                  r.graph_hash.substr(0, 16), "\n");
  absl::StrAppend(
      &out, "costs        ",
      CostSourcesLine(r.cost_sources.measured_ops, r.cost_sources.modelled_ops, r.cost_sources.measured_flops_share),
      "\n");
  absl::StrAppend(&out, PrecisionAndFiguresLines(r.precision, r.topology->description()));
  if (r.plan != nullptr) absl::StrAppend(&out, PlanTable(*r.plan, r.time_unit));
  absl::StrAppend(&out, "\n");
  const bool throughput = e.objective == Objective::kThroughput || e.cost_model == CostModelKind::kTarnawski;
  absl::StrAppend(&out, absl::StrFormat("%-14s %-8s %6s %12s %12s %12s %12s  %s\n", "device", "kind", "ops", "busy",
                                        throughput ? "load" : "", "peak mem", "capacity", ""));
  std::vector<int32_t> ops_on(r.topology->num_devices(), 0);
  for (DeviceId d : r.placement->device) ++ops_on[d];
  if (r.plan != nullptr) {  // every replica of a stage runs its operators
    for (const StageRow& stage : r.plan->stages) {
      for (const std::string& name : stage.devices) {
        const DeviceId d = r.topology->FindDevice(name);
        if (d >= 0) ops_on[d] = static_cast<int32_t>(stage.operators.size());
      }
    }
  }
  for (DeviceId d = 0; d < r.topology->num_devices(); ++d) {
    const DeviceScore& s = e.devices[d];
    absl::StrAppend(&out, absl::StrFormat("%-14s %-8s %6d %12s %12s %12s %12s  %s\n", r.topology->device(d).name,
                                          r.topology->device(d).kind, ops_on[d], Time(s.busy, r.time_unit),
                                          throughput ? Time(s.load, r.time_unit) : "", Memory(s.peak_memory),
                                          s.capacity > 0 ? Memory(s.capacity) : "unlimited", s.oom ? "OOM" : ""));
  }
  const std::vector<MemoryBreakdown> breakdown = DeviceMemoryOf(r);
  std::vector<DeviceMemory> memory;
  for (DeviceId d = 0; d < r.topology->num_devices(); ++d) {
    memory.push_back(DeviceMemory{r.topology->device(d).name, breakdown[d]});
  }
  absl::StrAppend(&out, MemoryBreakdownTable(memory));
  absl::StrAppend(&out, BlocksTable(r));
  absl::StrAppend(&out, ModulesTable(ModuleDeviceMap(*r.graph, *r.placement, *r.topology)));
  for (const std::string& n : r.notes) absl::StrAppend(&out, "note: ", n, "\n");
  for (const std::string& w : r.warnings) absl::StrAppend(&out, "warning: ", w, "\n");
  return out;
}

std::string ModulesTable(const std::vector<ModuleDevice>& modules) {
  if (modules.empty()) return "";
  std::string out = absl::StrFormat("\n%-48s %s\n", "module", "device");
  for (size_t i = 0; i < modules.size() && i < kMaxModuleRows; ++i) {
    absl::StrAppend(&out, absl::StrFormat("%-48s %s\n", modules[i].module.empty() ? "(the model)" : modules[i].module,
                                          modules[i].device));
  }
  if (modules.size() > kMaxModuleRows) {
    absl::StrAppend(&out, "... and ", modules.size() - kMaxModuleRows, " more modules (--output json lists all)\n");
  }
  return out;
}

std::vector<std::pair<std::string, int64_t>> MemoryBreakdownFields(const MemoryBreakdown& m) {
  return {{"parameters", m.parameters},
          {"gradients", m.gradients},
          {"optimizer", m.optimizer},
          {"activations", m.activations},
          {"workspace", m.workspace}};
}

std::string MemoryBreakdownTable(const std::vector<DeviceMemory>& rows) {
  std::string out = absl::StrFormat("\n%-14s %12s %12s %12s %12s %12s\n", "memory", "parameters", "gradients",
                                    "optimizer", "activations", "workspace");
  for (const DeviceMemory& row : rows) {
    const MemoryBreakdown& m = row.memory;
    absl::StrAppend(&out, absl::StrFormat("%-14s %12s %12s %12s %12s %12s\n", row.device, Memory(m.parameters),
                                          Memory(m.gradients), Memory(m.optimizer), Memory(m.activations),
                                          Memory(m.workspace)));
  }
  return out;
}

}  // namespace placement::cli
