#include "graph/placement.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace placement {

absl::Status ValidatePlacement(const CostModel& costs, const Placement& placement) {
  const Graph& g = costs.graph();
  const Topology& t = costs.topology();
  if (static_cast<int32_t>(placement.device.size()) != g.num_ops()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the placement assigns ", placement.device.size(), " operators but the graph has ", g.num_ops()));
  }
  std::vector<DeviceId> pinned_to(g.pinned_devices().size(), -1);
  for (size_t p = 0; p < pinned_to.size(); ++p) pinned_to[p] = t.FindDevice(g.pinned_devices()[p]);
  std::vector<OpId> group_first(g.colocation_groups().size(), kNone);
  for (OpId op = 0; op < g.num_ops(); ++op) {
    const DeviceId d = placement.device[op];
    if (d < 0 || d >= t.num_devices()) {
      return absl::InvalidArgumentError(absl::StrCat("operator '", g.name(op), "' is placed on device ", d,
                                                     ", but the topology has devices 0..", t.num_devices() - 1));
    }
    if (!costs.can_run(op, d)) {
      return absl::InvalidArgumentError(absl::StrCat("operator '", g.name(op), "' cannot run on device '",
                                                     t.device(d).name, "' (kind ", t.device(d).kind,
                                                     "): it has no measured time for that kind"));
    }
    if (g.pinned(op) != kNone) {
      const DeviceId want = pinned_to[g.pinned(op)];
      if (want < 0) {
        return absl::InvalidArgumentError(absl::StrCat("operator '", g.name(op), "' is pinned to device '",
                                                       g.pinned_devices()[g.pinned(op)],
                                                       "', which the topology does not have"));
      }
      if (want != d) {
        return absl::InvalidArgumentError(absl::StrCat("operator '", g.name(op), "' is pinned to '",
                                                       t.device(want).name, "' but placed on '", t.device(d).name,
                                                       "'"));
      }
    }
    if (const int32_t grp = g.colocation_group(op); grp != kNone) {
      if (group_first[grp] == kNone) {
        group_first[grp] = op;
      } else if (placement.device[group_first[grp]] != d) {
        const OpId other = group_first[grp];
        return absl::InvalidArgumentError(absl::StrCat(
            "colocation group '", g.colocation_groups()[grp], "' is split: '", g.name(other), "' is on '",
            t.device(placement.device[other]).name, "' but '", g.name(op), "' is on '", t.device(d).name, "'"));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace placement
