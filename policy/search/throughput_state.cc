#include "policy/search/throughput_state.h"

#include <algorithm>
#include <utility>

#include "simulator/objectives.h"

namespace placement::search {

ThroughputState::ThroughputState(const CostModel& costs, const SearchUnits& units, Placement placement)
    : costs_(&costs), units_(&units), placement_(std::move(placement)) {
  const Graph& g = costs.graph();
  const Topology& topo = costs.topology();
  const int32_t num_devices = topo.num_devices();
  pays_.resize(num_devices);
  for (DeviceId d = 0; d < num_devices; ++d) pays_[d] = topo.device(d).type != DeviceType::kCpu;

  // Reader lists sized by the tensor's reader count (capped by the device count), so they never grow.
  std::vector<int32_t> readers(g.num_tensors(), 0);
  for (EdgeId e = 0; e < g.num_edges(); ++e) ++readers[g.edge_tensor(e)];
  reader_begin_.assign(g.num_tensors() + 1, 0);
  for (TensorId t = 0; t < g.num_tensors(); ++t)
    reader_begin_[t + 1] = reader_begin_[t] + std::min(readers[t], num_devices);
  reader_size_.assign(g.num_tensors(), 0);
  reader_device_.assign(reader_begin_.back(), kNone);
  reader_count_.assign(reader_begin_.back(), 0);
  for (EdgeId e = 0; e < g.num_edges(); ++e) CountReader(g.edge_tensor(e), placement_.device[g.edge(e).dst], +1);

  held_.assign(num_devices, 0);
  for (OpId v = 0; v < g.num_ops(); ++v) held_[placement_.device[v]] += costs.pipelined_bytes(v);
  load_ = DeviceLoads(costs, placement_);
}

bool ThroughputState::Fits(int32_t u, DeviceId d) const {
  const int64_t capacity = costs_->topology().device(d).memory_bytes;
  if (capacity == 0 || device_of_unit(u) == d) return true;
  return held_[d] + units_->pipelined_bytes(u) <= capacity;
}

double ThroughputState::MaxLoad() const { return *std::max_element(load_.begin(), load_.end()); }

double ThroughputState::SumOfSquares() const {
  double s = 0;
  for (double l : load_) s += l * l;
  return s;
}

void ThroughputState::CountReader(TensorId t, DeviceId d, int32_t delta) {
  const int32_t begin = reader_begin_[t];
  int32_t& size = reader_size_[t];
  for (int32_t i = begin; i < begin + size; ++i) {
    if (reader_device_[i] != d) continue;
    reader_count_[i] += delta;
    if (reader_count_[i] == 0) {  // keep the list dense: the last entry takes the freed slot
      reader_device_[i] = reader_device_[begin + size - 1];
      reader_count_[i] = reader_count_[begin + size - 1];
      --size;
    }
    return;
  }
  // A new reading device (delta is +1 here): there is always room, since each slot is a distinct device
  // holding at least one of the tensor's readers.
  reader_device_[begin + size] = d;
  reader_count_[begin + size] = delta;
  ++size;
}

// Adds (sign +1) or removes (sign -1) the transfer charges of tensor t, exactly as DeviceLoads counts them:
// each reading device other than the producer's receives it once; the sender pays the slowest of those sends.
void ThroughputState::Charge(TensorId t, double sign) {
  const DeviceId from = placement_.device[costs_->graph().tensor_producer(t)];
  double send = -1;
  const int32_t begin = reader_begin_[t];
  for (int32_t i = begin; i < begin + reader_size_[t]; ++i) {
    const DeviceId to = reader_device_[i];
    if (to == from) continue;
    const double time = costs_->transfer_time(t, from, to);
    send = std::max(send, time);
    if (pays_[to]) load_[to] += sign * time;
  }
  if (send >= 0 && pays_[from]) load_[from] += sign * send;
}

void ThroughputState::MoveOp(OpId v, DeviceId to) {
  const Graph& g = costs_->graph();
  const DeviceId from = placement_.device[v];
  if (from == to) return;
  const TensorId first = g.first_output(v);
  const TensorId last = first + g.num_outputs(v);
  for (TensorId t = first; t < last; ++t) Charge(t, -1);
  for (EdgeId e : g.in_edges(v)) Charge(g.edge_tensor(e), -1);
  load_[from] -= costs_->op_time(v, from);
  held_[from] -= costs_->pipelined_bytes(v);
  placement_.device[v] = to;
  load_[to] += costs_->op_time(v, to);
  held_[to] += costs_->pipelined_bytes(v);
  for (EdgeId e : g.in_edges(v)) {
    const TensorId t = g.edge_tensor(e);
    CountReader(t, from, -1);
    CountReader(t, to, +1);
    Charge(t, +1);
  }
  for (TensorId t = first; t < last; ++t) Charge(t, +1);
}

void ThroughputState::MoveUnit(int32_t u, DeviceId to) {
  const DeviceId from = device_of_unit(u);
  if (from == to) return;
  if (trying_) journal_.emplace_back(u, from);
  for (OpId v : units_->ops(u)) MoveOp(v, to);
}

void ThroughputState::BeginTry() {
  trying_ = true;
  saved_load_ = load_;
  journal_.clear();
}

void ThroughputState::Commit() {
  trying_ = false;
  journal_.clear();
}

void ThroughputState::Rollback() {
  trying_ = false;
  for (auto it = journal_.rbegin(); it != journal_.rend(); ++it) {
    for (OpId v : units_->ops(it->first)) MoveOp(v, it->second);
  }
  journal_.clear();
  load_ = saved_load_;
}

void ThroughputState::Resync() { load_ = DeviceLoads(*costs_, placement_); }

}  // namespace placement::search
