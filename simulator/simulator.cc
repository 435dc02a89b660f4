#include "simulator/simulator.h"

#include <algorithm>
#include <cmath>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "simulator/event_queue.h"
#include "simulator/memory_tracker.h"
#include "simulator/route_queues.h"
#include "simulator/schedule_plan.h"

namespace placement {
namespace {

// Events at one timestamp are handled in (kind, id) order. Only operator ends request transfers, so this
// order is the request order that decides which of two simultaneous transfers gets a shared link first; the
// order of the other kinds changes nothing but is fixed all the same.
enum EventKind : uint64_t {
  kOpEnd = 0,       // id: the operator
  kRoute = 1,       // id: a route whose head transfer starts or ends
  kDeviceFree = 2,  // id: a device done idling after an operator
};

struct ReadyOp {
  double priority;
  OpId op;
};

// Max-heap on priority, then the smaller OpId.
struct RunsLater {
  bool operator()(const ReadyOp& a, const ReadyOp& b) const {
    return a.priority < b.priority || (a.priority == b.priority && a.op > b.op);
  }
};

std::vector<int64_t> ParameterBytes(const Graph& g, const Placement& placement, int32_t num_devices) {
  std::vector<int64_t> bytes(num_devices, 0);
  for (OpId v = 0; v < g.num_ops(); ++v) bytes[placement.device[v]] += g.param_bytes(v);
  return bytes;
}

class StepSimulation {
 public:
  StepSimulation(const CostModel& costs, const Placement& placement, const SimulatorConfig& config)
      : g_(costs.graph()),
        topo_(costs.topology()),
        config_(config),
        plan_(BuildSchedulePlan(costs, placement, config.priority)),
        memory_(ParameterBytes(g_, placement, topo_.num_devices()), config.record_timeline),
        routes_(plan_.transfers_per_route) {
    const int32_t num_devices = topo_.num_devices();
    remaining_inputs_.resize(g_.num_ops());
    for (OpId v = 0; v < g_.num_ops(); ++v) remaining_inputs_[v] = g_.in_degree(v);
    link_free_at_.assign(topo_.num_resources(), 0);
    running_.assign(num_devices, 0);
    host_thread_.resize(num_devices);
    int32_t threads = 0;
    for (DeviceId d = 0; d < num_devices; ++d) {
      host_thread_[d] = config.host_thread_per_device ? d : topo_.device(d).host;
      threads = std::max(threads, host_thread_[d] + 1);
    }
    host_issued_.assign(threads, 0);
    dispatch_pending_.assign(num_devices, 0);
    dispatch_list_.reserve(num_devices);
    ready_.resize(num_devices);
    std::vector<int32_t> ops_on(num_devices, 0);
    for (DeviceId d : placement.device) ++ops_on[d];
    for (DeviceId d = 0; d < num_devices; ++d) ready_[d].reserve(ops_on[d]);
    result_.devices.resize(num_devices);
    if (config_.record_timeline) result_.timeline.reserve(g_.num_ops() + plan_.transfers.size());
  }

  absl::StatusOr<SimulationResult> Run() && {
    for (OpId v = 0; v < g_.num_ops(); ++v) {
      if (remaining_inputs_[v] == 0) MakeReady(v);
    }
    DispatchPending();
    memory_.Settle(now_);
    while (!events_.empty()) {
      const EventQueue::Event first = events_.Pop();
      now_ = first.time;
      Handle(first.tie);
      // Everything that happens at `now_` lands before any device picks its next operator, so the queue
      // priority, not the event order, decides among operators that became ready together.
      while (events_.more_due_now()) Handle(events_.Pop().tie);
      DispatchPending();
      memory_.Settle(now_);
    }
    if (ops_run_ != g_.num_ops()) {
      return absl::InternalError(
          absl::StrCat("the simulation stalled after ", ops_run_, " of ", g_.num_ops(), " operators"));
    }
    Finish();
    return std::move(result_);
  }

 private:
  void Handle(uint64_t tie) {
    const auto id = static_cast<int32_t>(tie & 0xffffffffu);
    switch (static_cast<EventKind>(tie >> 32)) {
      case kOpEnd:
        FinishOp(id);
        break;
      case kRoute:
        AdvanceRoute(id);
        break;
      case kDeviceFree:
        ReleaseDevice(id);
        break;
    }
  }

  void Push(double time, EventKind kind, int32_t id) {
    events_.Push(time, (static_cast<uint64_t>(kind) << 32) | static_cast<uint32_t>(id));
  }

  void MakeReady(OpId v) {
    const DeviceId d = plan_.ops[v].device;
    ready_[d].push_back(ReadyOp{plan_.ops[v].priority, v});
    std::push_heap(ready_[d].begin(), ready_[d].end(), RunsLater{});
    MarkForDispatch(d);
  }

  void MarkForDispatch(DeviceId d) {
    if (!dispatch_pending_[d]) {
      dispatch_pending_[d] = 1;
      dispatch_list_.push_back(d);
    }
  }

  void ReleaseDevice(DeviceId d) {
    running_[d] = 0;
    MarkForDispatch(d);
  }

  void DispatchPending() {
    for (DeviceId d : dispatch_list_) {
      dispatch_pending_[d] = 0;
      if (running_[d] || ready_[d].empty()) continue;
      std::pop_heap(ready_[d].begin(), ready_[d].end(), RunsLater{});
      const OpId v = ready_[d].back().op;
      ready_[d].pop_back();
      StartOp(v, d);
    }
    dispatch_list_.clear();
  }

  // The host thread issues operators one after another, in the order its devices start them, without waiting
  // for them; a kernel starts once it is issued and the device is free.
  void StartOp(OpId v, DeviceId d) {
    const OpPlan& op = plan_.ops[v];
    running_[d] = 1;
    memory_.Allocate(d, op.start_bytes);
    double& issued = host_issued_[host_thread_[d]];
    issued += op.host;
    const double start = std::max(now_, issued);
    const double end = start + op.time;
    result_.devices[d].busy += op.time;
    Push(end, kOpEnd, v);
    if (config_.record_timeline)
      result_.timeline.push_back(TimelineEntry{TimelineEntry::Kind::kOp, v, d, -1, start, end});
  }

  void FinishOp(OpId v) {
    const OpPlan& op = plan_.ops[v];
    const OpPlan& after = plan_.ops[v + 1];
    const DeviceId d = op.device;
    ++ops_run_;
    result_.makespan = std::max(result_.makespan, now_);
    memory_.Free(d, op.end_bytes);
    // Inputs v was the last reader of on this device: the producer's copy, or the received one.
    for (int32_t i = op.releases_begin; i < after.releases_begin; ++i) {
      const int32_t r = plan_.releases[i];
      if (r >= 0) {
        if (--plan_.tensors[r].holders == 0) memory_.Free(d, plan_.tensors[r].bytes);
      } else if (--plan_.transfers[~r].readers_left == 0) {
        memory_.Free(d, plan_.transfers[~r].bytes);
      }
    }
    for (int32_t i = op.successors_begin; i < after.successors_begin; ++i) {
      const OpId w = plan_.local_successors[i];
      if (--remaining_inputs_[w] == 0) MakeReady(w);
    }
    for (int32_t x = op.transfers_begin; x < after.transfers_begin; ++x) RequestTransfer(x);
    if (config_.op_gap > 0) {
      Push(now_ + config_.op_gap, kDeviceFree, d);
    } else {
      ReleaseDevice(d);
    }
  }

  // Reserves every link on the path from the first moment all are free; links are claimed in request order,
  // never back-filled, which is what makes transfers on a shared link queue.
  void RequestTransfer(int32_t xi) {
    Transfer& x = plan_.transfers[xi];
    const auto links = topo_.path_resources(topo_.path(x.from, x.to));
    x.start = now_;
    for (int32_t r : links) x.start = std::max(x.start, link_free_at_[r]);
    x.end = x.start + x.duration;
    for (int32_t r : links) link_free_at_[r] = x.end + config_.transfer_gap;
    ++result_.transfers;
    result_.bytes_moved += x.bytes;
    if (routes_.Append(x.route, xi)) ScheduleHead(x.route, xi);
    if (config_.record_timeline) {
      result_.timeline.push_back(TimelineEntry{TimelineEntry::Kind::kTransfer, x.tensor, x.from, x.to, x.start, x.end});
    }
  }

  // The route's next event: its head's start, or its end once started. A start due now happens at once.
  void ScheduleHead(int32_t route, int32_t xi) {
    Transfer& x = plan_.transfers[xi];
    if (x.start == now_) StartTransfer(x);
    Push(x.started ? x.end : x.start, kRoute, route);
  }

  void StartTransfer(Transfer& x) {
    x.started = true;
    memory_.Allocate(x.to, x.bytes);  // the received copy exists from its first byte
  }

  void AdvanceRoute(int32_t route) {
    Transfer& x = plan_.transfers[routes_.head(route)];
    if (!x.started) {
      StartTransfer(x);
      Push(x.end, kRoute, route);
      return;
    }
    FinishTransfer(x);
    if (const int32_t next = routes_.PopHead(route); next != kNone) ScheduleHead(route, next);
  }

  void FinishTransfer(const Transfer& x) {
    if (--plan_.tensors[x.tensor].holders == 0) memory_.Free(x.from, x.bytes);
    for (int32_t i = x.readers_begin; i < x.readers_end; ++i) {
      const OpId w = plan_.readers[i];
      if (--remaining_inputs_[w] == 0) MakeReady(w);
    }
  }

  void Finish() {
    for (DeviceId d = 0; d < topo_.num_devices(); ++d) {
      DeviceReport& r = result_.devices[d];
      r.peak_memory = memory_.peak(d);
      r.capacity = topo_.device(d).memory_bytes;
      r.oom = r.capacity > 0 && r.peak_memory > r.capacity;
      if (r.oom) result_.fits_memory = false;
    }
    if (config_.record_timeline) {
      result_.memory = memory_.TakeSamples();
      std::sort(result_.timeline.begin(), result_.timeline.end(), [](const TimelineEntry& a, const TimelineEntry& b) {
        return std::tie(a.start, a.kind, a.id, a.peer) < std::tie(b.start, b.kind, b.id, b.peer);
      });
    }
  }

  const Graph& g_;
  const Topology& topo_;
  const SimulatorConfig& config_;
  SchedulePlan plan_;  // also holds the state of tensors and transfers
  MemoryTracker memory_;
  RouteQueues routes_;
  EventQueue events_;
  double now_ = 0;
  int32_t ops_run_ = 0;
  std::vector<int32_t> remaining_inputs_;  // per op: inputs not yet on its device
  std::vector<double> link_free_at_;       // per link resource
  std::vector<int32_t> host_thread_;       // per device: the thread that issues its operators
  std::vector<double> host_issued_;        // per thread: when it has issued the operators started
  std::vector<uint8_t> running_;           // per device: busy with an operator or idling after one
  std::vector<uint8_t> dispatch_pending_;  // per device: in dispatch_list_
  std::vector<DeviceId> dispatch_list_;
  std::vector<std::vector<ReadyOp>> ready_;  // per device: a heap
  SimulationResult result_;
};

}  // namespace

SimulatorConfig SimulatorConfig::Placeto() {
  SimulatorConfig c;
  c.op_gap = 5.7e-6;
  c.transfer_gap = 25e-6;
  return c;
}

absl::StatusOr<Topology> PlacetoTopology(std::vector<Device> devices) {
  constexpr double kPlacetoBusBytesPerSecond = 7600e6;  // 7,600 bytes per microsecond
  return BuildSharedBus("placeto", std::move(devices), kPlacetoBusBytesPerSecond, /*latency=*/0);
}

absl::StatusOr<SimulationResult> Simulate(const CostModel& costs, const Placement& placement,
                                          const SimulatorConfig& config) {
  if (absl::Status s = ValidatePlacement(costs, placement); !s.ok()) return s;
  for (auto [name, gap] : {std::pair{"op_gap", config.op_gap}, std::pair{"transfer_gap", config.transfer_gap}}) {
    if (!std::isfinite(gap) || gap < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("simulator ", name, " must be a finite non-negative number of seconds (got ", gap, ")"));
    }
  }
  return StepSimulation(costs, placement, config).Run();
}

}  // namespace placement
