#include "policy/exact/pipeline_search.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"
#include "graph/units.h"
#include "policy/exact/chain_dp.h"
#include "policy/exact/greedy_split.h"
#include "policy/exact/ideal_set.h"

namespace placement::pipeline_internal {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

Split ToSplit(const PipelineModel& m, const IdealSet& s, const ChainDpResult& r) {
  Split out;
  out.value = r.value;
  out.step_of_unit.assign(m.num_units, -1);
  for (size_t t = 0; t < r.segments.size(); ++t) {
    out.step_is_cpu.push_back(r.segments[t].cpu ? 1 : 0);
    for (int32_t u = 0; u < m.num_units; ++u) {
      if (s.Has(r.segments[t].to, u) && !s.Has(r.segments[t].from, u)) out.step_of_unit[u] = static_cast<int32_t>(t);
    }
  }
  return out;
}

double TotalWork(const PipelineModel& m) {
  double w = 0;
  for (double x : m.acc_time) w += x;
  return w;
}

// Every step of every chain costs at most this.
double LargestStepCost(const PipelineModel& m) {
  double acc = TotalWork(m), cpu = 0;
  for (double w : m.hedge_weight) acc += w;
  for (double x : m.cpu_time) cpu += x;
  return std::max(acc, cpu) * (1 + 1e-9) + 1e-300;
}

double LowerBound(const PipelineModel& m) {
  const int32_t k = m.num_accelerators(), c = m.num_cpus();
  double lb = 0, cpu_only = 0;
  for (int32_t u = 0; u < m.num_units; ++u) {
    double best = kInf;
    if (k > 0 && m.acc_ok[u]) best = m.acc_time[u];
    if (c > 0 && m.cpu_ok[u]) best = std::min(best, m.cpu_time[u]);
    if (std::isfinite(best)) lb = std::max(lb, best);
    if (!m.acc_ok[u]) cpu_only += m.cpu_time[u];
  }
  if (c > 0) lb = std::max(lb, cpu_only / c);
  // Smallest T whose k accelerators and C CPUs can hold all accelerator work (bisection on a monotone test).
  const double total = TotalWork(m);
  if (k > 0 && total > 0) {
    double lo = 0, hi = total;
    for (int it = 0; it < 100 && hi - lo > 1e-12 * total; ++it) {
      const double mid = 0.5 * (lo + hi);
      if (k * mid + (c > 0 ? c * CpuAbsorption(m, mid) : 0.0) >= total)
        hi = mid;
      else
        lo = mid;
    }
    lb = std::max(lb, lo);
  }
  return lb * (1 - 1e-12);
}

struct Gallop {
  ChainDpResult found;  // found.found: the optimum of the family
  double lower = 0;     // the family has no chain at or below this
  bool expired = false;
  bool too_large = false;          // a run needed more DP cells than allowed
  bool exhausted = false;          // no chain at or below the cap
  bool memory_pruned = false;      // the last run refused a step only for memory
  bool memory_pruned_any = false;  // some run did
};

Gallop RunGallop(const PipelineModel& m, const IdealSet& s, double lb, double cap, const SearchLimits& limits,
                 const Budget& budget, SearchCounters& counters) {
  Gallop g;
  g.lower = lb;
  double gap = std::max(lb / 256, 1e-12 * std::max(1.0, cap));
  for (;;) {
    const bool last = lb + gap >= cap;
    ChainDpOptions options;
    options.bound = last ? cap : lb + gap;
    options.enforce_memory = limits.enforce_memory;
    options.max_cells = limits.max_dp_cells;
    ChainDpResult r = RunChainDp(m, s, options, budget);
    ++counters.dp_runs;
    counters.dp_cells += r.window_ideals;
    counters.pairs += r.pairs;
    if (r.expired || r.too_large) {
      g.expired = r.expired;
      g.too_large = r.too_large;
      return g;
    }
    g.memory_pruned = r.memory_pruned;
    g.memory_pruned_any |= r.memory_pruned;
    if (r.found) {
      g.found = std::move(r);
      return g;
    }
    g.lower = std::max(g.lower, options.bound);
    if (last) {
      g.exhausted = true;
      return g;
    }
    gap *= 2;
  }
}

absl::Status CheckMemoryTotals(const PipelineModel& m) {
  const int32_t k = m.num_accelerators(), c = m.num_cpus();
  const int64_t acc_cap = m.accelerator_bytes, cpu_cap = m.cpu_bytes;
  int64_t total = 0, acc_only = 0;
  for (int32_t u = 0; u < m.num_units; ++u) {
    const bool on_acc = k > 0 && m.acc_ok[u], on_cpu = c > 0 && m.cpu_ok[u];
    const bool fits_acc = on_acc && (acc_cap == 0 || m.bytes[u] <= acc_cap);
    const bool fits_cpu = on_cpu && (cpu_cap == 0 || m.bytes[u] <= cpu_cap);
    if (!fits_acc && !fits_cpu) {
      const int64_t cap = on_acc ? acc_cap : cpu_cap;
      return absl::FailedPreconditionError(absl::StrCat("colocation group '", m.group_names[u], "' holds ",
                                                        FormatBytes(m.bytes[u]), " but ",
                                                        on_acc ? "an accelerator" : "a CPU", " holds ", FormatBytes(cap),
                                                        ": ", FormatBytes(m.bytes[u] - cap), " missing on one device"));
    }
    total += m.bytes[u];
    if (!on_cpu) acc_only += m.bytes[u];
  }
  const bool bounded = (k == 0 || acc_cap > 0) && (c == 0 || cpu_cap > 0);
  const int64_t capacity = k * acc_cap + c * cpu_cap;
  if (bounded && total > capacity) {
    return absl::FailedPreconditionError(
        absl::StrCat("the graph needs ", FormatBytes(total), " but the ", k, " accelerators",
                     c > 0 ? absl::StrCat(" and ", c, " CPUs") : "", " hold ", FormatBytes(capacity), ": ",
                     FormatBytes(total - capacity), " missing"));
  }
  if (acc_cap > 0 && acc_only > k * acc_cap) {
    return absl::FailedPreconditionError(absl::StrCat(
        "operators that only accelerators can hold need ", FormatBytes(acc_only), " but the ", k,
        " accelerators hold ", FormatBytes(k * acc_cap), ": ", FormatBytes(acc_only - k * acc_cap), " missing"));
  }
  return absl::OkStatus();
}

// Memory admits no contiguous split: says by how much the best one overflows.
absl::Status MemoryShortfall(const PipelineModel& m, const IdealSet& s, const Budget& budget, int64_t max_cells,
                             SearchCounters& counters) {
  ChainDpOptions options;
  options.cost = SegmentCost::kMemory;
  options.max_cells = max_cells;
  const ChainDpResult r = RunChainDp(m, s, options, budget);
  ++counters.dp_runs;
  counters.pairs += r.pairs;
  if (!r.found) {
    return absl::FailedPreconditionError(absl::StrCat("no contiguous split fits the devices' memory (the search ",
                                                      r.expired ? "ran out of time" : "ran out of room",
                                                      " before it could say by how much)"));
  }
  for (const ChainSegment& seg : r.segments) {
    if (seg.cost < r.value) continue;
    const int64_t bytes = s.bytes(seg.to) - s.bytes(seg.from);
    const int64_t cap = seg.cpu ? m.cpu_bytes : m.accelerator_bytes;
    return absl::FailedPreconditionError(absl::StrCat(
        "no contiguous split fits memory: the best one still puts ", FormatBytes(bytes), " on ",
        seg.cpu ? "a CPU" : "an accelerator", " that holds ", FormatBytes(cap), ": ", FormatBytes(bytes - cap),
        " missing"));
  }
  return absl::FailedPreconditionError("no contiguous split fits the devices' memory");
}

}  // namespace

std::vector<std::vector<int32_t>> SeedOrders(const PipelineModel& m) {
  std::vector<std::vector<int32_t>> orders(2);
  for (int32_t u = 0; u < m.num_units; ++u) orders[0].push_back(u);
  std::vector<int32_t> missing(m.num_units);
  std::deque<int32_t> queue;
  for (int32_t u = 0; u < m.num_units; ++u) {
    missing[u] = m.pred_begin[u + 1] - m.pred_begin[u];
    if (missing[u] == 0) queue.push_back(u);
  }
  while (!queue.empty()) {
    const int32_t u = queue.front();
    queue.pop_front();
    orders[1].push_back(u);
    for (int32_t k = m.succ_begin[u]; k < m.succ_begin[u + 1]; ++k) {
      if (--missing[m.succs[k]] == 0) queue.push_back(m.succs[k]);
    }
  }
  if (orders[1] == orders[0]) orders.pop_back();
  return orders;
}

namespace {

// A first split from the prefixes of two topological orders (one if two do not fit): a greedy cut of the first
// answers at once, the DP over their prefixes improves it. True when the budget ran out and `out` is final.
absl::StatusOr<bool> SeedFromOrders(const PipelineModel& m, const Budget& budget, const SearchLimits& limits,
                                    SearchCounters& counters, double lb, double tmax, SearchOutcome& out) {
  std::vector<std::vector<int32_t>> orders = SeedOrders(m);
  const int64_t per_order = (m.num_units + 1) * IdealSet::BytesPerIdeal(m);
  if (per_order > limits.max_lattice_bytes) {
    return absl::ResourceExhaustedError(
        absl::StrCat("pipeline_dp needs ", per_order >> 20, " MiB for the prefixes of one order of ", m.num_units,
                     " units, more than the ", limits.max_lattice_bytes >> 20, " MiB allowed; use a heuristic placer"));
  }
  if (per_order * static_cast<int64_t>(orders.size()) > limits.max_lattice_bytes) orders.resize(1);
  if (std::optional<Split> greedy = GreedySplit(m, orders[0], lb, tmax, budget)) {
    out.has_split = true;
    out.split = *std::move(greedy);
  }
  const IdealSet prefixes = IdealSet::Prefixes(m, orders);
  const Gallop seed = RunGallop(m, prefixes, lb, out.has_split ? out.split.value : tmax, limits, budget, counters);
  if (seed.found.found && (!out.has_split || seed.found.value < out.split.value)) {
    out.has_split = true;
    out.split = ToSplit(m, prefixes, seed.found);
  }
  if (!seed.expired) return false;
  if (!out.has_split) return budget.ExpiredStatus();
  out.notes.push_back("not proven optimal: the budget ran out while seeding the search");
  return true;
}

// The DP over every ideal of the unit DAG, below the seed's value: proves the seed optimal, finds better, or
// says why it stopped.
absl::StatusOr<SearchOutcome> SearchLattice(const PipelineModel& m, const Budget& budget, const SearchLimits& limits,
                                            SearchCounters& counters, double lb, double tmax, SearchOutcome out) {
  absl::StatusOr<IdealSet> lattice = IdealSet::Enumerate(m, limits.max_ideals, limits.max_lattice_bytes, budget);
  if (!lattice.ok()) {
    if (!out.has_split) {
      if (absl::IsDeadlineExceeded(lattice.status()) || absl::IsCancelled(lattice.status())) return lattice.status();
      return absl::ResourceExhaustedError(
          absl::StrCat("no split along a topological order fits memory, and ", lattice.status().message()));
    }
    out.notes.push_back(absl::StrCat("not proven optimal: ", lattice.status().message()));
    return out;
  }
  counters.ideals = lattice->size();
  const double upper = std::min(out.has_split ? out.split.value : kInf, limits.known_upper);
  const Gallop g = RunGallop(m, *lattice, lb, std::isfinite(upper) ? upper : tmax, limits, budget, counters);
  out.lower_bound = std::max(lb, g.lower);
  out.memory_pruned_any = g.memory_pruned_any;
  if (g.expired || g.too_large) {
    const std::string why = g.expired ? "the budget ran out during the lattice search"
                                      : absl::StrCat("the DP needs more than ", limits.max_dp_cells, " cells");
    if (!out.has_split) {
      if (g.expired) return budget.ExpiredStatus();
      return absl::ResourceExhaustedError(absl::StrCat("no split along a topological order fits memory, and ", why));
    }
    out.notes.push_back(absl::StrCat("not proven optimal: ", why));
    return out;
  }
  out.memory_pruned = g.memory_pruned;
  if (g.found.found) {
    out.has_split = true;
    out.split = ToSplit(m, *lattice, g.found);
    out.proven_optimal = true;
    out.lower_bound = out.split.value;
    return out;
  }
  if (std::isfinite(upper)) {
    // Nothing at or below the upper bound beats it: the split (or the caller's) that reaches it is optimal.
    if (out.has_split && out.split.value > limits.known_upper) out.has_split = false;
    out.proven_optimal = true;
    out.lower_bound = upper;
    return out;
  }
  if (!limits.enforce_memory) return absl::InternalError("pipeline_dp found no split even without memory limits");
  return MemoryShortfall(m, *lattice, budget, limits.max_dp_cells, counters);
}

}  // namespace

absl::StatusOr<SearchOutcome> SearchModel(const PipelineModel& m, const Budget& budget, const SearchLimits& limits,
                                          SearchCounters& counters) {
  SearchOutcome out;
  if (m.num_units == 0) {
    out.has_split = true;
    out.split.value = 0;
    out.proven_optimal = true;
    return out;
  }
  if (limits.enforce_memory) RETURN_IF_ERROR(CheckMemoryTotals(m));
  const double lb = LowerBound(m);
  const double tmax = LargestStepCost(m);
  out.lower_bound = lb;
  out.static_lower_bound = lb;
  ASSIGN_OR_RETURN(const bool budget_spent, SeedFromOrders(m, budget, limits, counters, lb, tmax, out));
  if (budget_spent) return out;
  return SearchLattice(m, budget, limits, counters, lb, tmax, std::move(out));
}

}  // namespace placement::pipeline_internal
