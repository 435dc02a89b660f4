// Internal to policy/exact: the exact search on one PipelineModel.
//
// 1. A lower bound L: the largest unit on its cheapest device, and the smallest T with kT + C·A(T) at least
//    the total accelerator work.
// 2. An upper bound U: a greedy cut of one topological order (greedy_split.h), improved by the optimal split
//    among the prefixes of two topological orders of the units (the same DP on n + 1 ideals per order).
// 3. The whole ideal lattice, and the windowed DP at growing bounds T = L + (L/256)·2^i, capped at U: a run
//    that finds a chain returns the optimum (see chain_dp.h); a run that does not proves the optimum is above
//    T. Runs below the optimum are cheap because their windows are thin, so the search costs about one run
//    at a bound just above the optimum.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "policy/exact/pipeline_model.h"
#include "policy/placer.h"

namespace placement::pipeline_internal {

// A contiguous split of a model's lattice units: step_of_unit[u] is u's position along the chain.
struct Split {
  std::vector<int32_t> step_of_unit;
  std::vector<uint8_t> step_is_cpu;                        // per step
  double value = std::numeric_limits<double>::infinity();  // its largest step cost, as the DP computed it
};

struct SearchLimits {
  int64_t max_ideals = 0;
  int64_t max_lattice_bytes = 0;  // storage of one family of ideals
  int64_t max_dp_cells = 0;       // per DP run (see chain_dp.h); 0: no limit
  bool enforce_memory = true;
  double known_upper = std::numeric_limits<double>::infinity();  // a value some other split already reaches
};

struct SearchCounters {
  int64_t ideals = 0;
  int64_t dp_cells = 0;
  int64_t pairs = 0;
  int32_t dp_runs = 0;
};

struct SearchOutcome {
  bool has_split = false;
  Split split;
  double lower_bound = 0;          // no split of this model does better
  double static_lower_bound = 0;   // the bound from work alone, which holds for any model of the same graph
  bool proven_optimal = false;     // no split (of this model) does better than split.value (or known_upper)
  bool memory_pruned = false;      // the deciding DP refused a step only for memory
  bool memory_pruned_any = false;  // some DP run did
  std::vector<std::string> notes;
};

// Topological orders of the units whose prefixes seed upper bounds: the model's own (branch by branch) and
// Kahn's first-in-first-out order (level by level, cutting across parallel branches); one when they agree.
std::vector<std::vector<int32_t>> SeedOrders(const PipelineModel& model);

// FAILED_PRECONDITION (with the missing bytes) when memory admits no contiguous split; the budget's status
// when it expires before any split is known.
absl::StatusOr<SearchOutcome> SearchModel(const PipelineModel& model, const Budget& budget, const SearchLimits& limits,
                                          SearchCounters& counters);

}  // namespace placement::pipeline_internal
