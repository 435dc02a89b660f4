// The exact placers, mixed-integer programs solved by COIN-OR CBC:
//   ilp_throughput: the non-contiguous max-load split (THROUGHPUT), any graph of up to 2,000 units;
//   ilp_latency:    placement and schedule of one sample through a small graph (LATENCY, also STEP_TIME),
//                   up to 60 operators.
// Both start from a heuristic placement, honour the budget (CBC stops at the deadline and returns its best
// placement), report CBC's best bound and say when they proved optimality.
#pragma once

namespace placement {

class PlacerRegistry;

void RegisterIlpPlacers(PlacerRegistry& registry);

}  // namespace placement
