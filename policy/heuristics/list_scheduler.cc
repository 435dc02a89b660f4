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
      : costs_(costs),
        g_(costs.graph()),
        units_(units),
        ledger_(ledger),
        finish_(g_.num_ops(), 0.0),
        device_(g_.num_ops(), kNone),
        waiting_(g_.num_ops()) {
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

// Where each device is free: the end of its last operator, or (with insertion) its busy intervals.
class DeviceQueues {
 public:
  DeviceQueues(int32_t devices, bool insertion)
      : insertion_(insertion), timeline_(insertion ? devices : 0), avail_(devices, 0.0) {}

  // The earliest start of a w-long operator whose inputs are there at `ready`, and (with insertion) the slot.
  std::pair<double, size_t> Start(DeviceId d, double ready, double w) const {
    if (insertion_) return timeline_[d].Earliest(ready, w);
    return {std::max(ready, avail_[d]), 0};
  }
  void Occupy(DeviceId d, size_t slot, double start, double finish) {
    if (insertion_) {
      timeline_[d].Insert(slot, start, finish);
    } else {
      avail_[d] = finish;
    }
  }

 private:
  bool insertion_;
  std::vector<Timeline> timeline_;
  std::vector<double> avail_;
};

// The devices v's unit may go to: its device when placed, the preferred one when it fits, else every allowed
// device that fits (within the candidate mask, unless none there fits). Empty when memory rules out all.
void CandidateDevices(const UnitIndex& units, const MemoryLedger& ledger, const ListScheduleOptions& options,
                      int32_t nd, int32_t u, std::vector<DeviceId>* out, ListScheduleResult* result) {
  out->clear();
  if (ledger.placed(u)) {
    out->push_back(ledger.device_of(u));
    return;
  }
  const DeviceId want = options.preferred.empty() ? kNone : options.preferred[u];
  if (want != kNone && units.allowed(u, want) && ledger.Fits(u, want)) {
    out->push_back(want);
    return;
  }
  if (want != kNone) ++result->fallbacks;
  const uint8_t* mask = options.candidates.empty() ? nullptr : &options.candidates[static_cast<size_t>(u) * nd];
  for (DeviceId d = 0; d < nd; ++d) {
    if ((mask == nullptr || mask[d] != 0) && units.allowed(u, d) && ledger.Fits(u, d)) out->push_back(d);
  }
  if (!out->empty() || mask == nullptr) return;
  ++result->fallbacks;
  for (DeviceId d = 0; d < nd; ++d) {
    if (units.allowed(u, d) && ledger.Fits(u, d)) out->push_back(d);
  }
}

// One device for v among the candidates, with its start, finish and slot.
struct Choice {
  DeviceId device = kNone;
  double start = 0;
  double finish = 0;
  size_t slot = 0;
};

// The candidate where v finishes first, or (with a chooser, for a unit not yet placed) the chooser's pick.
Choice ChooseDevice(const CostModel& costs, const Schedule& schedule, const DeviceQueues& queues,
                    const ListScheduleOptions& options, bool ask_chooser, int32_t u, OpId v,
                    const std::vector<DeviceId>& candidates) {
  Choice best;
  std::vector<Choice> all;
  for (DeviceId d : candidates) {
    const double w = costs.op_time(v, d);
    const auto [start, slot] = queues.Start(d, schedule.DataReady(v, d), w);
    const Choice c{d, start, start + w, slot};
    if (ask_chooser) {
      all.push_back(c);
    } else if (best.device == kNone || c.finish < best.finish) {
      best = c;
    }
  }
  if (!ask_chooser) return best;
  std::vector<double> finishes;
  finishes.reserve(all.size());
  for (const Choice& c : all) finishes.push_back(c.finish);
  return all[std::min(options.choose(u, v, candidates, finishes), all.size() - 1)];
}

absl::StatusOr<ListScheduleResult> StaticPriority(const CostModel& costs, const UnitIndex& units, MemoryLedger& ledger,
                                                  const ListScheduleOptions& options, const Budget& budget) {
  const Graph& g = costs.graph();
  const int32_t nd = costs.topology().num_devices();
  Schedule schedule(costs, units, ledger);
  DeviceQueues queues(nd, options.insertion);
  std::vector<DeviceId> candidates;
  candidates.reserve(nd);
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
    CandidateDevices(units, ledger, options, nd, u, &candidates, &result);
    if (candidates.empty()) return ledger.Shortfall(u);
    const bool ask_chooser = options.choose && !ledger.placed(u) && candidates.size() > 1;
    const Choice c = ChooseDevice(costs, schedule, queues, options, ask_chooser, u, v, candidates);
    queues.Occupy(c.device, c.slot, c.start, c.finish);
    schedule.Commit(v, c.device, c.finish, push);
  }
  result.makespan = schedule.makespan();
  return result;
}

// Earliest start (m-ETF, and m-SCT with favourite children): at each step, the (device, ready operator) pair
// that can start soonest. Per device a heap of the ready operators that may run there, keyed by when their
// inputs could be there (fixed once an operator is ready, since its predecessors are all scheduled).
class EarliestStartScheduler {
 public:
  EarliestStartScheduler(const CostModel& costs, const UnitIndex& units, MemoryLedger& ledger,
                         const ListScheduleOptions& options)
      : costs_(costs),
        g_(costs.graph()),
        units_(units),
        ledger_(ledger),
        n_(g_.num_ops()),
        nd_(costs.topology().num_devices()),
        schedule_(costs, units, ledger),
        heap_(nd_),
        avail_(nd_, 0.0),
        last_op_(nd_, kNone),
        is_ready_(n_, 0),
        sct_(!options.favourite_child.empty()),
        favourite_parent_(sct_ ? n_ : 0, kNone),
        reserved_(nd_, kNone),
        reserved_ready_(nd_, 0.0),
        is_reserved_(sct_ ? n_ : 0, 0),
        checked_(nd_, ~uint64_t{0}),
        checked_op_(nd_, kNone) {
    for (OpId p = 0; sct_ && p < n_; ++p) {
      if (options.favourite_child[p] != kNone) favourite_parent_[options.favourite_child[p]] = p;
    }
  }

  absl::StatusOr<ListScheduleResult> Run(const Budget& budget) {
    BudgetClock clock(budget);
    for (OpId v = 0; v < n_; ++v) {
      if (g_.in_degree(v) == 0) Release(v);
    }
    for (int32_t scheduled = 0; scheduled < n_; ++scheduled) {
      if (clock.Tick()) return clock.Status();
      const Pick best = BestPick();
      if (best.device == kNone) return Stalled();
      Commit(best);
    }
    result_.makespan = schedule_.makespan();
    return result_;
  }

 private:
  struct Entry {
    double ready;
    int32_t rank;
    OpId v;
    bool operator>(const Entry& o) const { return ready != o.ready ? ready > o.ready : rank > o.rank; }
  };
  struct Pick {
    DeviceId device = kNone;
    OpId v = kNone;
    double start = 0;
    double finish = 0;
    bool favoured = false;
  };

  bool Fits(int32_t u, DeviceId d) const { return ledger_.placed(u) ? ledger_.device_of(u) == d : ledger_.Fits(u, d); }

  void HeapPush(DeviceId d, OpId v) {
    heap_[d].push_back(Entry{schedule_.DataReady(v, d), g_.topo_rank(v), v});
    std::push_heap(heap_[d].begin(), heap_[d].end(), std::greater<Entry>());
  }

  // v is ready: into the heap of each device it may run on, and for m-SCT reserved on its favourite parent's
  // device when that device has run nothing since the parent and v starts there first.
  void Release(OpId v) {
    is_ready_[v] = 1;
    const int32_t u = units_.unit_of(v);
    if (ledger_.placed(u)) {
      HeapPush(ledger_.device_of(u), v);
    } else {
      for (DeviceId d = 0; d < nd_; ++d) {
        if (units_.allowed(u, d)) HeapPush(d, v);
      }
    }
    if (sct_ && favourite_parent_[v] != kNone) MaybeReserve(v, u);
  }

  void MaybeReserve(OpId v, int32_t u) {
    const OpId p = favourite_parent_[v];
    const DeviceId dp = schedule_.device(p);
    if (last_op_[dp] != p || reserved_[dp] != kNone || !units_.allowed(u, dp) || !Fits(u, dp)) return;
    const double ready_there = schedule_.DataReady(v, dp);
    const double start_there = std::max(avail_[dp], ready_there);
    for (DeviceId d = 0; d < nd_; ++d) {
      if (d == dp || !units_.allowed(u, d) || !Fits(u, d)) continue;
      if (std::max(avail_[d], schedule_.DataReady(v, d)) < start_there) return;
    }
    reserved_[dp] = v;
    reserved_ready_[dp] = ready_there;
    is_reserved_[v] = 1;
  }

  // The operator device d would run next and when its inputs are there: its reservation, else the top of its
  // heap that is still to run and fits (checked once per ledger version). False when there is none.
  bool NextOn(DeviceId d, OpId* v, double* ready_at) {
    if (reserved_[d] != kNone) {
      const OpId fc = reserved_[d];
      const int32_t u = units_.unit_of(fc);
      if (!ledger_.placed(u) || ledger_.device_of(u) == d) {
        *v = fc;
        *ready_at = reserved_ready_[d];
        return true;
      }
      reserved_[d] = kNone;  // a group mate took it elsewhere
      is_reserved_[fc] = 0;
    }
    std::vector<Entry>& h = heap_[d];
    while (!h.empty()) {
      const OpId top = h.front().v;
      bool drop = schedule_.done(top) || (sct_ && is_reserved_[top]);
      if (!drop && (checked_op_[d] != top || checked_[d] != ledger_.version())) drop = !Fits(units_.unit_of(top), d);
      if (!drop) break;
      std::pop_heap(h.begin(), h.end(), std::greater<Entry>());
      h.pop_back();
    }
    if (h.empty()) return false;
    checked_op_[d] = h.front().v;
    checked_[d] = ledger_.version();
    *v = h.front().v;
    *ready_at = h.front().ready;
    return true;
  }

  // The device whose next operator starts first (then finishes first, then is its favourite parent's device).
  Pick BestPick() {
    Pick best;
    for (DeviceId d = 0; d < nd_; ++d) {
      OpId v = kNone;
      double ready_at = 0;
      if (!NextOn(d, &v, &ready_at)) continue;
      const double start = std::max(avail_[d], ready_at);
      const double finish = start + costs_.op_time(v, d);
      const bool favoured = sct_ && favourite_parent_[v] != kNone && schedule_.device(favourite_parent_[v]) == d;
      if (best.device == kNone || start < best.start ||
          (start == best.start && (finish < best.finish || (finish == best.finish && favoured && !best.favoured)))) {
        best = Pick{d, v, start, finish, favoured};
      }
    }
    return best;
  }

  void Commit(const Pick& best) {
    const int32_t u = units_.unit_of(best.v);
    const bool newly_placed = !ledger_.placed(u);
    if (reserved_[best.device] == best.v) {
      reserved_[best.device] = kNone;
      is_reserved_[best.v] = 0;
    }
    if (best.favoured) ++result_.favourites_kept;
    avail_[best.device] = best.finish;
    last_op_[best.device] = best.v;
    schedule_.Commit(best.v, best.device, best.finish, [this](OpId s) { Release(s); });
    if (newly_placed && units_.ops(u).size() > 1) {
      // Group mates that were ready wait in this device's heap only from now on.
      for (OpId w : units_.ops(u)) {
        if (is_ready_[w] && !schedule_.done(w)) HeapPush(best.device, w);
      }
    }
  }

  // Every ready operator lost its last device to memory.
  absl::Status Stalled() const {
    for (OpId v = 0; v < n_; ++v) {
      if (is_ready_[v] && !schedule_.done(v)) return ledger_.Shortfall(units_.unit_of(v));
    }
    return absl::InternalError("list scheduling stalled with no ready operator");
  }

  const CostModel& costs_;
  const Graph& g_;
  const UnitIndex& units_;
  MemoryLedger& ledger_;
  const int32_t n_;
  const int32_t nd_;
  Schedule schedule_;
  ListScheduleResult result_;
  std::vector<std::vector<Entry>> heap_;
  std::vector<double> avail_;
  std::vector<OpId> last_op_;
  std::vector<uint8_t> is_ready_;
  // m-SCT: the favourite parent of each operator, and the child a device waits for.
  const bool sct_;
  std::vector<OpId> favourite_parent_;
  std::vector<OpId> reserved_;
  std::vector<double> reserved_ready_;
  std::vector<uint8_t> is_reserved_;
  // The operator at the top of each heap was found to fit at this ledger version.
  std::vector<uint64_t> checked_;
  std::vector<OpId> checked_op_;
};

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
  return EarliestStartScheduler(costs, units, ledger, options).Run(budget);
}

std::vector<double> UpwardRanks(const CostModel& costs, absl::Span<const double> mean_op,
                                absl::Span<const double> mean_edge) {
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

std::vector<double> DownwardRanks(const CostModel& costs, absl::Span<const double> mean_op,
                                  absl::Span<const double> mean_edge) {
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
