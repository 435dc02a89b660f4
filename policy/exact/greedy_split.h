// Internal to policy/exact: a quick first split for large graphs, so that the search always has an answer to
// return when its budget runs out.
//
// Along one topological order of the units, for a bound T, each accelerator in turn takes the longest run of
// units whose load (work plus the hyperedges crossing the run, kept up to date as units join) stays within T
// and whose bytes fit; T is bisected between the lower bound and the largest possible step. Linear time per
// bound, so it is cheap on graphs whose lattice is far too large to search.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "policy/exact/pipeline_model.h"
#include "policy/exact/pipeline_search.h"
#include "policy/placer.h"

namespace placement::pipeline_internal {

// Accelerators only; nothing when some unit cannot run on them, or when no bound up to `high` gives a split
// that fits k accelerators.
std::optional<Split> GreedySplit(const PipelineModel& model, const std::vector<int32_t>& order, double low, double high,
                                 const Budget& budget);

}  // namespace placement::pipeline_internal
