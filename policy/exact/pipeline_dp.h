// The optimal contiguous pipeline split for the THROUGHPUT objective (Tarnawski et al., "Efficient Algorithms
// for Device Placement of DNN Graph Operators", NeurIPS 2020), found without enumerating pairs of ideals.
//
// Problem: k identical accelerators and C CPU devices; every device takes a contiguous piece of the forward
// DAG (the difference of two ideals) with the colocation groups, including backward operators, that ride
// along; an accelerator's load is its compute plus the transfer time of every tensor crossing its boundary,
// a CPU's load its compute; memory (parameter bytes) must fit each device; minimise the largest load. The
// publication's DP evaluates every pair of ideals, which is quadratic in a lattice that InceptionV3 makes
// 36,596 ideals wide (886 s and 18 GB).
//
// Formulation used here (see pipeline_model.h, ideal_set.h, chain_dp.h, pipeline_search.h):
//  - exact reductions shrink the DAG first (zero-compute units merged into their only neighbour, free
//    sources and sinks floated out), which takes GNMT's lattice from 3,310,714 ideals to 100;
//  - each ideal is a bitset with running sums and its crossing hyperedges, sorted by accelerator work;
//  - for a bound T, the DP over chains only touches ideals whose work (and crossing transfers) is compatible
//    with every device staying under T (thin windows near the optimum) and pairs less than T apart, and it is
//    exact for every optimum at most T; T grows geometrically from a lower bound until a run finds a chain,
//    and is capped by the best split along two topological orders. On InceptionV3 the deciding run fills a
//    few thousand DP cells and scores about 6,000 steps instead of 670 million.
// The result is the proven optimum over contiguous splits unless the budget runs out (then the best split
// found, with a proven lower bound) or the lattice exceeds the memory allowed for it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/cost_model.h"
#include "graph/placement.h"
#include "policy/placer.h"

namespace placement {

struct PipelineOptions {
  // Largest number of ideals enumerated (0: as many as memory allows).
  int64_t max_ideals = 0;
  // Memory the search may take: a quarter for the lattice (twice that while sorting it), half for the DP.
  int64_t max_memory_bytes = int64_t{768} << 20;
  // Exact reductions of the unit DAG (pipeline_model.h); off only for testing.
  bool reduce = true;
};

struct PipelineStats {
  int32_t units = 0;           // lattice units after contraction and reductions
  int32_t floating_units = 0;  // zero-cost units placed after the search
  int32_t merged_units = 0;    // zero-compute units merged into a neighbour
  int64_t ideals = 0;          // ideals enumerated (the largest lattice, when several models were searched)
  int64_t dp_cells = 0;        // DP cells over all runs
  int64_t pairs = 0;           // step costs evaluated
  int32_t dp_runs = 0;
  double seconds = 0;
};

struct PipelineSolution {
  Placement placement;
  double max_load = 0;     // the placement's THROUGHPUT value (simulator/objectives' Evaluate)
  double lower_bound = 0;  // proven: no contiguous split does better
  bool proven_optimal = false;
  int32_t accelerators_used = 0;
  int32_t cpus_used = 0;
  PipelineStats stats;
  std::vector<std::string> notes;
};

// UNIMPLEMENTED for topologies outside the model (see pipeline_model.h), FAILED_PRECONDITION when memory
// admits no contiguous split (saying how many bytes are missing), RESOURCE_EXHAUSTED when the lattice is too
// large and no split along a topological order fits, and the budget's status when it expires before any
// split is known.
absl::StatusOr<PipelineSolution> SolveContiguousPipeline(const CostModel& costs, const Budget& budget,
                                                         const PipelineOptions& options = {});

}  // namespace placement
