// Every placer family together: the one place that knows them all. The families below it know only the placer
// interface and the registry; those that run other placers by name (local_search's start placers, AUTO's
// portfolio) are handed the registry they are registered into.
#pragma once

#include <functional>
#include <memory>

#include "policy/registry.h"

namespace placement {

// Calls each family's Register function in a fixed order, then `extra` when given, then AUTO bound to `registry`
// (so that it sees what `extra` added).
void RegisterPlacerFamilies(PlacerRegistry& registry, const std::function<void(PlacerRegistry&)>& extra = nullptr);

// Every placer this build has, registered once (the learned placers excepted: they need weights, see
// policy/learned/learned_placers.h).
const PlacerRegistry& DefaultPlacerRegistry();

// The same families plus what `extra` registers (e.g. the learned placers, which live outside this library),
// before AUTO, whose portfolio then looks its candidates up in the new registry.
std::unique_ptr<PlacerRegistry> MakePlacerRegistry(const std::function<void(PlacerRegistry&)>& extra);

}  // namespace placement
