// The placers of Tarnawski et al.'s latency model (--cost_model tarnawski --objective latency):
// "tarnawski_greedy" (their baseline, greedy.h), "tarnawski_search" (search.h), "ilp_tarnawski" (their
// integer program, contiguous) and "ilp_tarnawski_nc" (the same with two subgraphs per accelerator).
#pragma once

namespace placement {

class PlacerRegistry;

void RegisterTarnawskiPlacers(PlacerRegistry& registry);

}  // namespace placement
