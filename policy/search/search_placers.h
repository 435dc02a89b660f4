// The search family: "local_search", simulator-guided and anytime (policy/search/local_search.h).
#pragma once

namespace placement {

class PlacerRegistry;

// local_search takes its start placers from `registry` itself, so it must outlive the placer (it owns it).
void RegisterSearchPlacers(PlacerRegistry& registry);

}  // namespace placement
