#include "simulator/schedule_plan.h"

#include <algorithm>

namespace placement {
namespace {

// Builds everything the plan knows about one producer and its output tensors from its out-edges: the
// transfers (one per tensor and destination device that reads it), each transfer's readers, the successors
// on the producer's own device, what every reader releases when it ends and how many holders each tensor
// has. A tensor's edges are contiguous (out-edges are sorted by output), so its transfers are made and
// counted in one short pass and its readers filed in a second. The device stamp remembers the last tensor
// that created a transfer to each device, so "already sent there" is one load rather than a set lookup.
class EdgePlanner {
 public:
  EdgePlanner(const CostModel& costs, const Placement& placement, SchedulePlan& plan)
      : g_(costs.graph()),
        costs_(costs),
        device_(placement.device),
        plan_(plan),
        num_devices_(costs.topology().num_devices()),
        stamp_(num_devices_, kNone),
        slot_(num_devices_, kNone) {
    // Release lists are laid out by in-degree up front, so that each edge can file itself under its reader.
    releases_begin_.resize(g_.num_ops() + 1);
    int32_t num_releases = 0;
    for (OpId v = 0; v <= g_.num_ops(); ++v) {
      releases_begin_[v] = num_releases;
      if (v < g_.num_ops()) num_releases += g_.in_degree(v);
    }
    release_fill_.assign(releases_begin_.begin(), releases_begin_.end() - 1);
    plan_.releases.resize(num_releases);
    // Each edge adds at most one successor, one transfer and one reader; reserving spares the copies of growing.
    plan_.local_successors.reserve(g_.num_edges());
    plan_.transfers.reserve(g_.num_edges());
    plan_.readers.resize(g_.num_edges());
  }

  // Appends ops[u] and the tensors of u; ops must be planned in OpId order.
  void PlanOp(OpId u) {
    OpPlan op;
    op.device = device_[u];
    op.time = costs_.op_time(u, op.device);
    op.host = costs_.host_time(u, op.device);
    // kTopological; kOpOrder and upward ranks replace it later.
    op.priority = -static_cast<double>(g_.topo_rank(u));
    op.releases_begin = releases_begin_[u];
    op.successors_begin = static_cast<int32_t>(plan_.local_successors.size());
    op.transfers_begin = static_cast<int32_t>(plan_.transfers.size());
    op.start_bytes = op.end_bytes = g_.temp_bytes(u);
    for (TensorId t = g_.first_output(u); t < g_.first_output(u + 1); ++t) {
      plan_.tensors.push_back(TensorPlan{g_.tensor(t).bytes, 0});
    }
    for (EdgeId first = g_.out_begin(u), last; first < g_.out_end(u); first = last) {
      last = first + 1;
      while (last < g_.out_end(u) && g_.edge(last).src_output == g_.edge(first).src_output) ++last;
      PlanTensor(g_.first_output(u) + g_.edge(first).src_output, op.device, first, last);
    }
    for (TensorId t = g_.first_output(u); t < g_.first_output(u + 1); ++t) {
      op.start_bytes += plan_.tensors[t].bytes;
      if (plan_.tensors[t].holders == 0) op.end_bytes += plan_.tensors[t].bytes;
    }
    plan_.ops.push_back(op);
  }

  // Appends the sentinel that closes the last operator's ranges.
  void Finish() {
    OpPlan end;
    end.releases_begin = releases_begin_.back();
    end.successors_begin = static_cast<int32_t>(plan_.local_successors.size());
    end.transfers_begin = static_cast<int32_t>(plan_.transfers.size());
    plan_.ops.push_back(end);
    plan_.readers.resize(num_readers_);
  }

 private:
  // Tensor t of a producer on `from`, read along edges first .. last - 1.
  void PlanTensor(TensorId t, DeviceId from, EdgeId first, EdgeId last) {
    TensorPlan& tensor = plan_.tensors[t];
    const size_t first_transfer = plan_.transfers.size();
    for (EdgeId e = first; e < last; ++e) {
      const DeviceId to = device_[g_.edge(e).dst];  // denser than plan.ops, so kinder to the cache
      if (to == from) {
        ++tensor.holders;
      } else if (stamp_[to] != t) {
        stamp_[to] = t;
        slot_[to] = static_cast<int32_t>(plan_.transfers.size());
        Transfer x;
        x.duration = costs_.transfer_time(t, from, to);
        x.bytes = tensor.bytes;
        x.tensor = t;
        x.from = from;
        x.to = to;
        x.route = from * num_devices_ + to;
        x.readers_left = 1;
        plan_.transfers.push_back(x);
        ++tensor.holders;
        ++plan_.transfers_per_route[x.route];
      } else {
        ++plan_.transfers[slot_[to]].readers_left;
      }
    }
    for (size_t x = first_transfer; x < plan_.transfers.size(); ++x) {
      plan_.transfers[x].readers_begin = plan_.transfers[x].readers_end = num_readers_;
      num_readers_ += plan_.transfers[x].readers_left;
    }
    for (EdgeId e = first; e < last; ++e) {
      const OpId dst = g_.edge(e).dst;
      const DeviceId to = device_[dst];
      if (to == from) {
        plan_.local_successors.push_back(dst);
        plan_.releases[release_fill_[dst]++] = t;
      } else {
        plan_.readers[plan_.transfers[slot_[to]].readers_end++] = dst;
        plan_.releases[release_fill_[dst]++] = ~slot_[to];
      }
    }
  }

  const Graph& g_;
  const CostModel& costs_;
  const std::vector<DeviceId>& device_;
  SchedulePlan& plan_;
  const int32_t num_devices_;
  std::vector<TensorId> stamp_;          // per device
  std::vector<int32_t> slot_;            // per device: the transfer of stamp_'s tensor to it
  std::vector<int32_t> releases_begin_;  // per op, and the total
  std::vector<int32_t> release_fill_;    // per op: where its next release goes
  int32_t num_readers_ = 0;
};

// HEFT's upward rank on the placed devices: the op's own time plus the longest (transfer + rank) over its
// successors, transfers counting only where the edge leaves the device. The plan's own lists give both kinds
// of successor, and each transfer its time, without going back to the graph or the cost model.
void PlanUpwardRanks(const Graph& g, SchedulePlan& plan) {
  const auto order = g.topo_order();
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const OpId v = *it;
    OpPlan& op = plan.ops[v];
    const OpPlan& after = plan.ops[v + 1];
    double longest_after = 0;
    for (int32_t i = op.successors_begin; i < after.successors_begin; ++i) {
      longest_after = std::max(longest_after, plan.ops[plan.local_successors[i]].priority);
    }
    for (int32_t xi = op.transfers_begin; xi < after.transfers_begin; ++xi) {
      const Transfer& x = plan.transfers[xi];
      for (int32_t i = x.readers_begin; i < x.readers_end; ++i) {
        longest_after = std::max(longest_after, x.duration + plan.ops[plan.readers[i]].priority);
      }
    }
    op.priority = op.time + longest_after;
  }
}

}  // namespace

SchedulePlan BuildSchedulePlan(const CostModel& costs, const Placement& placement, QueuePriority priority) {
  const Graph& g = costs.graph();
  const int32_t num_devices = costs.topology().num_devices();
  SchedulePlan plan;
  plan.ops.reserve(g.num_ops() + 1);
  plan.tensors.reserve(g.num_tensors());
  plan.num_routes = num_devices * num_devices;
  plan.transfers_per_route.assign(plan.num_routes, 0);
  EdgePlanner planner(costs, placement, plan);
  for (OpId u = 0; u < g.num_ops(); ++u) planner.PlanOp(u);
  planner.Finish();
  if (priority == QueuePriority::kUpwardRank) PlanUpwardRanks(g, plan);
  if (priority == QueuePriority::kOpOrder) {
    for (OpId u = 0; u < g.num_ops(); ++u) plan.ops[u].priority = -static_cast<double>(u);
  }
  return plan;
}

}  // namespace placement
