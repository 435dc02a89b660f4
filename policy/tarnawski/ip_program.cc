#include "policy/tarnawski/ip_program.h"

#include <algorithm>
#include <limits>
#include <utility>

namespace placement::tarnawski {
namespace {

using ilp::Milp;

constexpr double kInf = std::numeric_limits<double>::infinity();

std::vector<Crossing> Crossings(const Instance& in) {
  const Graph& g = in.graph();
  std::vector<Crossing> out;
  for (OpId v = 0; v < g.num_ops(); ++v) {
    for (TensorId t = g.first_output(v); t < g.first_output(v + 1); ++t) {
      Crossing c{t, v, in.units.unit_of[v], {}};
      for (const Edge& e : g.out_edges(v)) {
        const int32_t r = in.units.unit_of[e.dst];
        if (g.first_output(v) + e.src_output == t && r != c.unit) c.readers.push_back(r);
      }
      std::sort(c.readers.begin(), c.readers.end());
      c.readers.erase(std::unique(c.readers.begin(), c.readers.end()), c.readers.end());
      if (!c.readers.empty()) out.push_back(std::move(c));
    }
  }
  return out;
}

// The longest path of fastest times into each operator, where its latency can start.
std::vector<double> EarliestFinish(const CostModel& costs) {
  const Graph& g = costs.graph();
  std::vector<double> e(g.num_ops(), 0);
  for (OpId v : g.topo_order()) {
    for (EdgeId in : g.in_edges(v)) e[v] = std::max(e[v], e[g.edge(in).src]);
    e[v] += costs.fastest_time(v);
  }
  return e;
}

}  // namespace

LatencyProgram::LatencyProgram(const Instance& in, const TarnawskiLatency& model, int32_t q, double horizon,
                               double lower)
    : in_(in),
      model_(model),
      q_(q),
      slots_(static_cast<int32_t>(in.accelerators.size()) * q),
      scale_(horizon > 0 ? 100.0 / horizon : 1.0),
      big_(scale_ * horizon),
      crossings_(Crossings(in)) {
  AddAssignment();
  AddMemory();
  AddContiguity();
  AddCommunication();
  AddTiming(lower);
  AddPathRows();
  AddSymmetry();
}

int32_t LatencyProgram::SlotOf(DeviceId accelerator) const {
  const auto it = std::find(in_.accelerators.begin(), in_.accelerators.end(), accelerator);
  return static_cast<int32_t>(it - in_.accelerators.begin()) * q_;
}

// A source unit that takes no time on its CPU and whose outputs cost nothing to move is as well there as
// anywhere: taken out of a block it leaves the block contiguous and no slower, and every reader gets its outputs
// at 0. Such units (graph inputs, masks) only multiply equivalent splits, so the program keeps them on the CPU.
bool LatencyProgram::FreeOnCpu(int32_t u) const {
  const Graph& g = in_.graph();
  if (in_.cpu_of[u] == kNone) return false;
  for (OpId v : in_.units.ops[u]) {
    if (in_.costs->op_time(v, in_.cpu_of[u]) != 0) return false;
    for (EdgeId e : g.in_edges(v)) {
      if (in_.units.unit_of[g.edge(e).src] != u) return false;
    }
    for (EdgeId e = g.out_begin(v); e < g.out_end(v); ++e) {
      for (DeviceId a : in_.accelerators) {
        if (model_.BoundaryCost(g.edge_tensor(e), a) != 0) return false;
      }
    }
  }
  return true;
}

void LatencyProgram::AddAssignment() {
  x_.assign(static_cast<size_t>(in_.num_units()) * (slots_ + 1), -1);
  for (int32_t u = 0; u < in_.num_units(); ++u) {
    Milp::Terms once;
    const bool free = FreeOnCpu(u);
    for (int32_t s = 0; s <= slots_; ++s) {
      const bool allowed = s < slots_ ? in_.FitsAccelerator(u, SlotDevice(s)) && !free : in_.cpu_of[u] != kNone;
      if (!allowed) continue;
      x_[static_cast<size_t>(u) * (slots_ + 1) + s] = milp_.AddColumn(0, 1, 0, true);
      once.emplace_back(X(u, s), 1.0);
    }
    milp_.AddRow(1, 1, once);
  }
}

void LatencyProgram::AddMemory() {
  for (int32_t a = 0; a < static_cast<int32_t>(in_.accelerators.size()); ++a) {
    const int64_t capacity = in_.units.capacity[in_.accelerators[a]];
    Milp::Terms row;
    int64_t total = 0;
    for (int32_t u = 0; u < in_.num_units(); ++u) {
      for (int32_t s = a * q_; s < (a + 1) * q_; ++s) {
        if (X(u, s) < 0) continue;
        row.emplace_back(X(u, s), static_cast<double>(in_.bytes[u]) / static_cast<double>(capacity));
        total += in_.bytes[u];
      }
    }
    if (capacity != ilp::kUnlimitedBytes && total > capacity) milp_.AddRow(-kInf, 1, row);
  }
}

// Their contiguity rows: z is 1 on a down-closed set holding the subgraph and nothing a subgraph operator feeds
// from outside it, so no path leaves the subgraph and comes back.
void LatencyProgram::AddContiguity() {
  const Graph& g = in_.graph();
  z_.assign(static_cast<size_t>(g.num_ops()) * slots_, -1);
  for (OpId v = 0; v < g.num_ops(); ++v) {
    for (int32_t s = 0; s < slots_; ++s) {
      z_[static_cast<size_t>(v) * slots_ + s] = milp_.AddColumn(0, 1, 0, false);
      const int xv = X(in_.units.unit_of[v], s);
      if (xv >= 0) milp_.AddRow(0, kInf, {{Z(v, s), 1.0}, {xv, -1.0}});
    }
  }
  for (EdgeId e = 0; e < g.num_edges(); ++e) {
    const OpId p = g.edge(e).src, v = g.edge(e).dst;
    for (int32_t s = 0; s < slots_; ++s) {
      milp_.AddRow(-kInf, 0, {{Z(v, s), 1.0}, {Z(p, s), -1.0}});
      const int xp = X(in_.units.unit_of[p], s), xv = X(in_.units.unit_of[v], s);
      if (in_.units.unit_of[p] == in_.units.unit_of[v] || xp < 0) continue;
      Milp::Terms row = {{Z(v, s), 1.0}, {xp, 1.0}};
      if (xv >= 0) row.emplace_back(xv, -1.0);
      milp_.AddRow(-kInf, 1, row);
    }
  }
}

// in[t,s] >= x[r,s] - x[p,s] for each reader unit r; out[t,s] >= x[p,s] - x[r,s] (>= x[p,s] when some reader can
// never be in s). `in` exists wherever a reader may be in s (it also delays the start); `out` only where it costs.
void LatencyProgram::AddCommunication() {
  crossing_of_.assign(in_.graph().num_tensors(), -1);
  for (size_t c = 0; c < crossings_.size(); ++c) crossing_of_[crossings_[c].tensor] = static_cast<int32_t>(c);
  in_col_.assign(crossings_.size() * slots_, -1);
  out_col_.assign(crossings_.size() * slots_, -1);
  for (size_t c = 0; c < crossings_.size(); ++c) {
    const Crossing& t = crossings_[c];
    for (int32_t s = 0; s < slots_; ++s) {
      const int xp = X(t.unit, s);
      bool reader_absent = false;
      for (int32_t r : t.readers) {
        if (X(r, s) < 0) {
          reader_absent = true;
          continue;
        }
        if (in_col_[c * slots_ + s] < 0) in_col_[c * slots_ + s] = milp_.AddColumn(0, 1, 0, false);
        Milp::Terms row = {{in_col_[c * slots_ + s], 1.0}, {X(r, s), -1.0}};
        if (xp >= 0) row.emplace_back(xp, 1.0);
        milp_.AddRow(0, kInf, row);
      }
      if (xp < 0 || model_.BoundaryCost(t.tensor, SlotDevice(s)) <= 0) continue;
      const int out = out_col_[c * slots_ + s] = milp_.AddColumn(0, 1, 0, false);
      if (reader_absent) {
        milp_.AddRow(0, kInf, {{out, 1.0}, {xp, -1.0}});
        continue;
      }
      for (int32_t r : t.readers) milp_.AddRow(0, kInf, {{out, 1.0}, {xp, -1.0}, {X(r, s), 1.0}});
    }
  }
}

void LatencyProgram::AddTiming(double lower) {
  const Graph& g = in_.graph();
  const std::vector<double> earliest = EarliestFinish(*in_.costs);
  for (OpId v = 0; v < g.num_ops(); ++v)
    lat_.push_back(milp_.AddColumn(std::min(scale_ * earliest[v], big_), big_, 0, false));
  total_ = milp_.AddColumn(std::min(scale_ * lower, big_), big_, 1, false);
  for (OpId v = 0; v < g.num_ops(); ++v) {
    const int32_t u = in_.units.unit_of[v];
    const int cpu = X(u, slots_);
    const double cpu_time = cpu >= 0 ? scale_ * in_.costs->op_time(v, in_.cpu_of[u]) : 0.0;
    if (g.in_degree(v) == 0 && cpu >= 0) milp_.AddRow(0, kInf, {{lat_[v], 1.0}, {cpu, -cpu_time}});
    for (EdgeId e : g.in_edges(v)) {
      Milp::Terms row = {{lat_[v], 1.0}, {lat_[g.edge(e).src], -1.0}};
      if (cpu >= 0) row.emplace_back(cpu, -cpu_time);
      milp_.AddRow(0, kInf, row);
    }
    if (g.out_end(v) == g.out_begin(v)) milp_.AddRow(0, kInf, {{total_, 1.0}, {lat_[v], -1.0}});
  }
  AddSlotTiming();
}

void LatencyProgram::AddSlotTiming() {
  const Graph& g = in_.graph();
  for (int32_t s = 0; s < slots_; ++s) {
    start_.push_back(milp_.AddColumn(0, big_, 0, false));
    finish_.push_back(milp_.AddColumn(0, big_, 0, false));
    const DeviceId a = SlotDevice(s);
    Milp::Terms load = {{finish_[s], 1.0}, {start_[s], -1.0}};
    for (int32_t u = 0; u < in_.num_units(); ++u) {
      if (X(u, s) >= 0) load.emplace_back(X(u, s), -scale_ * in_.units.time_on(u, a));
    }
    for (size_t c = 0; c < crossings_.size(); ++c) {
      const double cost = scale_ * model_.BoundaryCost(crossings_[c].tensor, a);
      if (in_col_[c * slots_ + s] >= 0) {
        load.emplace_back(in_col_[c * slots_ + s], -cost);
        // start >= lat[p] - H (1 - in)
        milp_.AddRow(-big_, kInf,
                     {{start_[s], 1.0}, {lat_[crossings_[c].producer], -1.0}, {in_col_[c * slots_ + s], -big_}});
      }
      if (out_col_[c * slots_ + s] >= 0) load.emplace_back(out_col_[c * slots_ + s], -cost);
    }
    milp_.AddRow(0, 0, load);
    for (OpId v = 0; v < g.num_ops(); ++v) {  // lat[v] >= finish - H (1 - x)
      const int xv = X(in_.units.unit_of[v], s);
      if (xv >= 0) milp_.AddRow(-big_, kInf, {{lat_[v], 1.0}, {finish_[s], -1.0}, {xv, -big_}});
    }
    if (s % q_ > 0) milp_.AddRow(0, kInf, {{start_[s], 1.0}, {finish_[s - 1], -1.0}});
  }
}

// Operator v's time wherever it runs, times `sign`.
Milp::Terms LatencyProgram::OpTime(OpId v, double sign) const {
  Milp::Terms t;
  const int32_t u = in_.units.unit_of[v];
  for (int32_t s = 0; s < slots_; ++s) {
    if (X(u, s) >= 0) t.emplace_back(X(u, s), sign * scale_ * in_.costs->op_time(v, SlotDevice(s)));
  }
  if (X(u, slots_) >= 0) t.emplace_back(X(u, slots_), sign * scale_ * in_.costs->op_time(v, in_.cpu_of[u]));
  return t;
}

// A relaxation that sees every path at once: path[v] >= path[p] + time(v) + what the edge p -> v costs when it
// crosses a border (cost(t) at each accelerator end; through in and out, so only for tensors with one reading
// unit, where they equal |x[p,s] - x[v,s]|). Along any path of an allowed split the blocks come one after
// another, each paying at least that, so T >= path[v] holds for every contiguous split; the rows bind where the
// big-M rows above are slack, once branching has fixed part of the split.
void LatencyProgram::AddPathRows() {
  const Graph& g = in_.graph();
  for (OpId v = 0; v < g.num_ops(); ++v) path_.push_back(milp_.AddColumn(0, big_, 0, false));
  for (OpId v = 0; v < g.num_ops(); ++v) {
    if (g.in_degree(v) == 0) {
      Milp::Terms row = OpTime(v, -1.0);
      row.emplace_back(path_[v], 1.0);
      milp_.AddRow(0, kInf, row);
    }
    for (EdgeId e : g.in_edges(v)) {
      const OpId p = g.edge(e).src;
      Milp::Terms row = OpTime(v, -1.0);
      row.insert(row.end(), {{path_[v], 1.0}, {path_[p], -1.0}});
      const int32_t c = crossing_of_[g.edge_tensor(e)];
      if (c >= 0 && crossings_[c].readers.size() == 1) {
        for (int32_t s = 0; s < slots_; ++s) {
          const double cost = scale_ * model_.BoundaryCost(crossings_[c].tensor, SlotDevice(s));
          if (in_col_[c * slots_ + s] >= 0) row.emplace_back(in_col_[c * slots_ + s], -cost);
          if (out_col_[c * slots_ + s] >= 0) row.emplace_back(out_col_[c * slots_ + s], -cost);
        }
      }
      milp_.AddRow(0, kInf, row);
    }
    if (g.out_end(v) == g.out_begin(v)) milp_.AddRow(0, kInf, {{total_, 1.0}, {path_[v], -1.0}});
  }
}

void LatencyProgram::AddSymmetry() {
  for (std::vector<DeviceId>& cls : ilp::InterchangeableDevices(in_.costs->topology(), in_.units)) {
    if (in_.is_accelerator[cls.front()]) classes_.push_back(std::move(cls));
  }
  running_ = ilp::AddSymmetryRows(milp_, classes_, in_.num_units(), [&](int32_t u, DeviceId d) {
    Milp::Terms on;
    for (int32_t s = SlotOf(d); s < SlotOf(d) + q_; ++s) {
      if (X(u, s) >= 0) on.emplace_back(X(u, s), 1.0);
    }
    return on;
  });
}

std::vector<double> LatencyProgram::StartVector(const std::vector<DeviceId>& split, const TarnawskiLatency& scored,
                                                double latency) const {
  const Graph& g = in_.graph();
  std::vector<double> v(milp_.num_columns(), 0.0);
  for (int32_t u = 0; u < in_.num_units(); ++u) v[X(u, in_.is_accelerator[split[u]] ? SlotOf(split[u]) : slots_)] = 1;
  for (int32_t s = 0; s < slots_; s += q_) {  // z: the subgraph and everything upstream of it
    for (auto it = g.topo_order().rbegin(); it != g.topo_order().rend(); ++it) {
      const OpId op = *it;
      bool z = split[in_.units.unit_of[op]] == SlotDevice(s);
      for (const Edge& e : g.out_edges(op)) z = z || v[Z(e.dst, s)] > 0.5;
      v[Z(op, s)] = z ? 1 : 0;
    }
  }
  for (size_t c = 0; c < crossings_.size(); ++c) {
    const Crossing& t = crossings_[c];
    for (int32_t s = 0; s < slots_; s += q_) {
      const DeviceId a = SlotDevice(s);
      bool reader_in = false, reader_out = false;
      for (int32_t r : t.readers) (split[r] == a ? reader_in : reader_out) = true;
      if (in_col_[c * slots_ + s] >= 0) v[in_col_[c * slots_ + s]] = split[t.unit] != a && reader_in;
      if (out_col_[c * slots_ + s] >= 0) v[out_col_[c * slots_ + s]] = split[t.unit] == a && reader_out;
    }
  }
  for (OpId op = 0; op < g.num_ops(); ++op) v[lat_[op]] = std::min(scale_ * scored.op_finish(op), big_);
  v[total_] = std::min(scale_ * latency, big_);
  StartSlots(split, v);
  StartPaths(v);
  ilp::SetRunningSums(running_, split, in_.units.num_devices, v);
  return v;
}

// Each accelerator's block in its first subgraph: it starts when the last tensor entering it is done and runs
// its load; the empty subgraphs after it start and end when it ends.
void LatencyProgram::StartSlots(const std::vector<DeviceId>& split, std::vector<double>& v) const {
  for (int32_t s = 0; s < slots_; ++s) {
    double start = s % q_ > 0 ? v[finish_[s - 1]] : 0.0, load = 0;
    for (size_t c = 0; c < crossings_.size(); ++c) {
      const double cost = scale_ * model_.BoundaryCost(crossings_[c].tensor, SlotDevice(s));
      if (in_col_[c * slots_ + s] >= 0 && v[in_col_[c * slots_ + s]] > 0.5) {
        start = std::max(start, v[lat_[crossings_[c].producer]]);
        load += cost;
      }
      if (out_col_[c * slots_ + s] >= 0) load += cost * v[out_col_[c * slots_ + s]];
    }
    for (int32_t u = 0; u < in_.num_units(); ++u) {
      if (X(u, s) >= 0 && v[X(u, s)] > 0.5) load += scale_ * in_.units.time_on(u, SlotDevice(s));
    }
    v[start_[s]] = start;
    v[finish_[s]] = start + load;
  }
}

// The path rows' longest paths, from the assignment and crossings already in `v`.
void LatencyProgram::StartPaths(std::vector<double>& v) const {
  const Graph& g = in_.graph();
  auto value = [&](const Milp::Terms& terms) {
    double sum = 0;
    for (const auto& [col, coefficient] : terms) sum += coefficient * v[col];
    return sum;
  };
  for (OpId op : g.topo_order()) {
    double longest = 0;
    for (EdgeId e : g.in_edges(op)) {
      double cross = 0;
      const int32_t c = crossing_of_[g.edge_tensor(e)];
      if (c >= 0 && crossings_[c].readers.size() == 1) {
        for (int32_t s = 0; s < slots_; ++s) {
          const double cost = scale_ * model_.BoundaryCost(crossings_[c].tensor, SlotDevice(s));
          if (in_col_[c * slots_ + s] >= 0) cross += cost * v[in_col_[c * slots_ + s]];
          if (out_col_[c * slots_ + s] >= 0) cross += cost * v[out_col_[c * slots_ + s]];
        }
      }
      longest = std::max(longest, v[path_[g.edge(e).src]] + cross);
    }
    v[path_[op]] = std::min(longest + value(OpTime(op, 1.0)), big_);
  }
}

std::vector<DeviceId> LatencyProgram::MoveFreeUnitsToCpu(std::vector<DeviceId> split) const {
  for (int32_t u = 0; u < in_.num_units(); ++u) {
    if (FreeOnCpu(u)) split[u] = in_.cpu_of[u];
  }
  return split;
}

std::vector<DeviceId> LatencyProgram::Split(const std::vector<double>& solution) const {
  std::vector<DeviceId> split(in_.num_units(), kNone);
  for (int32_t u = 0; u < in_.num_units(); ++u) {
    split[u] = in_.cpu_of[u];
    for (int32_t s = 0; s < slots_; ++s) {
      if (X(u, s) >= 0 && solution[X(u, s)] > 0.5) split[u] = SlotDevice(s);
    }
  }
  return split;
}

}  // namespace placement::tarnawski
