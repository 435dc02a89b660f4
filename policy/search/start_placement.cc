#include "policy/search/start_placement.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "policy/registry.h"

namespace placement::search {
namespace {

// Placers that would call back into local search.
bool Recursive(absl::string_view name) { return name == "local_search" || name == "auto"; }

// `fraction` of the time left before the deadline, from now.
absl::Time Share(const Budget& budget, double fraction) {
  if (budget.deadline == absl::InfiniteFuture()) return budget.deadline;
  const absl::Time now = absl::Now();
  return now + std::max(absl::ZeroDuration(), budget.deadline - now) * fraction;
}

}  // namespace

Placement GreedyPlacement(const PlacementProblem& problem, const SearchUnits& units) {
  const Topology& topo = problem.topology();
  const int32_t num_devices = topo.num_devices();
  std::vector<DeviceId> stages;
  for (DeviceId d = 0; d < num_devices; ++d) {
    if (topo.device(d).type == DeviceType::kAccelerator) stages.push_back(d);
  }
  if (stages.empty()) {
    for (DeviceId d = 0; d < num_devices; ++d) stages.push_back(d);
  }
  double total = 0;
  for (int32_t u = 0; u < units.num_units(); ++u) {
    double fastest = std::numeric_limits<double>::infinity();
    for (DeviceId d : units.allowed_devices(u)) fastest = std::min(fastest, units.time(u, d));
    total += fastest;
  }
  const double share = total / static_cast<double>(stages.size());
  std::vector<double> busy(num_devices, 0);
  std::vector<int64_t> room(num_devices);
  for (DeviceId d = 0; d < num_devices; ++d) {
    room[d] = topo.device(d).memory_bytes > 0 ? topo.device(d).memory_bytes : std::numeric_limits<int64_t>::max();
  }
  Placement p;
  p.device.assign(problem.graph().num_ops(), 0);
  size_t stage = 0;
  // Unit ids follow the topological order of their first operator.
  for (int32_t u = 0; u < units.num_units(); ++u) {
    if (busy[stages[stage]] >= share && stage + 1 < stages.size()) ++stage;
    DeviceId to = stages[stage];
    if (!units.allowed(u, to) || room[to] < units.param_bytes(u)) {
      to = kNone;
      for (DeviceId d : units.allowed_devices(u)) {  // least busy with room, else most room
        const bool fits = room[d] >= units.param_bytes(u);
        const bool to_fits = to != kNone && room[to] >= units.param_bytes(u);
        if (to == kNone || (fits && !to_fits) ||
            (fits == to_fits &&
             (fits ? busy[d] + units.time(u, d) < busy[to] + units.time(u, to) : room[d] > room[to]))) {
          to = d;
        }
      }
    }
    units.Assign(p, u, to);
    busy[to] += units.time(u, to);
    if (room[to] != std::numeric_limits<int64_t>::max()) room[to] -= units.param_bytes(u);
  }
  return p;
}

absl::StatusOr<StartPoint> ChooseStart(const PlacementProblem& problem, const SearchUnits& units, const Budget& budget,
                                       const LocalSearchOptions& options) {
  StartPoint start;
  if (problem.start != nullptr) {
    if (absl::Status s = ValidatePlacement(*problem.costs, *problem.start); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("the start placement is not valid: ", s.message()));
    }
    start.placement = *problem.start;
    start.source = "given";
    return start;
  }
  if (options.registry == nullptr && !options.start_placers.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("local_search: no registry to find the start placers ",
                                                   absl::StrJoin(options.start_placers, ", "),
                                                   " in, and the problem gives no start"));
  }
  std::vector<const Placer*> placers;
  for (const std::string& name : options.start_placers) {
    absl::StatusOr<const Placer*> p = options.registry->Find(name);
    if (p.ok() && !Recursive(name)) placers.push_back(*p);
  }
  double best = std::numeric_limits<double>::infinity();
  const absl::Time phase_end = Share(budget, options.start_budget_fraction);
  for (size_t i = 0; i < placers.size(); ++i) {
    // Each remaining placer gets an equal part of what is left of the start's share.
    Budget share = budget;
    share.on_improved = nullptr;  // their answers are starting points, not this placer's answers
    if (phase_end != absl::InfiniteFuture()) {
      const absl::Time now = absl::Now();
      share.deadline = now + std::max(absl::ZeroDuration(), phase_end - now) / static_cast<double>(placers.size() - i);
    }
    PlacementProblem sub = problem;
    sub.start = nullptr;
    absl::StatusOr<PlacerResult> r = placers[i]->Place(sub, share);
    if (!r.ok()) {
      start.notes.push_back(absl::StrCat("start ", placers[i]->name(), ": ", r.status().message()));
      continue;
    }
    if (!r->evaluation.fits_memory) {
      start.notes.push_back(absl::StrCat("start ", placers[i]->name(), ": does not fit memory"));
      continue;
    }
    start.notes.push_back(absl::StrFormat("start %s: %.6g", placers[i]->name(), r->evaluation.value));
    if (r->evaluation.value < best) {
      best = r->evaluation.value;
      start.placement = std::move(r->placement);
      start.source = std::string(placers[i]->name());
    }
  }
  if (start.source.empty()) {
    start.placement = GreedyPlacement(problem, units);
    start.source = "greedy";
  }
  return start;
}

}  // namespace placement::search
