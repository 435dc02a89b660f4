// The favourite-child relation of SCT scheduling (Hanen and Munier 1995, as Baechi's m-SCT uses it), from the
// LP relaxation solved by COIN-OR CLP.
//
// Variables: x_e in [0, 1] per edge (0: the edge's consumer is its producer's favourite child and runs right
// after it on the same device, paying no transfer), a start time s_v >= 0 per operator, the makespan w.
//   minimize w
//   s_i + p_i + c_e x_e <= s_j          for every edge e = (i, j)
//   sum_{e out of i} x_e >= outdeg(i) - 1   (at most one favourite child)
//   sum_{e into j} x_e >= indeg(j) - 1      (at most one favourite parent)
//   s_i + p_i <= w                      for every sink
// p is the fastest time, c the mean transfer time (0 inside a colocation group). Edges with x_e < 1/2 become
// favourites, greedily in increasing x_e so that the rounded relation stays one-to-one.
#pragma once

#include <string>
#include <vector>

#include "graph/cost_model.h"
#include "policy/heuristics/placement_state.h"

namespace placement::heuristics {

struct FavouriteChildren {
  bool solved = false;      // the LP reached optimality within the time limit
  std::vector<OpId> child;  // per operator, kNone where none (all kNone when !solved)
  int32_t count = 0;
  double lp_makespan = 0;  // the relaxation's makespan: a lower bound on SCT's model without device limits
  std::string note;        // why there are none, when !solved
};

// Stops after `seconds` of solver time, returning no favourites (m-SCT then runs as m-ETF).
FavouriteChildren SolveFavouriteChildren(const CostModel& costs, absl::Span<const double> mean_edge, double seconds);

}  // namespace placement::heuristics
