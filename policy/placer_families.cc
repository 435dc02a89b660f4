#include "policy/placer_families.h"

#include "policy/auto/auto_placer.h"
#include "policy/exact/exact_placers.h"
#include "policy/heuristics/heuristic_placers.h"
#include "policy/ilp/ilp_placers.h"
#include "policy/parallel/hybrid_placer.h"
#include "policy/search/search_placers.h"
#include "policy/tarnawski/tarnawski_placers.h"

namespace placement {

void RegisterPlacerFamilies(PlacerRegistry& registry, const std::function<void(PlacerRegistry&)>& extra) {
  // Families add one line each, in the order `placectl algorithms` lists them.
  RegisterHeuristicPlacers(registry);
  RegisterExactPlacers(registry);
  RegisterIlpPlacers(registry);
  RegisterSearchPlacers(registry);
  RegisterTarnawskiPlacers(registry);
  RegisterParallelPlacers(registry);
  if (extra) extra(registry);
  RegisterAutoPlacer(registry);  // last: it runs the others
}

const PlacerRegistry& DefaultPlacerRegistry() {
  static const PlacerRegistry* registry = [] {
    auto* r = new PlacerRegistry;
    RegisterPlacerFamilies(*r);
    return r;
  }();
  return *registry;
}

std::unique_ptr<PlacerRegistry> MakePlacerRegistry(const std::function<void(PlacerRegistry&)>& extra) {
  auto r = std::make_unique<PlacerRegistry>();
  RegisterPlacerFamilies(*r, extra);
  return r;
}

}  // namespace placement
