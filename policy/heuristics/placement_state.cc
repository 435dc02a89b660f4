#include "policy/heuristics/placement_state.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "graph/units.h"

namespace placement::heuristics {
namespace {
// Marks FinishPlacement's refusal of a placement the simulation found out of memory.
constexpr absl::string_view kOutOfMemoryWhenScored = "placement.heuristics/out_of_memory_when_scored";
}  // namespace

absl::StatusOr<UnitIndex> UnitIndex::Build(const CostModel& costs) {
  const Graph& g = costs.graph();
  const Topology& topo = costs.topology();
  absl::StatusOr<ColocationUnits> core = ColocationUnits::Build(costs);
  if (!core.ok()) return core.status();
  UnitIndex x(*std::move(core));
  const int32_t num_units = x.num_units();

  // Where each unit's work happens: its first operator that computes or reads something. A colocation group
  // that starts with a weight (a free source, as profiled operator graphs have) sits at its first consumer;
  // a unit of free sources alone sits just before its first reader.
  std::vector<int64_t> position(num_units, -1);
  for (int32_t u = 0; u < num_units; ++u) {
    int64_t first_reader = std::numeric_limits<int64_t>::max();
    for (OpId v : x.ops(u)) {
      if (costs.fastest_time(v) > 0 || g.in_degree(v) > 0) {
        position[u] = 2 * static_cast<int64_t>(g.topo_rank(v)) + 1;
        break;
      }
      for (const Edge& e : g.out_edges(v)) {
        if (x.unit_of(e.dst) != u)
          first_reader = std::min<int64_t>(first_reader, 2 * static_cast<int64_t>(g.topo_rank(e.dst)));
      }
    }
    if (position[u] < 0) {
      position[u] = first_reader != std::numeric_limits<int64_t>::max()
                        ? first_reader
                        : 2 * static_cast<int64_t>(g.topo_rank(x.first_op(u))) + 1;
    }
  }
  x.order_.resize(num_units);
  for (int32_t u = 0; u < num_units; ++u) x.order_[u] = u;
  std::stable_sort(x.order_.begin(), x.order_.end(), [&](int32_t a, int32_t b) { return position[a] < position[b]; });

  // One device of each kind stands for its kind.
  std::vector<DeviceId> kind_device(topo.kinds().size(), kNone);
  for (DeviceId d = 0; d < topo.num_devices(); ++d) {
    if (kind_device[topo.kind_index(d)] == kNone) kind_device[topo.kind_index(d)] = d;
  }
  x.fastest_.assign(num_units, kCannotRun);
  for (int32_t u = 0; u < num_units; ++u) {
    const DeviceId pin = x.pinned(u);
    if (pin != kNone) {
      x.fastest_[u] = x.time(u, pin);
      if (x.fastest_[u] == kCannotRun) {
        OpId bad = kNone;
        for (OpId v : x.ops(u)) {
          if (!costs.can_run(v, pin)) bad = v;
        }
        return absl::InvalidArgumentError(
            absl::StrCat("operator '", g.name(x.pinned_by(u)), "' is pinned to '", topo.device(pin).name, "' (kind ",
                         topo.device(pin).kind, "), which cannot run operator '", g.name(bad), "' of the same unit"));
      }
      continue;
    }
    for (DeviceId d : kind_device) x.fastest_[u] = std::min(x.fastest_[u], x.time(u, d));
    if (x.fastest_[u] == kCannotRun) {
      return absl::InvalidArgumentError(
          absl::StrCat(x.Describe(g, u), " cannot run whole on any device kind of the topology (",
                       absl::StrJoin(topo.kinds(), ", "), "): its operators need different kinds"));
    }
  }
  return x;
}

MemoryModel MemoryModelFor(Objective objective) {
  return objective == Objective::kThroughput ? MemoryModel::kParameters : MemoryModel::kLiveShare;
}

double LiveShareInOrder(const Graph& g) {
  // The last reader of each tensor in topological order: where a one-device run in that order frees it.
  std::vector<int32_t> last_read(g.num_tensors(), -1);
  for (EdgeId e = 0; e < g.num_edges(); ++e) {
    const TensorId t = g.edge_tensor(e);
    last_read[t] = std::max(last_read[t], g.topo_rank(g.edge(e).dst));
  }
  // Tensors freed after each position, bucketed by position so the pass stays linear.
  std::vector<int64_t> freed_after(g.num_ops(), 0);
  int64_t allocated = 0;
  for (OpId v = 0; v < g.num_ops(); ++v) {
    allocated += g.temp_bytes(v);
    for (int32_t o = 0; o < g.num_outputs(v); ++o) {
      const TensorId t = g.first_output(v) + o;
      allocated += g.tensor(t).bytes;
      freed_after[std::max(last_read[t], g.topo_rank(v))] += g.tensor(t).bytes;
    }
  }
  if (allocated <= 0) return 1.0;
  int64_t live = 0, peak = 0;
  for (OpId v : g.topo_order()) {
    live += g.temp_bytes(v);
    for (int32_t o = 0; o < g.num_outputs(v); ++o) live += g.tensor(g.first_output(v) + o).bytes;
    peak = std::max(peak, live);
    live -= g.temp_bytes(v) + freed_after[g.topo_rank(v)];
  }
  return std::clamp(static_cast<double>(peak) / static_cast<double>(allocated), 1e-6, 1.0);
}

MemoryLedger::MemoryLedger(const CostModel& costs, const UnitIndex& units, MemoryModel model)
    : costs_(&costs), units_(&units), model_(model) {
  const Graph& g = costs.graph();
  const Topology& topo = costs.topology();
  const int32_t num_units = units.num_units();
  const bool buffers = model != MemoryModel::kParameters;
  if (model == MemoryModel::kLiveShare) share_ = LiveShareInOrder(g);
  fixed_.assign(num_units, 0);
  for (OpId v = 0; v < g.num_ops(); ++v) {
    int64_t bytes = 0;
    if (buffers) {
      bytes += g.temp_bytes(v);
      for (int32_t o = 0; o < g.num_outputs(v); ++o) bytes += g.tensor(g.first_output(v) + o).bytes;
    }
    fixed_[units.unit_of(v)] += buffers ? g.param_bytes(v) + Scaled(bytes) : costs.pipelined_bytes(v);
  }
  upper_ = fixed_;
  input_begin_.assign(num_units + 1, 0);
  if (buffers) {
    std::vector<int32_t> seen(g.num_tensors(), kNone);  // unit that last listed the tensor
    for (int32_t u = 0; u < num_units; ++u) {
      for (OpId v : units.ops(u)) {
        for (EdgeId e : g.in_edges(v)) {
          const TensorId t = g.edge_tensor(e);
          if (units.unit_of(g.tensor_producer(t)) == u || seen[t] == u) continue;
          seen[t] = u;
          inputs_.push_back(t);
          upper_[u] += Scaled(g.tensor(t).bytes);
        }
      }
      input_begin_[u + 1] = static_cast<int32_t>(inputs_.size());
    }
    received_.reserve(inputs_.size());
  }
  for (int64_t b : fixed_) total_fixed_ += b;
  device_of_.assign(num_units, kNone);
  used_.assign(topo.num_devices(), 0);
  capacity_.resize(topo.num_devices());
  for (DeviceId d = 0; d < topo.num_devices(); ++d) {
    capacity_[d] = topo.device(d).memory_bytes == 0 ? kUnlimited : topo.device(d).memory_bytes;
  }
}

int64_t MemoryLedger::Scaled(int64_t bytes) const {
  return share_ >= 1.0 ? bytes : static_cast<int64_t>(std::ceil(static_cast<double>(bytes) * share_));
}

int64_t MemoryLedger::Charge(TensorId t, DeviceId d) const {
  const Graph& g = costs_->graph();
  const DeviceId producer = device_of_[units_->unit_of(g.tensor_producer(t))];
  // A producer not placed yet: the copy is charged when it is (ChargeReaders), if it lands elsewhere. A training
  // step's unit holds a forward operator and its backward ones, which read the gradients of units placed later.
  if (producer == d || producer == kNone) return 0;
  if (received_.contains(CopyKey(t, d))) return 0;
  return Scaled(g.tensor(t).bytes);
}

int64_t MemoryLedger::Cost(int32_t u, DeviceId d) const {
  int64_t bytes = fixed_[u];
  for (int32_t i = input_begin_[u]; i < input_begin_[u + 1]; ++i) bytes += Charge(inputs_[i], d);
  return bytes;
}

void MemoryLedger::Place(int32_t u, DeviceId d) {
  int64_t bytes = fixed_[u];
  for (int32_t i = input_begin_[u]; i < input_begin_[u + 1]; ++i) {
    const TensorId t = inputs_[i];
    const int64_t c = Charge(t, d);
    if (c == 0) continue;
    bytes += c;
    received_.insert(CopyKey(t, d));
  }
  used_[d] += bytes;
  device_of_[u] = d;
  if (model_ != MemoryModel::kParameters) ChargeReaders(u, d);
  ++version_;
}

void MemoryLedger::ChargeReaders(int32_t u, DeviceId d) {
  const Graph& g = costs_->graph();
  for (OpId v : units_->ops(u)) {
    for (EdgeId e = g.out_begin(v); e < g.out_end(v); ++e) {
      const DeviceId reader = device_of_[units_->unit_of(g.edge(e).dst)];
      if (reader == kNone || reader == d) continue;
      const TensorId t = g.edge_tensor(e);
      if (received_.insert(CopyKey(t, reader)).second) {
        used_[reader] += Scaled(g.tensor(t).bytes);
      }
    }
  }
}

absl::Status MemoryLedger::Shortfall(int32_t u) const {
  const Graph& g = costs_->graph();
  const Topology& topo = costs_->topology();
  DeviceId best = kNone;
  int32_t allowed = 0;
  for (DeviceId d = 0; d < topo.num_devices(); ++d) {
    if (!units_->allowed(u, d)) continue;
    ++allowed;
    if (best == kNone || free_bytes(d) > free_bytes(best)) best = d;
  }
  const std::string what = units_->Describe(g, u);
  std::string msg;
  if (best == kNone) {
    msg = absl::StrCat(what, " has no device it may run on");
  } else if (units_->pinned(u) != kNone) {
    msg = absl::StrCat(what, " is pinned to ", topo.device(best).name, " and needs ", FormatBytes(Cost(u, best)),
                       " there, but only ", FormatBytes(std::max<int64_t>(0, free_bytes(best))), " is free");
  } else {
    msg = absl::StrCat(what, " needs ", FormatBytes(Cost(u, best)), " but the largest free memory is ",
                       FormatBytes(std::max<int64_t>(0, free_bytes(best))), " on ", topo.device(best).name,
                       allowed < topo.num_devices() ? " (among the devices that can run it)" : "");
  }
  absl::StrAppend(&msg, "; ", Totals());
  return absl::FailedPreconditionError(msg);
}

std::string MemoryLedger::Totals() const {
  const Topology& topo = costs_->topology();
  std::string what;
  switch (model_) {
    case MemoryModel::kParameters:
      what = costs_->graph().has_backward()
                 ? absl::StrCat(" (parameters, gradients, optimizer state and the activations of ", topo.num_devices(),
                                " micro-batches in flight)")
                 : std::string(" of parameters");
      break;
    case MemoryModel::kLiveShare:
      what = absl::StrFormat(" (parameters, and the %.1f%% of scratch and outputs live at once when one device "
                             "runs the graph in order)",
                             100 * share_);
      break;
    case MemoryModel::kAllocations:
      what = " (parameters, scratch and outputs, none freed)";
      break;
  }
  return absl::StrCat("total needed ", FormatBytes(total_fixed_), what, ", cluster has ",
                      FormatBytes(topo.bounded_memory_bytes()),
                      topo.has_unbounded_device() ? " on its devices with a limit" : "");
}

Placement MemoryLedger::ToPlacement() const {
  Placement p;
  p.device.resize(costs_->graph().num_ops());
  for (OpId v = 0; v < costs_->graph().num_ops(); ++v) p.device[v] = device_of_[units_->unit_of(v)];
  return p;
}

std::vector<double> MeanTransferTimes(const CostModel& costs, const UnitIndex& units) {
  const Graph& g = costs.graph();
  const Topology& topo = costs.topology();
  const int32_t nd = topo.num_devices();
  std::vector<double> mean(g.num_edges(), 0.0);
  if (nd < 2) return mean;
  double latency = 0, inverse_bandwidth = 0;
  for (DeviceId a = 0; a < nd; ++a) {
    for (DeviceId b = 0; b < nd; ++b) {
      if (a == b) continue;
      latency += topo.path(a, b).latency;
      inverse_bandwidth += 1.0 / topo.path(a, b).bandwidth;
    }
  }
  const double pairs = static_cast<double>(nd) * (nd - 1);
  latency /= pairs;
  inverse_bandwidth /= pairs;
  for (EdgeId e = 0; e < g.num_edges(); ++e) {
    const Edge& edge = g.edge(e);
    if (units.unit_of(edge.src) == units.unit_of(edge.dst)) continue;
    const OutputTensor& t = g.tensor(g.edge_tensor(e));
    mean[e] = t.transfer_seconds >= 0 ? t.transfer_seconds : latency + static_cast<double>(t.bytes) * inverse_bandwidth;
  }
  return mean;
}

std::vector<double> MeanOpTimes(const CostModel& costs) {
  const Graph& g = costs.graph();
  const Topology& topo = costs.topology();
  // One representative device and a device count per kind: kinds x operators rather than devices x operators.
  std::vector<DeviceId> representative(topo.kinds().size(), kNone);
  std::vector<int32_t> count(topo.kinds().size(), 0);
  for (DeviceId d = 0; d < topo.num_devices(); ++d) {
    if (representative[topo.kind_index(d)] == kNone) representative[topo.kind_index(d)] = d;
    ++count[topo.kind_index(d)];
  }
  std::vector<double> mean(g.num_ops(), 0.0);
  for (OpId v = 0; v < g.num_ops(); ++v) {
    double sum = 0;
    int32_t devices = 0;
    for (size_t k = 0; k < representative.size(); ++k) {
      const double t = costs.op_time(v, representative[k]);
      if (t == kCannotRun) continue;
      sum += t * count[k];
      devices += count[k];
    }
    mean[v] = sum / devices;  // Create() guarantees some device can run v
  }
  return mean;
}

std::vector<double> DeviceSpeeds(const CostModel& costs) {
  const Graph& g = costs.graph();
  const Topology& topo = costs.topology();
  std::vector<double> speed(topo.num_devices(), 1.0);
  std::vector<double> fastest_sum(topo.kinds().size(), 0), own_sum(topo.kinds().size(), 0);
  std::vector<uint8_t> done(topo.kinds().size(), 0);
  for (DeviceId d = 0; d < topo.num_devices(); ++d) {
    const int32_t k = topo.kind_index(d);
    if (!done[k]) {
      done[k] = 1;
      for (OpId v = 0; v < g.num_ops(); ++v) {
        const double t = costs.op_time(v, d);
        if (t == kCannotRun) continue;
        fastest_sum[k] += costs.fastest_time(v);
        own_sum[k] += t;
      }
    }
    // A kind that runs nothing, or only free operators, gets a token share rather than none, so targets and
    // weights built from speeds stay positive.
    speed[d] = own_sum[k] > 0 ? fastest_sum[k] / own_sum[k] : 1e-3;
  }
  return speed;
}

absl::StatusOr<PlacerResult> FinishPlacement(const PlacementProblem& problem, const MemoryLedger& ledger,
                                             absl::string_view algorithm, std::vector<std::string> notes) {
  absl::StatusOr<PlacerResult> result = ScorePlacement(problem, ledger.ToPlacement(), std::string(algorithm));
  if (!result.ok()) return result.status();
  if (!result->evaluation.fits_memory) {
    std::vector<std::string> over;
    const Topology& topo = problem.topology();
    for (DeviceId d = 0; d < topo.num_devices(); ++d) {
      const DeviceScore& s = result->evaluation.devices[d];
      if (s.oom) {
        over.push_back(absl::StrCat(topo.device(d).name, " peaks at ", FormatBytes(s.peak_memory), " but has ",
                                    FormatBytes(s.capacity)));
      }
    }
    absl::Status status = absl::FailedPreconditionError(
        absl::StrCat(algorithm, "'s placement does not fit in memory when scored: ", absl::StrJoin(over, "; ")));
    status.SetPayload(kOutOfMemoryWhenScored, absl::Cord(ledger.Totals()));
    return status;
  }
  for (std::string& note : notes) result->notes.push_back(std::move(note));
  return result;
}

absl::StatusOr<PlacerResult> PlaceWithMemoryFallback(
    const PlacementProblem& problem, const Budget& budget,
    absl::FunctionRef<absl::StatusOr<PlacerResult>(MemoryModel)> place) {
  const MemoryModel first = MemoryModelFor(problem.objective);
  absl::StatusOr<PlacerResult> result = place(first);
  if (first != MemoryModel::kLiveShare || result.ok() || !result.status().GetPayload(kOutOfMemoryWhenScored) ||
      budget.Expired()) {
    return result;
  }
  absl::StatusOr<PlacerResult> again = place(MemoryModel::kAllocations);
  if (!again.ok()) return result.status();  // the first refusal names what the simulation found
  again->notes.push_back(absl::StrCat("charged every buffer as if none were freed: at the share of buffers live at "
                                      "once its answer was out of memory when scored (",
                                      result.status().message(), ")"));
  return again;
}

absl::Status CheckStart(const PlacementProblem& problem, const Budget& budget) {
  if (problem.costs == nullptr) return absl::InvalidArgumentError("the placement problem has no cost model");
  if (budget.Expired()) return budget.ExpiredStatus();
  return absl::OkStatus();
}

}  // namespace placement::heuristics
