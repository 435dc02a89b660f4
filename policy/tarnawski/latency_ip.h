// "ilp_tarnawski" and "ilp_tarnawski_nc": the latency integer program of Tarnawski et al. (NeurIPS 2020;
// Appendix A for q subgraphs per accelerator) on CBC, over units (colocation groups, their colour classes):
//
//   x[u,s] in {0,1}      unit u in subgraph s (q per accelerator) or on the CPU; sum over s = 1
//   z[v,s] in [0,1]      z >= x, z[v,s] <= z[p,s] and z[v,s] <= x[v,s] - x[p,s] + 1 for every edge p -> v:
//                        each subgraph is contiguous (their contiguity rows)
//   in[t,s], out[t,s]    tensor t enters s (a reader in s, its producer not) or leaves it
//   start[s] >= lat[p] - H (1 - in[t,s])          a subgraph starts once every tensor entering it is done
//   finish[s] = start[s] + sum time(u) x[u,s] + sum cost(t) (in[t,s] + out[t,s])
//   lat[v] >= finish[s] - H (1 - x[v,s]);  lat[v] >= lat[p] + cpu(v) x[v,cpu] for every edge p -> v
//   start of an accelerator's subgraph j >= finish of its subgraph j - 1;  memory per accelerator
//   T >= lat[v] for every sink;  minimize T
//
// H is the warm start's latency (no better split needs a larger one), lat[v] starts at the longest path of
// fastest times into v, and interchangeable accelerators are ordered by their first unit. As theirs, the
// program leaves CPU cores unlimited. With q = 1 its splits are exactly the contiguous ones and its value is
// their model's latency, so its bound holds over every contiguous split. With q > 1 a colour class stays
// within one subgraph (theirs may spread over an accelerator's subgraphs), and the split it finds is scored by
// their model, which numbers the subgraphs its own way; its bound holds over the splits whose accelerators form
// at most q pieces, each class within one.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "policy/placer.h"
#include "policy/tarnawski/instance.h"

namespace placement::tarnawski {

inline constexpr int32_t kMaxIpOps = 1000;

struct IpSolution {
  std::vector<DeviceId> split;  // CBC's best split, empty when it has none
  double value = 0;             // its latency in the program
  double bound = 0;             // lower bound on the program's optimum (-infinity when none is known)
  bool proven_optimal = false;
  bool proven_infeasible = false;
  std::string summary;  // the program's size and CBC's one-line report
};

// Solves the program with q subgraphs per accelerator from `start` (a contiguous split that fits, or null).
IpSolution SolveLatencyIp(const Instance& instance, int32_t q, const std::vector<DeviceId>* start,
                          const Budget& budget);

// The placer: a warm start (the problem's start or the greedy split, improved by tarnawski_search for a quarter
// of the budget), then the program; the better of the two by their model. best_bound and proven_optimal are
// the program's (over the splits it covers, see above).
absl::StatusOr<PlacerResult> PlaceLatencyIp(const PlacementProblem& problem, const Budget& budget, int32_t q,
                                            std::string algorithm);

}  // namespace placement::tarnawski
