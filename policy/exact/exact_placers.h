// The exact placers: optimal answers for the problems they cover, with a proof or a bound.
#pragma once

namespace placement {

class PlacerRegistry;

// Registers "pipeline_dp" (the optimal contiguous pipeline split for the THROUGHPUT objective).
void RegisterExactPlacers(PlacerRegistry& registry);

}  // namespace placement
