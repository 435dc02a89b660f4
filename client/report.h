// Renders a scored placement for people (a table) and for programs (JSON).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/strings/string_view.h"
#include "client/stage_report.h"
#include "graph/measured_costs.h"
#include "graph/module_map.h"
#include "graph/placement.h"
#include "graph/problem.h"
#include "simulator/memory_breakdown.h"
#include "simulator/objectives.h"

namespace placement::cli {

struct Report {
  const Graph* graph = nullptr;
  const Topology* topology = nullptr;
  const Placement* placement = nullptr;
  const Evaluation* evaluation = nullptr;
  std::string time_unit = "s";
  std::string graph_hash;
  std::vector<std::string> warnings;  // what the importer assumed
  CostSources cost_sources;           // which operators' costs were measured, which modelled
  // Set by `place`: which placer answered and what it proved. Empty algorithm: a scored placement (`simulate`).
  std::string algorithm;
  bool proven_optimal = false;
  double best_bound = 0;
  std::vector<std::string> notes;
  const PlanSummary* plan = nullptr;  // set when the answer is a parallel plan
  std::string precision;              // the job's (graph/precision.h); "" where it does not apply
};

// JSON with objective, cost_model, value, time_unit, lower_bound, ratio, fits_memory, bound, devices, assignment
// and, for a graph exported from PyTorch, modules (module path -> device, graph/module_map.h) (plus algorithm,
// proven_optimal, best_bound and notes for a placer's answer, under the tarnawski cost model the accelerator
// blocks with their ready, compute, transfer and finish times, and a plan's stages); a valid placement file (every
// operator on its stage's first device, for a plan).
std::string ReportJson(const Report& report);

std::string ReportTable(const Report& report);

// The table's lines naming the precision a job was priced at and whose figures its devices got (each left out
// when empty): one wording for local answers and the server's.
std::string PrecisionAndFiguresLines(absl::string_view precision, absl::string_view figures);
// The same for JSON: "precision" and "device_figures", each left out when empty.
void AddPrecisionAndFiguresJson(absl::string_view precision, absl::string_view figures, nlohmann::ordered_json* out);

// The "modules" section of a table: module path -> device, the first kMaxModuleRows of them (JSON has all).
inline constexpr size_t kMaxModuleRows = 40;
std::string ModulesTable(const std::vector<ModuleDevice>& modules);

// What each device's memory holds, by kind, as the answers' JSON and tables give it (docs/memory.md): one home for
// the local report and the server's answer.
struct DeviceMemory {
  std::string device;
  MemoryBreakdown memory;
};
std::string MemoryBreakdownTable(const std::vector<DeviceMemory>& rows);
// The JSON keys and bytes: parameters, gradients, optimizer, activations, workspace.
std::vector<std::pair<std::string, int64_t>> MemoryBreakdownFields(const MemoryBreakdown& memory);

}  // namespace placement::cli
