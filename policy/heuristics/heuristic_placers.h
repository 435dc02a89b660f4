// The baseline placers from the literature: single_device, round_robin, hash, critical_path, m_topo, m_etf,
// m_sct, heft, scotch, metis. Each respects pins, colocation groups, supported device kinds and memory, and
// honours the budget between phases.
#pragma once

namespace placement {

class PlacerRegistry;

void RegisterHeuristicPlacers(PlacerRegistry& registry);

}  // namespace placement
