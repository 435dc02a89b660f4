// The search family: "local_search", simulator-guided and anytime (policy/search/local_search.h).
#pragma once

namespace placement {

class PlacerRegistry;

void RegisterSearchPlacers(PlacerRegistry& registry);

}  // namespace placement
