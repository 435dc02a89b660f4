// Each family of placers registers itself here; the registry calls this once.
#pragma once

#include <functional>

namespace placement {

class PlacerRegistry;

// Defined in placer_families.cc: calls each family's Register function below in a fixed order, then `extra`
// when given, then AUTO bound to `registry` (so that it sees what `extra` added).
void RegisterPlacerFamilies(PlacerRegistry& registry, const std::function<void(PlacerRegistry&)>& extra = nullptr);

}  // namespace placement
