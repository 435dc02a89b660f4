#include "policy/search/search_placers.h"

#include "policy/registry.h"
#include "policy/search/local_search.h"

namespace placement {

void RegisterSearchPlacers(PlacerRegistry& registry) {
  search::LocalSearchOptions options;
  options.registry = &registry;  // the start placers are whatever this registry holds under their names
  registry.Register(search::MakeLocalSearchPlacer(options));
}

}  // namespace placement
