// Each family of placers registers itself here; the registry calls this once.
#pragma once

namespace placement {

class PlacerRegistry;

// Defined in placer_families.cc: calls each family's Register function below in a fixed order.
void RegisterPlacerFamilies(PlacerRegistry& registry);

}  // namespace placement
