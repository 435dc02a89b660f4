#include "policy/search/search_placers.h"

#include "policy/registry.h"
#include "policy/search/local_search.h"

namespace placement {

void RegisterSearchPlacers(PlacerRegistry& registry) { registry.Register(search::MakeLocalSearchPlacer()); }

}  // namespace placement
