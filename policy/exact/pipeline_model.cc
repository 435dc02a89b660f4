#include "policy/exact/pipeline_model.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"
#include "policy/exact/unit_graph.h"

namespace placement {
namespace {

using pipeline_internal::ContractUnits;
using pipeline_internal::OpFacts;
using pipeline_internal::UnitGraph;

// More fusion passes than this stop reducing (every pass is exact, so stopping early is too).
constexpr int kMaxMergePasses = 64;

class UnionFind {
 public:
  explicit UnionFind(int32_t n) : parent_(n) { std::iota(parent_.begin(), parent_.end(), 0); }
  int32_t Find(int32_t x) {
    while (parent_[x] != x) x = parent_[x] = parent_[parent_[x]];
    return x;
  }
  void Union(int32_t a, int32_t b) { parent_[Find(a)] = Find(b); }

 private:
  std::vector<int32_t> parent_;
};

// Renumbers op groups densely after a union-find pass over groups; returns the new count.
int32_t Relabel(std::vector<int32_t>& group_of_op, UnionFind& uf) {
  std::vector<int32_t> dense(group_of_op.size(), -1);
  int32_t next = 0;
  for (int32_t& grp : group_of_op) {
    const int32_t root = uf.Find(grp);
    if (dense[root] < 0) dense[root] = next++;
    grp = dense[root];
  }
  return next;
}

bool SameFigure(double a, double b) { return std::abs(a - b) <= 1e-12 * std::max(std::abs(a), std::abs(b)); }

// Devices split into accelerators and CPUs, each kind identical.
absl::Status SplitDeviceKinds(const Topology& t, PipelineModel& model, OpFacts& facts) {
  for (DeviceId d = 0; d < t.num_devices(); ++d) {
    std::vector<DeviceId>& same = t.device(d).type == DeviceType::kCpu ? model.cpus : model.accelerators;
    if (!same.empty()) {
      const Device& first = t.device(same.front());
      if (t.kind_index(same.front()) != t.kind_index(d) || first.memory_bytes != t.device(d).memory_bytes) {
        return absl::UnimplementedError(absl::StrCat("pipeline_dp needs identical devices of each type, but '",
                                                     first.name, "' (", first.kind, ", ", first.memory_bytes,
                                                     " bytes) and '", t.device(d).name, "' (", t.device(d).kind, ", ",
                                                     t.device(d).memory_bytes, " bytes) differ"));
      }
    }
    same.push_back(d);
  }
  if (!model.accelerators.empty()) model.accelerator_bytes = t.device(model.accelerators.front()).memory_bytes;
  if (!model.cpus.empty()) model.cpu_bytes = t.device(model.cpus.front()).memory_bytes;
  facts.num_accelerators = model.num_accelerators();
  facts.num_cpus = model.num_cpus();
  return absl::OkStatus();
}

// Every operator's time on an accelerator and on a CPU (kCannotRun where the cluster has none).
absl::Status OpTimes(const CostModel& costs, const PipelineModel& model, OpFacts& facts) {
  const Graph& g = costs.graph();
  for (OpId op = 0; op < g.num_ops(); ++op) {
    if (g.pinned(op) != kNone) {
      return absl::UnimplementedError(absl::StrCat("pipeline_dp does not support pinned operators; '", g.name(op),
                                                   "' is pinned to '", g.pinned_devices()[g.pinned(op)], "'"));
    }
  }
  facts.acc_time.assign(g.num_ops(), kCannotRun);
  facts.cpu_time.assign(g.num_ops(), kCannotRun);
  for (OpId op = 0; op < g.num_ops(); ++op) {
    if (!model.accelerators.empty()) facts.acc_time[op] = costs.op_time(op, model.accelerators.front());
    if (!model.cpus.empty()) facts.cpu_time[op] = costs.op_time(op, model.cpus.front());
  }
  return absl::OkStatus();
}

// The one path every pair of devices an accelerator takes part in shares (CPU-to-CPU transfers are free in
// this model), or an error naming two pairs that differ.
absl::StatusOr<const Path*> CommonPath(const Topology& t) {
  const Path* common = nullptr;
  DeviceId common_from = 0, common_to = 0;
  for (DeviceId a = 0; a < t.num_devices(); ++a) {
    for (DeviceId b = 0; b < t.num_devices(); ++b) {
      if (a == b || (t.device(a).type == DeviceType::kCpu && t.device(b).type == DeviceType::kCpu)) continue;
      const Path& p = t.path(a, b);
      if (common == nullptr) {
        common = &p;
        common_from = a;
        common_to = b;
      } else if (!SameFigure(p.latency, common->latency) || !SameFigure(p.bandwidth, common->bandwidth)) {
        return absl::UnimplementedError(absl::StrCat(
            "pipeline_dp assumes one interconnect figure for every pair of devices, but ", t.device(common_from).name,
            "->", t.device(common_to).name, " has ", common->bandwidth, " B/s and ", common->latency,
            " s latency while ", t.device(a).name, "->", t.device(b).name, " has ", p.bandwidth, " B/s and ", p.latency,
            " s; give measured transfer times or use a homogeneous cluster"));
      }
    }
  }
  return common;
}

// What cutting each tensor costs: its bytes (forward only, for kForwardBytes), or one transfer time wherever it
// goes: its measured time, or latency + bytes / bandwidth of the common path.
absl::Status TensorWeights(const CostModel& costs, const PipelineModelOptions& options, OpFacts& facts) {
  const Graph& g = costs.graph();
  using Weight = PipelineModelOptions::Weight;
  facts.tensor_weight.assign(g.num_tensors(), 0);
  if (options.weight != Weight::kTransferTime) {
    for (OpId op = 0; op < g.num_ops(); ++op) {
      if (options.weight == Weight::kForwardBytes && g.is_backward(op)) continue;
      for (TensorId t = g.first_output(op); t < g.first_output(op + 1); ++t) {
        facts.tensor_weight[t] = static_cast<double>(g.tensor(t).bytes);
      }
    }
    return absl::OkStatus();
  }
  bool derived = false;
  for (TensorId tensor = 0; tensor < g.num_tensors(); ++tensor) derived |= g.tensor(tensor).transfer_seconds < 0;
  const Path* common = nullptr;
  if (derived) {
    absl::StatusOr<const Path*> path = CommonPath(costs.topology());
    if (!path.ok()) return path.status();
    common = *path;
  }
  for (TensorId tensor = 0; tensor < g.num_tensors(); ++tensor) {
    const OutputTensor& out = g.tensor(tensor);
    if (out.transfer_seconds >= 0) {
      facts.tensor_weight[tensor] = out.transfer_seconds;
    } else if (common != nullptr) {
      facts.tensor_weight[tensor] = common->latency + static_cast<double>(out.bytes) / common->bandwidth;
    }
  }
  return absl::OkStatus();
}

// A topological order of the unit DAG that keeps each branch together (reverse DFS post-order).
std::vector<int32_t> BranchTopologicalOrder(const UnitGraph& g, const std::vector<uint8_t>& keep) {
  std::vector<uint8_t> seen(g.n, 0);
  std::vector<int32_t> post;
  std::vector<std::pair<int32_t, size_t>> stack;
  for (int32_t root = 0; root < g.n; ++root) {
    if (!keep[root] || seen[root]) continue;
    bool source = true;
    for (int32_t p : g.preds[root]) source &= !keep[p];
    if (!source) continue;
    seen[root] = 1;
    stack.emplace_back(root, 0);
    while (!stack.empty()) {
      auto& [v, pos] = stack.back();
      if (pos < g.succs[v].size()) {
        const int32_t w = g.succs[v][pos++];
        if (keep[w] && !seen[w]) {
          seen[w] = 1;
          stack.emplace_back(w, 0);
        }
        continue;
      }
      post.push_back(v);
      stack.pop_back();
    }
  }
  std::reverse(post.begin(), post.end());
  return post;
}

// Floats zero-cost units that are sources or sinks of what is left, repeatedly: clears their keep flag and
// returns them in the order they floated.
std::vector<int32_t> FloatUnits(const UnitGraph& g, const OpFacts& facts, std::vector<uint8_t>& keep) {
  std::vector<int32_t> live_preds(g.n), live_succs(g.n), floated, work;
  for (int32_t u = 0; u < g.n; ++u) {
    live_preds[u] = static_cast<int32_t>(g.preds[u].size());
    live_succs[u] = static_cast<int32_t>(g.succs[u].size());
    work.push_back(u);
  }
  while (!work.empty()) {
    const int32_t u = work.back();
    work.pop_back();
    if (!keep[u] || !pipeline_internal::ZeroEverywhere(g, facts, u) || g.bytes[u] != 0 || !g.unit_hedges[u].empty())
      continue;
    if (live_preds[u] != 0 && live_succs[u] != 0) continue;
    keep[u] = 0;
    floated.push_back(u);
    for (int32_t p : g.preds[u]) {
      if (--live_succs[p] == 0) work.push_back(p);
    }
    for (int32_t s : g.succs[u]) {
      if (--live_preds[s] == 0) work.push_back(s);
    }
  }
  return floated;
}

// One group per operator, or per colocation group; returns the number of groups.
int32_t ColocationGroups(const Graph& g, std::vector<int32_t>& group_of_op) {
  int32_t num_groups = 0;
  std::vector<int32_t> of_coloc(g.colocation_groups().size(), -1);
  group_of_op.resize(g.num_ops());
  for (OpId op = 0; op < g.num_ops(); ++op) {
    const int32_t c = g.colocation_group(op);
    if (c == kNone) {
      group_of_op[op] = num_groups++;
    } else {
      if (of_coloc[c] < 0) of_coloc[c] = num_groups++;
      group_of_op[op] = of_coloc[c];
    }
  }
  return num_groups;
}

// The unit DAG: colocation groups, cycles fused, then (with options.reduce) zero-compute merges until nothing
// changes. Counts the merges in the model.
UnitGraph ContractToDag(const CostModel& costs, const PipelineModelOptions& options, const OpFacts& facts,
                        std::vector<int32_t>& group_of_op, PipelineModel& model) {
  int32_t num_groups = ColocationGroups(costs.graph(), group_of_op);
  model.groups = num_groups;
  UnitGraph units = ContractUnits(costs, facts, group_of_op, num_groups);
  int32_t components = 0;
  std::vector<int32_t> comp = pipeline_internal::StronglyConnectedComponents(units, &components);
  if (components < units.n) {
    for (int32_t& grp : group_of_op) grp = comp[grp];
    num_groups = components;
    units = ContractUnits(costs, facts, group_of_op, num_groups);
  }
  const bool memory_limited = model.accelerator_bytes > 0 || model.cpu_bytes > 0;
  for (int pass = 0; options.reduce && pass < kMaxMergePasses; ++pass) {
    bool sized = false;
    std::vector<int32_t> target =
        pipeline_internal::ZeroMergeTargets(units, facts, options.merge_sized || !memory_limited, &sized);
    UnionFind uf(units.n);
    int32_t merges = 0;
    for (int32_t u = 0; u < units.n; ++u) {
      if (target[u] != u && uf.Find(u) != uf.Find(target[u])) {
        uf.Union(u, target[u]);
        ++merges;
      }
    }
    if (merges == 0) break;
    model.merged_units += merges;
    model.sized_merges |= sized && memory_limited;
    num_groups = Relabel(group_of_op, uf);
    units = ContractUnits(costs, facts, group_of_op, num_groups);
  }
  return units;
}

// A unit no device kind of the cluster can run, named by its first operator or colocation group.
absl::Status CheckEveryUnitRuns(const Graph& g, const UnitGraph& units, const OpFacts& facts,
                                const std::vector<int32_t>& group_of_op) {
  for (int32_t u = 0; u < units.n; ++u) {
    const bool acc = facts.num_accelerators > 0 && units.acc_ok[u];
    const bool cpu = facts.num_cpus > 0 && units.cpu_ok[u];
    if (acc || cpu) continue;
    OpId first = 0;
    while (group_of_op[first] != u) ++first;
    const int32_t c = g.colocation_group(first);
    return absl::FailedPreconditionError(absl::StrCat(
        "no device can run all of ",
        c == kNone ? absl::StrCat("operator '", g.name(first), "'")
                   : absl::StrCat("colocation group '", g.colocation_groups()[c], "'"),
        ": its operators need both accelerator-only and CPU-only kernels, or a device kind the cluster lacks"));
  }
  return absl::OkStatus();
}

// The lattice units' figures and sorted neighbour lists, in `order` (code: lattice index of every kept unit).
void FillUnits(const UnitGraph& units, const OpFacts& facts, const std::vector<int32_t>& order,
               const std::vector<uint8_t>& keep, const std::vector<int32_t>& code, PipelineModel& model) {
  const int32_t n = static_cast<int32_t>(order.size());
  model.num_units = n;
  model.acc_time.resize(n);
  model.cpu_time.resize(n);
  model.acc_ok.resize(n);
  model.cpu_ok.resize(n);
  model.bytes.resize(n);
  model.group_names.resize(n);
  model.pred_begin.assign(1, 0);
  model.succ_begin.assign(1, 0);
  for (int32_t i = 0; i < n; ++i) {
    const int32_t u = order[i];
    model.acc_time[i] = units.acc_time[u];
    model.cpu_time[i] = units.cpu_time[u];
    model.acc_ok[i] = facts.num_accelerators > 0 && units.acc_ok[u];
    model.cpu_ok[i] = facts.num_cpus > 0 && units.cpu_ok[u];
    model.bytes[i] = units.bytes[u];
    for (int32_t p : units.preds[u]) {
      if (keep[p]) model.preds.push_back(code[p]);
    }
    for (int32_t s : units.succs[u]) {
      if (keep[s]) model.succs.push_back(code[s]);
    }
    std::sort(model.preds.begin() + model.pred_begin.back(), model.preds.end());
    std::sort(model.succs.begin() + model.succ_begin.back(), model.succs.end());
    model.pred_begin.push_back(static_cast<int32_t>(model.preds.size()));
    model.succ_begin.push_back(static_cast<int32_t>(model.succs.size()));
  }
}

// The hyperedges over lattice units (floating units have none) and each unit's incident ones.
void FillHyperedges(const UnitGraph& units, const std::vector<int32_t>& code, PipelineModel& model) {
  model.hedge_begin.assign(1, 0);
  for (size_t h = 0; h < units.hedges.size(); ++h) {
    for (int32_t x : units.hedges[h]) model.hedge_members.push_back(code[x]);
    std::sort(model.hedge_members.begin() + model.hedge_begin.back(), model.hedge_members.end());
    model.hedge_begin.push_back(static_cast<int32_t>(model.hedge_members.size()));
    model.hedge_weight.push_back(units.hedge_weight[h]);
  }
  std::vector<std::vector<int32_t>> incident(model.num_units);
  for (size_t h = 0; h + 1 < model.hedge_begin.size(); ++h) {
    for (int32_t i = model.hedge_begin[h]; i < model.hedge_begin[h + 1]; ++i) {
      incident[model.hedge_members[i]].push_back(static_cast<int32_t>(h));
    }
  }
  model.unit_hedge_begin.assign(1, 0);
  for (int32_t i = 0; i < model.num_units; ++i) {
    model.unit_hedges.insert(model.unit_hedges.end(), incident[i].begin(), incident[i].end());
    model.unit_hedge_begin.push_back(static_cast<int32_t>(model.unit_hedges.size()));
  }
}

// How each floated unit follows the units around it. Neighbours still present when it floated are lattice
// units or float later; the placement resolves them in reverse order, so each is known by then.
void FillFloating(const UnitGraph& units, const std::vector<int32_t>& floated, const std::vector<uint8_t>& keep,
                  const std::vector<int32_t>& code, PipelineModel& model) {
  for (size_t f = 0; f < floated.size(); ++f) {
    const int32_t u = floated[f];
    auto still_there = [&](int32_t x) { return keep[x] || (code[x] < 0 && -1 - code[x] > static_cast<int32_t>(f)); };
    const bool source = std::none_of(units.preds[u].begin(), units.preds[u].end(), still_there);
    PipelineModel::Floating fl;
    for (int32_t x : source ? units.succs[u] : units.preds[u]) {
      if (still_there(x)) fl.neighbors.push_back(code[x]);
    }
    fl.rule = fl.neighbors.empty() ? PipelineModel::FloatRule::kAnywhere
              : source             ? PipelineModel::FloatRule::kWithFirstSuccessor
                                   : PipelineModel::FloatRule::kWithLastPredecessor;
    model.floating.push_back(std::move(fl));
  }
}

}  // namespace

absl::StatusOr<PipelineModel> BuildPipelineModel(const CostModel& costs, const PipelineModelOptions& options) {
  const Graph& g = costs.graph();
  PipelineModel model;
  OpFacts facts;
  RETURN_IF_ERROR(SplitDeviceKinds(costs.topology(), model, facts));
  RETURN_IF_ERROR(OpTimes(costs, model, facts));
  RETURN_IF_ERROR(TensorWeights(costs, options, facts));
  std::vector<int32_t> group_of_op;
  const UnitGraph units = ContractToDag(costs, options, facts, group_of_op, model);
  RETURN_IF_ERROR(CheckEveryUnitRuns(g, units, facts, group_of_op));

  // Floating units leave the lattice; the rest are numbered in a branch-preserving topological order.
  std::vector<uint8_t> keep(units.n, 1);
  std::vector<int32_t> floated = options.reduce ? FloatUnits(units, facts, keep) : std::vector<int32_t>{};
  const std::vector<int32_t> order = BranchTopologicalOrder(units, keep);
  std::vector<int32_t> code(units.n, 0);  // lattice unit, or -1 - floating index
  for (size_t i = 0; i < order.size(); ++i) code[order[i]] = static_cast<int32_t>(i);
  for (size_t f = 0; f < floated.size(); ++f) code[floated[f]] = -1 - static_cast<int32_t>(f);
  FillUnits(units, facts, order, keep, code, model);
  FillHyperedges(units, code, model);
  FillFloating(units, floated, keep, code, model);

  model.unit_of_op.resize(g.num_ops());
  for (OpId op = 0; op < g.num_ops(); ++op) {
    const int32_t i = code[group_of_op[op]];
    model.unit_of_op[op] = i;
    if (i >= 0 && model.group_names[i].empty()) {
      const int32_t c = g.colocation_group(op);
      model.group_names[i] = c == kNone ? std::string(g.name(op)) : g.colocation_groups()[c];
    }
  }
  return model;
}

std::vector<int32_t> StepOfOps(const PipelineModel& m, const std::vector<int32_t>& step_of_unit) {
  std::vector<int32_t> float_step(m.floating.size(), 0);
  auto step_of = [&](int32_t code) { return code >= 0 ? step_of_unit[code] : float_step[-1 - code]; };
  for (size_t f = m.floating.size(); f-- > 0;) {
    const PipelineModel::Floating& fl = m.floating[f];
    int32_t step = 0;
    if (fl.rule == PipelineModel::FloatRule::kWithFirstSuccessor) {
      step = std::numeric_limits<int32_t>::max();
      for (int32_t x : fl.neighbors) step = std::min(step, step_of(x));
    } else if (fl.rule == PipelineModel::FloatRule::kWithLastPredecessor) {
      for (int32_t x : fl.neighbors) step = std::max(step, step_of(x));
    }
    float_step[f] = step;
  }
  std::vector<int32_t> out(m.unit_of_op.size());
  for (size_t op = 0; op < m.unit_of_op.size(); ++op) out[op] = step_of(m.unit_of_op[op]);
  return out;
}

}  // namespace placement
