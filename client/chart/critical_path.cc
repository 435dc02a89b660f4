#include "client/chart/critical_path.h"

#include <algorithm>
#include <cstdint>
#include <tuple>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace placement::chart {
namespace {

using Kind = TimelineEntry::Kind;

int64_t TransferKey(TensorId tensor, DeviceId to) {
  return (static_cast<int64_t>(tensor) << 32) | static_cast<uint32_t>(to);
}

}  // namespace

absl::StatusOr<std::vector<uint8_t>> CriticalPath(const Graph& g, const Placement& placement,
                                                  const std::vector<TimelineEntry>& timeline) {
  std::vector<int32_t> entry_of(g.num_ops(), kNone);
  absl::flat_hash_map<int64_t, int32_t> transfer_entry;
  for (int32_t i = 0; i < static_cast<int32_t>(timeline.size()); ++i) {
    const TimelineEntry& e = timeline[i];
    if (e.kind == Kind::kOp) {
      if (e.id < 0 || e.id >= g.num_ops() || entry_of[e.id] != kNone) {
        return absl::InvalidArgumentError(absl::StrCat("the timeline lists operator ", e.id, " twice or out of range"));
      }
      entry_of[e.id] = i;
    } else {
      transfer_entry.emplace(TransferKey(e.id, e.peer), i);
    }
  }
  for (OpId v = 0; v < g.num_ops(); ++v) {
    if (entry_of[v] == kNone) {
      return absl::InvalidArgumentError(
          absl::StrCat("the timeline lacks operator '", g.name(v), "'; simulate with record_timeline"));
    }
  }

  // The operator that ran before each one on its device, in the order the device ran them.
  std::vector<OpId> by_start(g.num_ops());
  for (OpId v = 0; v < g.num_ops(); ++v) by_start[v] = v;
  const auto start_order = [&](OpId a, OpId b) {
    const TimelineEntry& x = timeline[entry_of[a]];
    const TimelineEntry& y = timeline[entry_of[b]];
    return std::tie(x.device, x.start, x.end, a) < std::tie(y.device, y.start, y.end, b);
  };
  std::sort(by_start.begin(), by_start.end(), start_order);
  std::vector<OpId> previous(g.num_ops(), kNone);
  for (size_t i = 1; i < by_start.size(); ++i) {
    if (timeline[entry_of[by_start[i]]].device == timeline[entry_of[by_start[i - 1]]].device) {
      previous[by_start[i]] = by_start[i - 1];
    }
  }

  std::vector<uint8_t> on_path(timeline.size(), 0);
  if (g.num_ops() == 0) return on_path;
  OpId v = 0;
  for (OpId w = 1; w < g.num_ops(); ++w) {
    if (timeline[entry_of[w]].end > timeline[entry_of[v]].end) v = w;
  }
  // Every step moves to an operator that ended no later than v started and is earlier in the device order or
  // the graph; the bound on steps only guards against a hand-made timeline that contradicts the graph.
  for (int64_t steps = 0; v != kNone && steps <= 2 * static_cast<int64_t>(g.num_ops()); ++steps) {
    on_path[entry_of[v]] = 1;
    const DeviceId d = placement.device[v];
    double arrival = -1;
    OpId producer = kNone;
    int32_t via = kNone;  // the transfer entry the input came by, if any
    for (EdgeId e : g.in_edges(v)) {
      const OpId u = g.edge(e).src;
      double at = timeline[entry_of[u]].end;
      int32_t x = kNone;
      if (placement.device[u] != d) {
        const auto it = transfer_entry.find(TransferKey(g.edge_tensor(e), d));
        if (it == transfer_entry.end()) {
          return absl::InvalidArgumentError(absl::StrCat("the timeline lacks the transfer of '", g.name(u),
                                                         "' output ", g.edge(e).src_output, " to device ", d));
        }
        x = it->second;
        at = timeline[x].end;
      }
      if (at > arrival) {
        arrival = at;
        producer = u;
        via = x;
      }
    }
    const OpId before = previous[v];
    if (producer != kNone && (before == kNone || arrival >= timeline[entry_of[before]].end)) {
      if (via != kNone) on_path[via] = 1;
      v = producer;
    } else {
      v = before;
    }
  }
  return on_path;
}

}  // namespace placement::chart
