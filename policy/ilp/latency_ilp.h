// "ilp_latency": placement and schedule of one sample through a small graph, as a disjunctive MILP.
//
//   x[u,d] in {0,1}: unit u on device d;  s_v >= 0: start of operator v;  C: makespan (minimized)
//   dur_v = sum_d time(v,d) x[u(v),d]
//   edge v->w carrying t:     s_w >= s_v + dur_v, and for every pair of devices a != b
//                             s_w >= s_v + dur_v + c(t,a,b) (x[u(v),a] + x[u(w),b] - 1)
//   same device, no path between v and w (o_vw in {0,1} picks the order, same_uw >= x[u,d] + x[w,d] - 1):
//                             s_w >= s_v + dur_v + gap - M (1 - o_vw) - M (1 - same_uw), and symmetrically
//   C >= s_v + dur_v for every sink;  memory of each device within its capacity
//
// The gap (SimulatorConfig::op_gap) separates operators that no path orders; along a path the precedence rows
// leave it out, which only relaxes the model. It matches the simulator's transfer model (a tensor is sent once per destination device, starting when its
// producer ends, so every reader there sees it after c(t,a,b)) except that links carry transfers in parallel:
// the simulator queues transfers that share a link. The simulator's schedule of any placement satisfies every
// row, so the MILP's bound is a lower bound on the simulated latency of every placement that fits. Memory is
// first the parameters alone (as the simulator holds them resident); when the simulator then reports an
// out-of-memory device the model is solved again charging every buffer a unit could ever hold (parameters,
// scratch, outputs and one received copy of every input from another unit), which never overflows.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "policy/placer.h"

namespace placement::ilp {

inline constexpr int32_t kMaxLatencyOps = 60;

struct LatencyIlpSolution {
  Placement placement;        // the MILP's best placement
  double model_value = 0;     // its makespan in the model
  double bound = 0;           // the best proven lower bound on the model's optimum
  bool proven_optimal = false;
  Placement start;            // the warm start (best of the given start, single devices, greedy)
  double start_value = 0;     // its makespan in the model
  std::string summary;        // the solver's one-line report
};

// Solves the model alone. `all_buffers` selects the pessimistic memory model described above.
absl::StatusOr<LatencyIlpSolution> SolveLatencyIlp(const PlacementProblem& problem, const Budget& budget,
                                                   bool all_buffers = false);

absl::StatusOr<PlacerResult> PlaceLatencyIlp(const PlacementProblem& problem, const Budget& budget);

}  // namespace placement::ilp
