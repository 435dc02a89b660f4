#include "policy/heuristics/list_scheduler.h"

#include <algorithm>
#include <queue>
#include <utility>

#include "absl/strings/str_cat.h"

namespace placement::heuristics {
namespace {

// Busy intervals of one device, sorted and disjoint, for insertion-based scheduling.
class Timeline {
 public:
  // The earliest start >= ready of an idle stretch of length w, and where its interval goes.
  std::pair<double, size_t> Earliest(double ready, double w) const {
    auto it = std::upper_bound(busy_.begin(), busy_.end(), ready,
                               [](double r, const std::pair<double, double>& iv) { return r < iv.second; });
    double start = ready;
    for (; it != busy_.end(); ++it) {
      if (start + w <= it->first) break;
      start = std::max(start, it->second);
    }
    return {start, static_cast<size_t>(it - busy_.begin())};
  }
  void Insert(size_t pos, double start, double end) {
    busy_.insert(busy_.begin() + static_cast<std::ptrdiff_t>(pos), {start, end});
  }
  double end() const { return busy_.empty() ? 0.0 : busy_.back().second; }

 private:
  std::vector<std::pair<double, double>> busy_;
};

// State both disciplines share: finish times, operator devices, remaining in-degrees.
class Schedule {
 public:
  Schedule(const CostModel& costs, const UnitIndex& units, MemoryLedger& ledger)
      : costs_(costs), g_(costs.graph()), units_(units), ledger_(ledger), finish_(g_.num_ops(), 0.0),
        device_(g_.num_ops(), kNone), waiting_(g_.num_ops()) {
    for (OpId v = 0; v < g_.num_ops(); ++v) waiting_[v] = g_.in_degree(v);
  }

  // When every input of v (all scheduled) could be on d.
  double DataReady(OpId v, DeviceId d) const {
    double ready = 0;
    for (EdgeId e : g_.in_edges(v)) {
      const OpId p = g_.edge(e).src;
      ready = std::max(ready, finish_[p] + costs_.transfer_time(g_, e, device_[p], d));
    }
    return ready;
  }

  // Marks v done on d at [start, finish); calls on_ready for each successor that this makes ready.
  template <typename F>
  void Commit(OpId v, DeviceId d, double finish, F&& on_ready) {
    const int32_t u = units_.unit_of(v);
    if (!ledger_.placed(u)) ledger_.Place(u, d);
    device_[v] = d;
    finish_[v] = finish;
    makespan_ = std::max(makespan_, finish);
    for (EdgeId e = g_.out_begin(v); e < g_.out_end(v); ++e) {
      const OpId s = g_.edge(e).dst;
      if (--waiting_[s] == 0) on_ready(s);
    }
  }

  bool done(OpId v) const { return device_[v] != kNone; }
  DeviceId device(OpId v) const { return device_[v]; }
  double makespan() const { return makespan_; }

 private:
  const CostModel& costs_;
  const Graph& g_;
  const UnitIndex& units_;
  MemoryLedger& ledger_;
  std::vector<double> finish_;
  std::vector<DeviceId> device_;
  std::vector<int32_t> waiting_;
  double makespan_ = 0;
};

absl::StatusOr<ListScheduleResult> StaticPriority(const CostModel& costs, const UnitIndex& units, MemoryLedger& ledger,
                                                  const ListScheduleOptions& options, const Budget& budget) {
  const Graph& g = costs.graph();
  const int32_t nd = costs.topology().num_devices();
  Schedule schedule(costs, units, ledger);
  std::vector<Timeline> timeline(options.insertion ? nd : 0);
  std::vector<double> avail(nd, 0.0);
  std::vector<DeviceId> candidates;
  candidates.reserve(nd);
  std::vector<double> starts, finishes;  // per candidate, when a chooser decides
  std::vector<size_t> positions;
  ListScheduleResult result;
  BudgetClock clock(budget);

  struct Ready {
    double priority;
    int32_t rank;
    OpId v;
    bool operator<(const Ready& o) const { return priority != o.priority ? priority < o.priority : rank > o.rank; }
  };
  std::vector<Ready> storage;
  storage.reserve(g.num_ops());
  std::priority_queue<Ready> ready(std::less<Ready>(), std::move(storage));
  auto push = [&](OpId v) { ready.push(Ready{options.priority[v], g.topo_rank(v), v}); };
  for (OpId v = 0; v < g.num_ops(); ++v) {
    if (g.in_degree(v) == 0) push(v);
  }

  while (!ready.empty()) {
    if (clock.Tick()) return clock.Status();
    const OpId v = ready.top().v;
    ready.pop();
    const int32_t u = units.unit_of(v);
    candidates.clear();
    if (ledger.placed(u)) {
      candidates.push_back(ledger.device_of(u));
    } else {
      const DeviceId want = options.preferred.empty() ? kNone : options.preferred[u];
      if (want != kNone && units.allowed(u, want) && ledger.Fits(u, want)) {
        candidates.push_back(want);
      } else {
        if (want != kNone) ++result.fallbacks;
        const uint8_t* mask = options.candidates.empty() ? nullptr : &options.candidates[static_cast<size_t>(u) * nd];
        for (DeviceId d = 0; d < nd; ++d) {
          if ((mask == nullptr || mask[d] != 0) && units.allowed(u, d) && ledger.Fits(u, d)) candidates.push_back(d);
        }
        if (candidates.empty() && mask != nullptr) {
          ++result.fallbacks;
          for (DeviceId d = 0; d < nd; ++d) {
            if (units.allowed(u, d) && ledger.Fits(u, d)) candidates.push_back(d);
          }
        }
      }
      if (candidates.empty()) return ledger.Shortfall(u);
    }
    DeviceId best = kNone;
    double best_start = 0, best_finish = 0;
    size_t best_pos = 0;
    const bool chosen = options.choose && !ledger.placed(u) && candidates.size() > 1;
    if (chosen) {
      starts.clear();
      finishes.clear();
      positions.clear();
    }
    for (DeviceId d : candidates) {
      const double ready_at = schedule.DataReady(v, d);
      const double w = costs.op_time(v, d);
      double start;
      size_t pos = 0;
      if (options.insertion) {
        std::tie(start, pos) = timeline[d].Earliest(ready_at, w);
      } else {
        start = std::max(ready_at, avail[d]);
      }
      if (chosen) {
        starts.push_back(start);
        finishes.push_back(start + w);
        positions.push_back(pos);
      } else if (best == kNone || start + w < best_finish) {
        best = d;
        best_start = start;
        best_finish = start + w;
        best_pos = pos;
      }
    }
    if (chosen) {
      const size_t i = std::min(options.choose(u, v, candidates, finishes), candidates.size() - 1);
      best = candidates[i];
      best_start = starts[i];
      best_finish = finishes[i];
      best_pos = positions[i];
    }
    if (options.insertion) {
      timeline[best].Insert(best_pos, best_start, best_finish);
    } else {
      avail[best] = best_finish;
    }
    schedule.Commit(v, best, best_finish, push);
  }
  result.makespan = schedule.makespan();
  return result;
}

absl::StatusOr<ListScheduleResult> EarliestStart(const CostModel& costs, const UnitIndex& units, MemoryLedger& ledger,
                                                 const ListScheduleOptions& options, const Budget& budget) {
  const Graph& g = costs.graph();
  const int32_t n = g.num_ops();
  const int32_t nd = costs.topology().num_devices();
  Schedule schedule(costs, units, ledger);
  ListScheduleResult result;
  BudgetClock clock(budget);

  // Per device, the ready operators that may run there keyed by when their inputs could be there (fixed once
  // an operator is ready, since its predecessors are all scheduled).
  struct Entry {
    double ready;
    int32_t rank;
    OpId v;
    bool operator>(const Entry& o) const { return ready != o.ready ? ready > o.ready : rank > o.rank; }
  };
  std::vector<std::vector<Entry>> heap(nd);
  auto heap_push = [&](DeviceId d, OpId v) {
    heap[d].push_back(Entry{schedule.DataReady(v, d), g.topo_rank(v), v});
    std::push_heap(heap[d].begin(), heap[d].end(), std::greater<Entry>());
  };
  std::vector<double> avail(nd, 0.0);
  std::vector<OpId> last_op(nd, kNone);
  std::vector<uint8_t> is_ready(n, 0);
  // m-SCT: the favourite parent of each operator, and the child a device waits for.
  const bool sct = !options.favourite_child.empty();
  std::vector<OpId> favourite_parent(sct ? n : 0, kNone);
  if (sct) {
    for (OpId p = 0; p < n; ++p) {
      if (options.favourite_child[p] != kNone) favourite_parent[options.favourite_child[p]] = p;
    }
  }
  std::vector<OpId> reserved(nd, kNone);
  std::vector<double> reserved_ready(nd, 0.0);
  std::vector<uint8_t> is_reserved(sct ? n : 0, 0);
  // The operator at the top of each heap was found to fit at this ledger version.
  std::vector<uint64_t> checked(nd, ~uint64_t{0});
  std::vector<OpId> checked_op(nd, kNone);

  auto fits = [&](int32_t u, DeviceId d) { return ledger.placed(u) ? ledger.device_of(u) == d : ledger.Fits(u, d); };

  auto release = [&](OpId v) {
    is_ready[v] = 1;
    const int32_t u = units.unit_of(v);
    if (ledger.placed(u)) {
      heap_push(ledger.device_of(u), v);
    } else {
      for (DeviceId d = 0; d < nd; ++d) {
        if (units.allowed(u, d)) heap_push(d, v);
      }
    }
    if (!sct || favourite_parent[v] == kNone) return;
    // The parent's device waits for v when it has run nothing since the parent and v starts there first.
    const OpId p = favourite_parent[v];
    const DeviceId dp = schedule.device(p);
    if (last_op[dp] != p || reserved[dp] != kNone || !units.allowed(u, dp) || !fits(u, dp)) return;
    const double ready_there = schedule.DataReady(v, dp);
    const double start_there = std::max(avail[dp], ready_there);
    for (DeviceId d = 0; d < nd; ++d) {
      if (d == dp || !units.allowed(u, d) || !fits(u, d)) continue;
      if (std::max(avail[d], schedule.DataReady(v, d)) < start_there) return;
    }
    reserved[dp] = v;
    reserved_ready[dp] = ready_there;
    is_reserved[v] = 1;
  };
  for (OpId v = 0; v < n; ++v) {
    if (g.in_degree(v) == 0) release(v);
  }

  for (int32_t scheduled = 0; scheduled < n; ++scheduled) {
    if (clock.Tick()) return clock.Status();
    DeviceId best = kNone;
    OpId best_v = kNone;
    double best_start = 0, best_finish = 0;
    bool best_favoured = false;
    for (DeviceId d = 0; d < nd; ++d) {
      OpId v = kNone;
      double ready_at = 0;
      if (reserved[d] != kNone) {
        const OpId fc = reserved[d];
        const int32_t u = units.unit_of(fc);
        if (ledger.placed(u) && ledger.device_of(u) != d) {  // a group mate took it elsewhere
          reserved[d] = kNone;
          is_reserved[fc] = 0;
        } else {
          v = fc;
          ready_at = reserved_ready[d];
        }
      }
      if (v == kNone) {
        std::vector<Entry>& h = heap[d];
        while (!h.empty()) {
          const OpId top = h.front().v;
          const int32_t u = units.unit_of(top);
          bool drop = schedule.done(top) || (sct && is_reserved[top]);
          if (!drop && (checked_op[d] != top || checked[d] != ledger.version())) drop = !fits(u, d);
          if (!drop) break;
          std::pop_heap(h.begin(), h.end(), std::greater<Entry>());
          h.pop_back();
        }
        if (h.empty()) continue;
        checked_op[d] = h.front().v;
        checked[d] = ledger.version();
        v = h.front().v;
        ready_at = h.front().ready;
      }
      const double start = std::max(avail[d], ready_at);
      const double finish = start + costs.op_time(v, d);
      const bool favoured = sct && favourite_parent[v] != kNone && schedule.device(favourite_parent[v]) == d;
      if (best == kNone || start < best_start ||
          (start == best_start && (finish < best_finish || (finish == best_finish && favoured && !best_favoured)))) {
        best = d;
        best_v = v;
        best_start = start;
        best_finish = finish;
        best_favoured = favoured;
      }
    }
    if (best == kNone) {
      // Every ready operator lost its last device to memory.
      for (OpId v = 0; v < n; ++v) {
        if (is_ready[v] && !schedule.done(v)) return ledger.Shortfall(units.unit_of(v));
      }
      return absl::InternalError("list scheduling stalled with no ready operator");
    }
    const int32_t u = units.unit_of(best_v);
    const bool newly_placed = !ledger.placed(u);
    if (reserved[best] == best_v) {
      reserved[best] = kNone;
      is_reserved[best_v] = 0;
    }
    if (best_favoured) ++result.favourites_kept;
    avail[best] = best_finish;
    last_op[best] = best_v;
    schedule.Commit(best_v, best, best_finish, release);
    if (newly_placed && units.ops(u).size() > 1) {
      // Group mates that were ready wait in this device's heap only from now on.
      for (OpId w : units.ops(u)) {
        if (is_ready[w] && !schedule.done(w)) heap_push(best, w);
      }
    }
  }
  result.makespan = schedule.makespan();
  return result;
}

}  // namespace

absl::StatusOr<ListScheduleResult> ListSchedule(const CostModel& costs, const UnitIndex& units, MemoryLedger& ledger,
                                                const ListScheduleOptions& options, const Budget& budget) {
  const size_t cells = static_cast<size_t>(units.num_units()) * costs.topology().num_devices();
  if (!options.candidates.empty() && options.candidates.size() != cells) {
    return absl::InvalidArgumentError(absl::StrCat("list scheduling: candidates has ", options.candidates.size(),
                                                   " entries for ", cells, " unit-device pairs"));
  }
  if (options.choose && options.mode != ListScheduleOptions::Mode::kStaticPriority) {
    return absl::InvalidArgumentError("list scheduling: a device chooser needs the static-priority discipline");
  }
  if (options.mode == ListScheduleOptions::Mode::kStaticPriority) {
    return StaticPriority(costs, units, ledger, options, budget);
  }
  return EarliestStart(costs, units, ledger, options, budget);
}

std::vector<double> UpwardRanks(const CostModel& costs, absl::Span<const double> mean_op, absl::Span<const double> mean_edge) {
  const Graph& g = costs.graph();
  std::vector<double> rank(g.num_ops(), 0.0);
  const auto order = g.topo_order();
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const OpId v = *it;
    double tail = 0;
    for (EdgeId e = g.out_begin(v); e < g.out_end(v); ++e) tail = std::max(tail, mean_edge[e] + rank[g.edge(e).dst]);
    rank[v] = mean_op[v] + tail;
  }
  return rank;
}

std::vector<double> DownwardRanks(const CostModel& costs, absl::Span<const double> mean_op, absl::Span<const double> mean_edge) {
  const Graph& g = costs.graph();
  std::vector<double> rank(g.num_ops(), 0.0);
  for (OpId v : g.topo_order()) {
    double head = 0;
    for (EdgeId e : g.in_edges(v)) {
      const OpId p = g.edge(e).src;
      head = std::max(head, rank[p] + mean_op[p] + mean_edge[e]);
    }
    rank[v] = head;
  }
  return rank;
}

}  // namespace placement::heuristics
