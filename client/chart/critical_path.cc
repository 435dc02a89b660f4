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

// Where each operator and each transfer is in the timeline.
struct TimelineIndex {
  std::vector<int32_t> entry_of;                         // by operator
  absl::flat_hash_map<int64_t, int32_t> transfer_entry;  // by TransferKey(tensor, destination device)
};

// INVALID_ARGUMENT when an operator is listed twice, out of range, or not at all.
absl::StatusOr<TimelineIndex> IndexTimeline(const Graph& g, const std::vector<TimelineEntry>& timeline) {
  TimelineIndex index;
  index.entry_of.assign(g.num_ops(), kNone);
  for (int32_t i = 0; i < static_cast<int32_t>(timeline.size()); ++i) {
    const TimelineEntry& e = timeline[i];
    if (e.kind == Kind::kOp) {
      if (e.id < 0 || e.id >= g.num_ops() || index.entry_of[e.id] != kNone) {
        return absl::InvalidArgumentError(absl::StrCat("the timeline lists operator ", e.id, " twice or out of range"));
      }
      index.entry_of[e.id] = i;
    } else {
      index.transfer_entry.emplace(TransferKey(e.id, e.peer), i);
    }
  }
  for (OpId v = 0; v < g.num_ops(); ++v) {
    if (index.entry_of[v] == kNone) {
      return absl::InvalidArgumentError(
          absl::StrCat("the timeline lacks operator '", g.name(v), "'; simulate with record_timeline"));
    }
  }
  return index;
}

// The operator that ran before each one on its device, in the order the device ran them.
std::vector<OpId> PreviousOnDevice(const Graph& g, const std::vector<TimelineEntry>& timeline,
                                   const std::vector<int32_t>& entry_of) {
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
  return previous;
}

// The input of an operator that arrived last: its producer, and the transfer it came by when it crossed devices.
struct LastInput {
  double arrival = -1;
  OpId producer = kNone;
  int32_t via = kNone;  // the transfer entry, if any
};

absl::StatusOr<LastInput> LastInputOf(OpId v, const Graph& g, const Placement& placement,
                                      const std::vector<TimelineEntry>& timeline, const TimelineIndex& index) {
  const DeviceId d = placement.device[v];
  LastInput last;
  for (EdgeId e : g.in_edges(v)) {
    const OpId u = g.edge(e).src;
    double at = timeline[index.entry_of[u]].end;
    int32_t x = kNone;
    if (placement.device[u] != d) {
      const auto it = index.transfer_entry.find(TransferKey(g.edge_tensor(e), d));
      if (it == index.transfer_entry.end()) {
        return absl::InvalidArgumentError(absl::StrCat("the timeline lacks the transfer of '", g.name(u), "' output ",
                                                       g.edge(e).src_output, " to device ", d));
      }
      x = it->second;
      at = timeline[x].end;
    }
    if (at > last.arrival) last = LastInput{at, u, x};
  }
  return last;
}

}  // namespace

absl::StatusOr<std::vector<uint8_t>> CriticalPath(const Graph& g, const Placement& placement,
                                                  const std::vector<TimelineEntry>& timeline) {
  absl::StatusOr<TimelineIndex> index = IndexTimeline(g, timeline);
  if (!index.ok()) return index.status();
  const std::vector<int32_t>& entry_of = index->entry_of;
  const std::vector<OpId> previous = PreviousOnDevice(g, timeline, entry_of);

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
    absl::StatusOr<LastInput> last = LastInputOf(v, g, placement, timeline, *index);
    if (!last.ok()) return last.status();
    const OpId before = previous[v];
    if (last->producer != kNone && (before == kNone || last->arrival >= timeline[entry_of[before]].end)) {
      if (last->via != kNone) on_path[last->via] = 1;
      v = last->producer;
    } else {
      v = before;
    }
  }
  return on_path;
}

}  // namespace placement::chart
