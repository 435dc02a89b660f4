#include "policy/placer_families.h"

#include "policy/registry.h"

namespace placement {

void RegisterPlacerFamilies(PlacerRegistry& registry) {
  // Families add one line each, in the order `placectl algorithms` lists them.
}

}  // namespace placement
