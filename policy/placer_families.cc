#include "policy/placer_families.h"

#include "policy/exact/exact_placers.h"
#include "policy/heuristics/heuristic_placers.h"
#include "policy/registry.h"

namespace placement {

void RegisterPlacerFamilies(PlacerRegistry& registry) {
  // Families add one line each, in the order `placectl algorithms` lists them.
  RegisterHeuristicPlacers(registry);
  RegisterExactPlacers(registry);
}

}  // namespace placement
