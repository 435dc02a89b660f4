#include "policy/exact/pipeline_dp.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "policy/exact/chain_dp.h"
#include "policy/exact/pipeline_model.h"
#include "policy/exact/pipeline_search.h"
#include "simulator/objectives.h"

namespace placement {
namespace {

using pipeline_internal::SearchCounters;
using pipeline_internal::SearchLimits;
using pipeline_internal::SearchModel;
using pipeline_internal::SearchOutcome;
using pipeline_internal::Split;

// Half of the memory allowed holds the lattice (sorting it briefly needs up to twice that), half the DP.
SearchLimits LimitsFor(const PipelineOptions& options) {
  SearchLimits limits;
  limits.max_ideals = options.max_ideals > 0 ? std::min<int64_t>(options.max_ideals, INT32_MAX - 1) : INT32_MAX - 1;
  limits.max_lattice_bytes = std::max<int64_t>(1 << 20, options.max_memory_bytes / 4);
  limits.max_dp_cells = std::max<int64_t>(1 << 16, options.max_memory_bytes / 2 / kChainDpCellBytes);
  return limits;
}

// Devices for the steps in chain order; floating units join the step their rule names (StepOfOps).
Placement ToPlacement(const PipelineModel& m, const Split& split, int32_t* accelerators_used, int32_t* cpus_used) {
  const size_t steps = split.step_is_cpu.size();
  std::vector<DeviceId> device_of_step(steps);
  int32_t a = 0, c = 0;
  for (size_t t = 0; t < steps; ++t) device_of_step[t] = split.step_is_cpu[t] ? m.cpus[c++] : m.accelerators[a++];
  *accelerators_used = a;
  *cpus_used = c;
  const DeviceId fallback = m.accelerators.empty() ? m.cpus.front() : m.accelerators.front();
  const std::vector<int32_t> step_of_op = StepOfOps(m, split.step_of_unit);
  Placement p;
  p.device.resize(m.unit_of_op.size());
  for (size_t op = 0; op < m.unit_of_op.size(); ++op)
    p.device[op] = steps == 0 ? fallback : device_of_step[step_of_op[op]];
  return p;
}

void Accumulate(PipelineStats& stats, const SearchCounters& c) {
  stats.ideals = std::max(stats.ideals, c.ideals);
  stats.dp_cells += c.dp_cells;
  stats.pairs += c.pairs;
  stats.dp_runs += c.dp_runs;
}

// The search on a model with merged zero-compute units, checked (see SolveContiguousPipeline): against the same
// search without memory limits, and failing that against the unmerged model, whose answer replaces `out` (and
// whose model lands in `exact`) when better.
absl::Status CheckAgainstUnmerged(const CostModel& costs, const Budget& budget, const SearchLimits& limits,
                                  PipelineModelOptions model_options, const PipelineModel& model,
                                  absl::StatusOr<SearchOutcome>& out, PipelineStats& stats,
                                  std::optional<PipelineModel>& exact) {
  if (out.ok()) {
    SearchLimits relaxed = limits;
    relaxed.enforce_memory = false;
    SearchCounters rc;
    absl::StatusOr<SearchOutcome> r = SearchModel(model, budget, relaxed, rc);
    Accumulate(stats, rc);
    if (r.ok() && r->proven_optimal && r->has_split && r->split.value >= out->split.value * (1 - 1e-12)) {
      return absl::OkStatus();
    }
  }
  model_options.merge_sized = false;
  absl::StatusOr<PipelineModel> unmerged = BuildPipelineModel(costs, model_options);
  if (!unmerged.ok()) return unmerged.status();
  SearchLimits exact_limits = limits;
  if (out.ok() && out->has_split) exact_limits.known_upper = out->split.value;
  SearchCounters ec;
  absl::StatusOr<SearchOutcome> e = SearchModel(*unmerged, budget, exact_limits, ec);
  Accumulate(stats, ec);
  if (!out.ok() || (e.ok() && e->has_split && e->split.value < out->split.value)) {
    exact = *std::move(unmerged);
    out = std::move(e);
  } else if (e.ok()) {
    out->proven_optimal = e->proven_optimal;
    out->lower_bound = std::min(out->split.value, e->lower_bound);
  } else {
    out->proven_optimal = false;
    out->notes.push_back(absl::StrCat("not proven optimal against memory: ", e.status().message()));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<PipelineSolution> SolveContiguousPipeline(const CostModel& costs, const Budget& budget,
                                                         const PipelineOptions& options) {
  const absl::Time start = absl::Now();
  if (budget.Expired()) return budget.ExpiredStatus();
  PipelineModelOptions model_options;
  model_options.reduce = options.reduce;
  absl::StatusOr<PipelineModel> model = BuildPipelineModel(costs, model_options);
  if (!model.ok()) return model.status();

  PipelineSolution sol;
  const SearchLimits limits = LimitsFor(options);
  SearchCounters counters;
  absl::StatusOr<SearchOutcome> out = SearchModel(*model, budget, limits, counters);
  Accumulate(sol.stats, counters);

  // Merging zero-compute units that hold bytes restricts memory use. It cannot matter when the deciding DP
  // never refused a step for memory (the same DP without memory limits, an optimum of a relaxation of the
  // original problem, would have made every decision alike); otherwise the result is checked against that
  // relaxation and, failing that, against the unmerged model.
  std::optional<PipelineModel> exact;
  if (model->sized_merges &&
      (absl::IsFailedPrecondition(out.status()) || (out.ok() && out->proven_optimal && out->memory_pruned))) {
    absl::Status checked = CheckAgainstUnmerged(costs, budget, limits, model_options, *model, out, sol.stats, exact);
    if (!checked.ok()) return checked;
  }
  if (!out.ok()) return out.status();
  const PipelineModel& used = exact.has_value() ? *exact : *model;
  if (!out->has_split) return absl::InternalError("pipeline_dp ended without a split");

  sol.placement = ToPlacement(used, out->split, &sol.accelerators_used, &sol.cpus_used);
  absl::StatusOr<Evaluation> ev = Evaluate(costs, sol.placement, Objective::kThroughput);
  if (!ev.ok()) return ev.status();
  if (!ev->fits_memory) return absl::InternalError("pipeline_dp produced a placement that does not fit memory");
  const double dp_value = out->split.value;
  if (std::abs(ev->value - dp_value) > 1e-6 * std::max(1.0, std::abs(dp_value))) {
    return absl::InternalError(
        absl::StrCat("pipeline_dp's split scores ", ev->value, " but its DP computed ", dp_value));
  }
  sol.max_load = ev->value;
  sol.proven_optimal = out->proven_optimal;
  // Runs of the merged model that memory decided bound only that model; the bound from work holds for all.
  const bool restricted = !exact.has_value() && model->sized_merges && out->memory_pruned_any;
  const double bound = restricted ? out->static_lower_bound : out->lower_bound;
  sol.lower_bound = out->proven_optimal ? sol.max_load : std::min(bound, sol.max_load);
  sol.notes = std::move(out->notes);
  sol.stats.units = used.num_units;
  sol.stats.floating_units = static_cast<int32_t>(used.floating.size());
  sol.stats.merged_units = used.merged_units;
  sol.stats.seconds = absl::ToDoubleSeconds(absl::Now() - start);
  sol.notes.push_back(absl::StrCat(used.num_units, " units (", used.merged_units, " merged, ", used.floating.size(),
                                   " floating), ", sol.stats.ideals, " ideals, ", sol.stats.dp_runs, " DP runs, ",
                                   sol.stats.pairs, " steps scored"));
  return sol;
}

}  // namespace placement
