// "ilp_throughput": the non-contiguous max-load split (THROUGHPUT) as a mixed-integer program.
//
//   x[u,d] in {0,1}   unit u on device d (absent where d cannot run u, a pin says otherwise or u alone
//                     overflows d's memory)
//   out[t,d] >= x[p,d] - x[r,d]   for every reader unit r of tensor t produced by unit p: d sends t
//   in[t,d]  >= x[r,d] - x[p,d]   for every reader unit r: d receives t
//   T >= sum_u time(u,d) x[u,d] + sum_t cost(t) (out[t,d] + in[t,d])   accelerators (CPUs: compute only)
//   sum_u bytes(u) x[u,d] <= capacity(d),  sum_d x[u,d] = 1,  minimize T
//
// out and in are continuous: at integral x their lower bounds are 0 or 1 and nothing pushes them higher. Among
// interchangeable devices (same kind, type and memory, no pins) the run with the lower first unit comes
// first: x[i,e_p] <= sum_{j<i} x[j,e_(p-1)], written with running sums. T starts at the generic THROUGHPUT
// lower bound. The warm start is the better of the problem's start and the best contiguous split in unit order
// (a greedy split when neither exists), improved by a local search of moves and swaps for up to a quarter of
// the budget; CBC gets the rest (kDefaultIlpSeconds in all without a deadline). The answer is the better of
// CBC's incumbent and the warm start; best_bound is the larger of CBC's bound and the generic one, and
// proven_optimal is set when CBC closes the tree (both only when the model is exact, see throughput_model.h).
#pragma once

#include "absl/status/statusor.h"
#include "policy/placer.h"

namespace placement::ilp {

inline constexpr int32_t kMaxThroughputUnits = 2000;

struct ThroughputIlpOptions {
  bool warm_start = true;  // off: CBC alone, from no solution (tests of the model)
};

absl::StatusOr<PlacerResult> PlaceThroughputIlp(const PlacementProblem& problem, const Budget& budget,
                                                const ThroughputIlpOptions& options = {});

}  // namespace placement::ilp
