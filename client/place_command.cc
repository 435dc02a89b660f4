#include "client/place_command.h"

#include <signal.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "client/chart_file.h"
#include "client/exit_codes.h"
#include "client/memory_command.h"
#include "client/report.h"
#include "graph/canonical.h"
#include "graph/status_macros.h"
#include "graph/units.h"
#include "policy/parallel/hybrid_placer.h"
#include "policy/placer.h"
#include "policy/placer_families.h"
#include "simulator/plan_model.h"

namespace placement::cli {
namespace {

// "latency,step_time", with the cost models other than the default: "latency(tarnawski)".
std::string ObjectiveList(const Placer& p) {
  std::vector<std::string> names;
  std::string models;
  for (CostModelKind k : p.cost_models()) {
    if (k != CostModelKind::kDefault) absl::StrAppend(&models, models.empty() ? "" : ",", CostModelName(k));
  }
  for (Objective o : p.objectives())
    names.push_back(absl::StrCat(ObjectiveName(o), models.empty() ? "" : absl::StrCat("(", models, ")")));
  return absl::StrJoin(names, ",");
}

}  // namespace

absl::StatusOr<absl::Duration> ParseDeadline(const std::string& text) {
  absl::Duration d;
  if (!absl::ParseDuration(text, &d) || d <= absl::ZeroDuration()) {
    return UsageError(absl::StrCat("--deadline '", text, "' is not a positive duration such as 500ms, 2s or 1m"));
  }
  return d;
}

namespace {

constexpr BatchWords kFlags{"--batch", "--micro_batch"};

// What the command settled on from the options and the cluster. Parallelism auto is the hybrid portfolio at
// the global batch split into micro-batches.
struct Mode {
  std::string parallelism;
  std::string objective;
  int64_t global_batch = 0;         // micro-batches per step, for SetPlanOptions
  int64_t samples_per_run = 1;      // the batch the graph is bound to (1: a run of a fixed-cost graph)
  std::optional<BatchSplit> split;  // parallelism auto
  std::vector<std::string> notes;
};

bool LeavesPlanToUs(const PlaceOptions& o) {
  return o.plan.parallelism.empty() && o.load.training && o.objective.empty() && o.algorithm == "auto" &&
         o.cost_model == "default" && o.plan.global_batch == 0 && o.plan.schedule == "1f1b";
}

absl::Status CheckAutoOptions(const PlaceOptions& o) {
  if (!o.objective.empty() && o.objective != "throughput")
    return UsageError(
        absl::StrCat("--parallelism auto answers the fastest training step at the global batch; "
                     "--objective ",
                     o.objective, " goes with --parallelism operator"));
  if (o.algorithm != "auto" || o.cost_model != "default" || o.plan.global_batch != 0)
    return UsageError(
        "--parallelism auto takes the global batch in samples from --batch (and --micro_batch), with the default "
        "algorithm and cost model; --global_batch, --algorithm and --cost_model go with --parallelism data, "
        "pipeline, hybrid or operator");
  if (!o.load.training) return UsageError("--parallelism auto plans a training step: add --training");
  return absl::OkStatus();
}

// What the answer assumes of how the step issues its operators, where the cluster's devices say.
std::string RuntimeNote(const Topology& cluster, const std::string& runtime) {
  if (runtime == "graphs") return "runtime graphs: operators replayed without per-operator host work";
  const Device& d = cluster.device(0);
  if (d.host_op_overhead <= 0 && d.host_backward_op_overhead <= 0) return "";
  return absl::StrFormat(
      "runtime eager: the host issues each operator (%.1f us forward, %.1f us backward) while the device runs "
      "earlier ones; --runtime graphs for CUDA graphs or a compiled step",
      d.host_op_overhead * 1e6, d.host_backward_op_overhead * 1e6);
}

// The graph and cluster of the request, and the mode: auto splits the global batch over the devices and binds the
// graph to the micro-batch, reading the graph again where that is not the batch it was read at.
absl::Status LoadRequest(const PlaceOptions& o, std::optional<LoadedGraph>& loaded, std::optional<Topology>& topology,
                         Mode& mode) {
  const bool asked = o.plan.parallelism == "auto";
  if (asked) RETURN_IF_ERROR(CheckAutoOptions(o));
  GraphLoadOptions load = o.load;
  absl::StatusOr<LoadedGraph> graph = LoadGraphFile(o.graph_path, load);
  if (!graph.ok()) return graph.status();
  absl::StatusOr<Topology> cluster =
      ResolveTopology(graph->problem, o.topology_file, o.devices, o.load.runtime, o.load.precision);
  if (!cluster.ok()) return cluster.status();
  const int32_t devices = Accelerators(*cluster);
  const bool onnx = graph->format == "onnx";
  mode.parallelism = o.plan.parallelism.empty() ? "operator" : o.plan.parallelism;
  mode.objective = o.objective.empty() ? "step_time" : o.objective;
  mode.global_batch = o.plan.global_batch;
  if (asked || (LeavesPlanToUs(o) && onnx && devices > 1)) {
    const int64_t fixed = onnx ? graph->fixed_batch : 1;  // 0: the batch binds
    absl::StatusOr<BatchSplit> split =
        SplitStepBatch(onnx ? std::max<int64_t>(o.load.batch, 0) : 0, o.plan.micro_batch, devices, fixed, kFlags);
    if (!split.ok()) return AsUsageError(split.status());
    if (!onnx || o.load.batch <= 0)
      mode.notes.push_back(absl::StrCat("global batch ", split->global_samples, " samples, ",
                                        fixed > 1 ? "a run" : "one", " per device",
                                        onnx ? ": --batch sets it" : " (a sample is one run of this graph)"));
    if (onnx && fixed > 0) mode.notes.push_back(FixedBatchNote(*split, fixed, devices, kFlags));
    if (onnx && split->micro_batch != graph->samples_per_run) {
      load.batch = split->micro_batch;
      graph = LoadGraphFile(o.graph_path, load);
      if (!graph.ok()) return graph.status();
      cluster = ResolveTopology(graph->problem, o.topology_file, o.devices, o.load.runtime, o.load.precision);
      if (!cluster.ok()) return cluster.status();
    }
    mode.parallelism = "hybrid";
    mode.objective = "throughput";
    mode.global_batch = split->micro_batches;
    mode.split = *split;
  }
  mode.samples_per_run = graph->samples_per_run;
  if (const std::string note = RuntimeNote(*cluster, o.load.runtime); !note.empty()) mode.notes.push_back(note);
  if (graph->transformer.has_value() && o.load.training && devices > 1) {
    const TransformerSpec& t = *graph->transformer;
    mode.notes.push_back(absl::StrCat(
        "this model is a ", t.model_type, " transformer (", t.layers, " layers, hidden ", t.hidden,
        "): --parallelism tensor or --plan plans it layer by layer with tensor, pipeline and data parallelism, "
        "ZeRO and recomputation (docs/transformer_plans.md)"));
  }
  loaded = *std::move(graph);
  topology = *std::move(cluster);
  return absl::OkStatus();
}

// The largest divisor of `samples` no larger than `at_most` (at least 1).
int64_t LargestDivisorUpTo(int64_t samples, int64_t at_most) {
  for (int64_t k = std::min(samples, at_most); k > 1; --k) {
    if (samples % k == 0) return k;
  }
  return 1;
}

// What would make a refused step fit, computed by the memory model on one device of the cluster: the largest
// micro-batch (or batch) whose step fits one device, or how many such devices one sample needs. "" where the
// model cannot say (a graph whose batch is fixed, one without a memory limit).
std::string FitSuggestion(const PlaceOptions& o, const Mode& mode, const Topology& topology) {
  MemoryOptions m;
  m.graph_path = o.graph_path;
  m.load = o.load;
  m.load.batch = mode.samples_per_run;
  m.topology_file = o.topology_file;
  m.devices = o.devices;
  absl::StatusOr<OneDeviceFit> fit = FitOnOneDevice(m);
  if (!fit.ok() || fit->capacity <= 0) return "";
  const std::string device = absl::StrCat("one ", topology.device(0).kind, " (", FormatBytes(fit->capacity), ")");
  const std::string what = mode.split.has_value() ? absl::StrCat("a micro-batch of ", mode.samples_per_run, " samples")
                                                  : absl::StrCat("a step of batch ", mode.samples_per_run);
  if (fit->peak <= fit->capacity) return "";  // it fits one device: the refusal is the cluster's split, not the batch
  if (fit->devices_needed > 0) {
    return absl::StrCat("; ", what, " needs ", FormatBytes(fit->peak), " on ", device, ", and one sample alone ",
                        "more than one such device holds: at least ", fit->devices_needed,
                        " of them for one sample, split by --parallelism operator or pipeline");
  }
  if (fit->batch_that_fits <= 0) return "";
  if (mode.split.has_value()) {
    const int64_t micro = LargestDivisorUpTo(mode.split->global_samples, fit->batch_that_fits);
    return absl::StrCat("; ", what, " needs ", FormatBytes(fit->peak), " on ", device, ": micro-batches of ",
                        fit->batch_that_fits, " fit one, so --micro_batch ", micro, " (a divisor of the global batch ",
                        mode.split->global_samples, ") fits");
  }
  return absl::StrCat("; ", what, " needs ", FormatBytes(fit->peak), " on ", device, ": --batch ", fit->batch_that_fits,
                      " fits one such device");
}

// For a training step split into micro-batches that no plan fitted: the first of the plan options that hold less
// (sharding, then recomputation, then both) under which data parallelism over every device fits, as the plan
// model scores it; "" when none does or the request already uses them.
std::string PlanOptionThatFits(const CostModel& costs, const Mode& mode, const PlaceOptions& o) {
  if (!mode.split.has_value() || o.plan.sharding != "none" || o.plan.recompute != "none") return "";
  std::vector<DeviceId> all(costs.topology().num_devices());
  for (DeviceId d = 0; d < costs.topology().num_devices(); ++d) all[d] = d;
  ParallelPlan plan = OneStagePlan(costs.graph(), std::move(all));
  plan.global_batch = mode.global_batch;
  const std::pair<Sharding, Recompute> options[] = {
      {Sharding::kOptimizer, Recompute::kNone},  {Sharding::kGradients, Recompute::kNone},
      {Sharding::kParameters, Recompute::kNone}, {Sharding::kNone, Recompute::kFull},
      {Sharding::kGradients, Recompute::kFull},  {Sharding::kParameters, Recompute::kFull}};
  for (const auto& [sharding, recompute] : options) {
    plan.sharding = sharding;
    plan.recompute = recompute;
    absl::StatusOr<PlanEvaluation> ev = EvaluatePlan(costs, plan);
    if (!ev.ok() || !PlanMemoryStatus(costs, plan, *ev).ok()) continue;
    std::string flags;
    if (sharding != Sharding::kNone) absl::StrAppend(&flags, "--sharding ", ShardingName(sharding));
    if (recompute != Recompute::kNone) {
      absl::StrAppend(&flags, flags.empty() ? "" : " ", "--recompute ", RecomputeName(recompute));
    }
    return absl::StrCat("; data parallelism over the ", plan.stages[0].devices.size(), " devices fits with ", flags,
                        " (", FormatBytes(static_cast<double>(ev->stages[0].memory_bytes)), " per device)");
  }
  return "";
}

// A memory refusal names the next step: changes the memory model finds make it fit, and the command that
// measures the step.
absl::Status PlacerError(const PlaceOptions& o, const Mode& mode, const CostModel& costs, const absl::Status& s) {
  const Topology& topology = costs.topology();
  const bool memory = s.code() == absl::StatusCode::kFailedPrecondition && absl::StrContains(s.message(), "memory");
  if (!memory) return absl::Status(s.code(), absl::StrCat(o.algorithm, ": ", s.message()));
  return absl::Status(
      s.code(),
      absl::StrCat(o.algorithm, ": ", s.message(), PlanOptionThatFits(costs, mode, o), FitSuggestion(o, mode, topology),
                   "; `placectl memory ", o.graph_path, o.load.training ? " --training" : "", " --batch ",
                   mode.samples_per_run, " --devices 1x", topology.device(0).kind,
                   "` says what one step holds and the largest batch that fits one device",
                   mode.split.has_value() ? absl::StrCat(" (each micro-batch of the global batch ",
                                                         mode.split->global_samples, "; give that as --micro_batch)")
                                          : ""));
}

// The options that need no graph, checked before reading it (usage errors naming the flag), as parsed.
struct PlaceFlags {
  CostModelKind cost_model = CostModelKind::kDefault;
  absl::Duration deadline;
  const Placer* placer = nullptr;
};

absl::StatusOr<PlaceFlags> CheckFlags(const PlaceOptions& o) {
  if (o.output != "table" && o.output != "json")
    return UsageError(absl::StrCat("--output '", o.output, "' is not one of table, json"));
  if (!o.objective.empty()) RETURN_IF_ERROR(AsUsageError(ParseObjective(o.objective).status()));
  if (!o.plan.parallelism.empty() && o.plan.parallelism != "auto")
    RETURN_IF_ERROR(AsUsageError(ParseParallelism(o.plan.parallelism).status()));
  if (o.plan.micro_batch < 0) return UsageError(absl::StrCat("--micro_batch ", o.plan.micro_batch, " is negative"));
  const absl::StatusOr<CostModelKind> cost_model = ParseCostModel(o.cost_model);
  if (!cost_model.ok()) return AsUsageError(cost_model.status());
  const absl::StatusOr<absl::Duration> deadline = ParseDeadline(o.deadline);
  if (!deadline.ok()) return deadline.status();
  const PlacerRegistry& registry = o.registry != nullptr ? *o.registry : DefaultPlacerRegistry();
  const absl::StatusOr<const Placer*> placer = registry.Find(o.algorithm);
  if (!placer.ok()) return AsUsageError(placer.status());
  return PlaceFlags{*cost_model, *deadline, *placer};
}

// SIGINT or SIGTERM during the search ends it like its deadline (the placers answer with their best so far); a
// second one, while the answer is written, ends the program as usual.
std::atomic<bool> g_interrupted{false};

void OnInterrupt(int) { g_interrupted.store(true, std::memory_order_relaxed); }

class InterruptScope {
 public:
  InterruptScope() {
    struct sigaction on = {};
    on.sa_handler = OnInterrupt;
    on.sa_flags = SA_RESETHAND;
    sigemptyset(&on.sa_mask);
    sigaction(SIGINT, &on, &old_int_);
    sigaction(SIGTERM, &on, &old_term_);
  }
  ~InterruptScope() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }
  InterruptScope(const InterruptScope&) = delete;
  InterruptScope& operator=(const InterruptScope&) = delete;

 private:
  struct sigaction old_int_ = {}, old_term_ = {};
};

// The search under the deadline and the interrupt, with the best answer it offered kept for an interrupt that
// comes before it returns one.
absl::StatusOr<PlacerResult> Search(const Placer& placer, const PlacementProblem& problem, absl::Duration time) {
  std::mutex mu;
  std::optional<PlacerResult> best;
  const std::function<void(const PlacerResult&)> keep = [&](const PlacerResult& r) {
    std::lock_guard<std::mutex> lock(mu);
    if (r.evaluation.fits_memory && (!best || r.evaluation.value < best->evaluation.value)) best = r;
  };
  Budget budget = Budget::For(time);
  budget.cancelled = &g_interrupted;
  budget.on_improved = &keep;
  absl::StatusOr<PlacerResult> result;
  {
    InterruptScope scope;
    result = placer.Place(problem, budget);
  }
  if (!g_interrupted.load()) return result;
  if (!result.ok() && best.has_value()) result = *std::move(best);
  if (result.ok()) result->notes.push_back("interrupted (SIGINT or SIGTERM): the best answer found before it");
  return result;
}

// What is left of the deadline for the search: the deadline counts from the command's start, and the checks
// and the report after the search get a twentieth of it. A search left with no time still gets a moment, so that
// an answer exists to report.
absl::Duration SearchTime(absl::Duration deadline, absl::Time started) {
  const absl::Duration left = deadline * 0.95 - (absl::Now() - started);
  return std::max(left, std::min(deadline, absl::Milliseconds(50)));
}

}  // namespace

absl::StatusOr<std::string> RunPlace(const PlaceOptions& o) {
  const absl::Time started = o.started == absl::InfinitePast() ? absl::Now() : o.started;
  const absl::StatusOr<PlaceFlags> flags = CheckFlags(o);
  if (!flags.ok()) return flags.status();
  std::optional<LoadedGraph> loaded;
  std::optional<Topology> topology;
  Mode mode;
  RETURN_IF_ERROR(LoadRequest(o, loaded, topology, mode));
  const Objective objective = *ParseObjective(mode.objective);  // a checked flag, or the mode's own
  RETURN_IF_ERROR(AsUsageError(CheckCostModel(flags->cost_model, objective)));
  RETURN_IF_ERROR(AsUsageError(CheckChartApplies(o.chart_path, o.cost_model)));
  RETURN_IF_ERROR(AsUsageError(CheckPlacerFits(*flags->placer, objective, flags->cost_model)));

  const Problem& input = loaded->problem;
  absl::StatusOr<CostModel> costs = CostModel::Create(input.graph, *topology);
  if (!costs.ok()) return costs.status();
  PlacementProblem problem;
  problem.costs = &*costs;
  problem.objective = objective;
  problem.cost_model = flags->cost_model;
  problem.seed = o.seed;
  RETURN_IF_ERROR(AsUsageError(
      SetPlanOptions(mode.parallelism, o.cost_model, o.plan.schedule, mode.global_batch, o.algorithm, problem)));
  RETURN_IF_ERROR(AsUsageError(SetPlanMemory(o.plan.sharding, o.plan.recompute, problem)));
  absl::StatusOr<PlacerResult> result = Search(*flags->placer, problem, SearchTime(flags->deadline, started));
  if (!result.ok()) return PlacerError(o, mode, *costs, result.status());
  if (!o.chart_path.empty()) {
    const ChartOptions chart = ChartFor(o.graph_path, result->algorithm, input.time_unit, objective);
    RETURN_IF_ERROR(result->plan.has_value()
                        ? WritePlanChart(o.chart_path, *costs, result->plan->plan, chart)
                        : WriteScheduleChart(o.chart_path, *costs, result->placement, problem.simulator, chart));
  }

  Report report;
  report.graph = &input.graph;
  report.topology = &*topology;
  report.precision = o.load.precision;
  report.placement = &result->placement;
  report.evaluation = &result->evaluation;
  report.time_unit = input.time_unit;
  report.graph_hash = GraphHash(input.graph);
  report.warnings = loaded->warnings;
  report.cost_sources = loaded->cost_sources;
  report.algorithm = result->algorithm;
  report.proven_optimal = result->proven_optimal;
  report.best_bound = result->best_bound;
  if (g_interrupted.load()) report.warnings.push_back("interrupted: the answer is the best found before the signal");
  report.notes = std::move(mode.notes);
  report.notes.insert(report.notes.end(), result->notes.begin(), result->notes.end());
  if (objective == Objective::kThroughput && !result->plan.has_value() && o.load.training) {
    report.notes.push_back(absl::StrCat(
        "--objective throughput runs the placement as an asynchronous pipeline: each device holds its parameters, "
        "gradients, optimizer state and the activations of ",
        topology->num_devices(),
        " micro-batches in flight (the most its first stage keeps); leave out --objective for synchronous steps "
        "of a global batch (--parallelism auto)"));
  }
  PlanSummary plan;
  if (result->plan.has_value()) {
    plan = SummarizePlan(*result->plan, input.graph, *topology);
    plan.micro_batch_size = mode.samples_per_run;
    report.plan = &plan;
  }
  return o.output == "json" ? ReportJson(report) : ReportTable(report);
}

std::string ListAlgorithms(const PlacerRegistry* registry) {
  std::string out = absl::StrFormat("%-16s %-28s %s\n", "algorithm", "objectives", "description");
  for (const Placer* p : (registry != nullptr ? *registry : DefaultPlacerRegistry()).All()) {
    absl::StrAppend(&out, absl::StrFormat("%-16s %-28s %s\n", p->name(), ObjectiveList(*p), p->description()));
  }
  return out;
}

}  // namespace placement::cli
