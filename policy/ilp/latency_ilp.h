// "ilp_latency": placement and schedule of one sample through a small graph, as a disjunctive MILP.
//
//   x[u,d] in {0,1}: unit u on device d;  s_v >= 0: start of operator v;  C: makespan (minimized)
//   dur_v = sum_d time(v,d) x[u(v),d]
//   edge v->w carrying t:     s_w >= s_v + dur_v, and for every pair of devices a != b
//                             s_w >= s_v + dur_v + c(t,a,b) (x[u(v),a] + x[u(w),b] - 1)
//   no path between v and w (o_vw in {0,1} picks the order; same >= x[u(v),d] + x[u(w),d] - 1 for every d, or
//   1 when v and w share a unit):
//                             s_w >= s_v + dur_v + gap - M (1 - o_vw) - M (1 - same), and symmetrically
//   C >= s_v + dur_v for every sink;  memory of each device within its capacity
//
// The model follows the simulator's transfer model: a tensor goes once to each device that reads it, leaving
// when its producer ends, so every reader there can start c(t,a,b) later. What it leaves out: links carry
// transfers in parallel (the simulator queues transfers that share a link), and the gap after an operator
// (SimulatorConfig::op_gap) separates only operators that no path orders. Both only relax the model, and the
// simulator's own schedule of any placement satisfies every row, so the MILP's bound is a lower bound on the
// simulated latency of every placement whose parameters fit. Memory is first the parameters alone (which the
// simulator holds resident throughout); when the simulator then reports a device out of memory, the model is
// solved again charging every buffer a unit could ever hold (parameters, scratch, outputs and one received
// copy of every input from another unit), whose placements never overflow.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "policy/placer.h"

namespace placement::ilp {

inline constexpr int32_t kMaxLatencyOps = 60;

struct LatencyIlpSolution {
  Placement placement;     // the MILP's best placement
  double model_value = 0;  // its makespan in the model
  double bound = 0;        // the best proven lower bound on the model's optimum
  bool proven_optimal = false;
  Placement start;         // the warm start (best of the given start, single devices, greedy)
  double start_value = 0;  // its makespan in the model
  std::string summary;     // the solver's one-line report
};

// Solves the model alone. `all_buffers` selects the pessimistic memory model described above.
absl::StatusOr<LatencyIlpSolution> SolveLatencyIlp(const PlacementProblem& problem, const Budget& budget,
                                                   bool all_buffers = false);

absl::StatusOr<PlacerResult> PlaceLatencyIlp(const PlacementProblem& problem, const Budget& budget);

}  // namespace placement::ilp
