#include "policy/learned/coarsen.h"

#include <algorithm>
#include <numeric>

#include "graph/status_macros.h"
#include "policy/search/search_units.h"

namespace placement::learned {
namespace {

// Union-find over search units with each root's pin and per-device time, so that a merge can be checked
// (same pin, a device both may use, under the work cap) before it is made.
class Groups {
 public:
  Groups(const search::SearchUnits& units, int32_t num_devices) : d_(num_devices) {
    const int32_t n = units.num_units();
    parent_.resize(n);
    std::iota(parent_.begin(), parent_.end(), 0);
    pinned_.resize(n);
    time_.resize(static_cast<size_t>(n) * d_);
    for (int32_t u = 0; u < n; ++u) {
      pinned_[u] = units.pinned(u);
      for (DeviceId d = 0; d < d_; ++d)
        time_[static_cast<size_t>(u) * d_ + d] = units.allowed(u, d) ? units.time(u, d) : kCannotRun;
    }
  }

  int32_t Find(int32_t x) {
    while (parent_[x] != x) {
      parent_[x] = parent_[parent_[x]];
      x = parent_[x];
    }
    return x;
  }

  // Merges the groups of a and b when allowed; true when they are (now) one group.
  bool Merge(int32_t a, int32_t b, double work_cap) {
    a = Find(a);
    b = Find(b);
    if (a == b) return true;
    if (pinned_[a] != kNone && pinned_[b] != kNone && pinned_[a] != pinned_[b]) return false;
    double best = kCannotRun;
    for (DeviceId d = 0; d < d_; ++d) best = std::min(best, T(a, d) + T(b, d));
    if (best == kCannotRun || best > work_cap) return false;
    parent_[b] = a;
    if (pinned_[a] == kNone) pinned_[a] = pinned_[b];
    for (DeviceId d = 0; d < d_; ++d) T(a, d) += T(b, d);
    return true;
  }

  double Work(int32_t root) const {
    double best = kCannotRun;
    for (DeviceId d = 0; d < d_; ++d) best = std::min(best, time_[static_cast<size_t>(root) * d_ + d]);
    return best;
  }

 private:
  double& T(int32_t root, DeviceId d) { return time_[static_cast<size_t>(root) * d_ + d]; }

  int32_t d_;
  std::vector<int32_t> parent_;
  std::vector<DeviceId> pinned_;
  std::vector<double> time_;
};

}  // namespace

Placement Coarsening::Expand(const std::vector<DeviceId>& group_device) const {
  Placement p;
  p.device.resize(group_of_op.size());
  for (size_t op = 0; op < group_of_op.size(); ++op) p.device[op] = group_device[group_of_op[op]];
  return p;
}

namespace {

// Chains (an operator whose only consumer has it as its only producer) fused while a group stays under `cap`.
void FuseChains(const Graph& g, const search::SearchUnits& units, double cap, Groups& groups) {
  for (OpId u : g.topo_order()) {
    absl::Span<const Edge> out = g.out_edges(u);
    if (out.empty()) continue;
    const OpId v = out.front().dst;
    bool single = true;
    for (const Edge& e : out) single = single && e.dst == v;
    for (EdgeId e : g.in_edges(v)) single = single && g.edge(e).src == u;
    if (single) groups.Merge(units.unit_of(u), units.unit_of(v), cap);
  }
}

// The groups' roots in the topological order of their first operators.
std::vector<int32_t> RootsInOrder(const Graph& g, const search::SearchUnits& units, Groups& groups) {
  std::vector<int32_t> roots;
  std::vector<uint8_t> seen(units.num_units(), 0);
  for (OpId op : g.topo_order()) {
    const int32_t r = groups.Find(units.unit_of(op));
    if (!seen[r]) {
      seen[r] = 1;
      roots.push_back(r);
    }
  }
  return roots;
}

// Neighbours in that order merged in runs, until at most `max_groups` remain (a group may grow past the chain cap).
void MergeRuns(const std::vector<int32_t>& roots, int32_t max_groups, double ideal_share, double total_work,
               Groups& groups) {
  const size_t run = (roots.size() + max_groups - 1) / max_groups;
  const double cap = std::max(ideal_share, total_work * run / roots.size() * 4);
  for (size_t begin = 0; begin < roots.size(); begin += run) {
    int32_t head = roots[begin];
    for (size_t i = begin + 1; i < std::min(roots.size(), begin + run); ++i) {
      if (!groups.Merge(head, roots[i], cap)) head = roots[i];
    }
  }
}

// Dense group ids (in the order of the roots), each operator's group and the operators of each (CSR).
void FillMembership(const Graph& g, const search::SearchUnits& units, Groups& groups, const std::vector<int32_t>& roots,
                    std::vector<int32_t>& dense, Coarsening& c) {
  const int32_t n = g.num_ops();
  c.num_groups = static_cast<int32_t>(roots.size());
  dense.assign(units.num_units(), kNone);
  for (int32_t i = 0; i < c.num_groups; ++i) dense[roots[i]] = i;
  c.group_of_op.resize(n);
  c.group_begin.assign(c.num_groups + 1, 0);
  for (OpId op = 0; op < n; ++op) {
    c.group_of_op[op] = dense[groups.Find(units.unit_of(op))];
    ++c.group_begin[c.group_of_op[op] + 1];
  }
  for (int32_t i = 0; i < c.num_groups; ++i) c.group_begin[i + 1] += c.group_begin[i];
  c.ops.resize(n);
  std::vector<int32_t> fill(c.group_begin.begin(), c.group_begin.end() - 1);
  for (OpId op : g.topo_order()) c.ops[fill[c.group_of_op[op]]++] = op;
  c.order.resize(c.num_groups);
  std::iota(c.order.begin(), c.order.end(), 0);  // dense ids follow the topological order of first operators
}

// Per group and device: the pin, whether every unit may go there, and the time of all of them there.
void FillDeviceTimes(const search::SearchUnits& units, Groups& groups, const std::vector<int32_t>& dense,
                     int32_t num_devices, Coarsening& c) {
  c.pinned.assign(c.num_groups, kNone);
  c.allowed.assign(static_cast<size_t>(c.num_groups) * num_devices, 1);
  c.time.assign(static_cast<size_t>(c.num_groups) * num_devices, 0);
  for (int32_t u = 0; u < units.num_units(); ++u) {
    const int32_t grp = dense[groups.Find(u)];
    if (units.pinned(u) != kNone) c.pinned[grp] = units.pinned(u);
    for (DeviceId d = 0; d < num_devices; ++d) {
      const size_t k = static_cast<size_t>(grp) * num_devices + d;
      if (!units.allowed(u, d)) c.allowed[k] = 0;
      c.time[k] += units.time(u, d);
    }
  }
  for (int32_t grp = 0; grp < c.num_groups; ++grp) {
    for (DeviceId d = 0; d < num_devices; ++d) {
      const size_t k = static_cast<size_t>(grp) * num_devices + d;
      if (c.pinned[grp] != kNone && c.pinned[grp] != d) c.allowed[k] = 0;
      if (!c.allowed[k]) c.time[k] = kCannotRun;
    }
  }
}

// The edges between groups, one per ordered pair, with the bytes of every operator edge they stand for.
void FillGroupEdges(const Graph& g, Coarsening& c) {
  struct Crossing {
    int32_t src, dst;
    double bytes;
  };
  std::vector<Crossing> crossings;
  for (EdgeId e = 0; e < g.num_edges(); ++e) {
    const Edge& edge = g.edge(e);
    const int32_t a = c.group_of_op[edge.src], b = c.group_of_op[edge.dst];
    if (a != b) crossings.push_back({a, b, static_cast<double>(edge.bytes)});
  }
  std::sort(crossings.begin(), crossings.end(),
            [](const Crossing& x, const Crossing& y) { return x.src != y.src ? x.src < y.src : x.dst < y.dst; });
  for (const Crossing& x : crossings) {
    if (!c.edge_src.empty() && c.edge_src.back() == x.src && c.edge_dst.back() == x.dst) {
      c.edge_bytes.back() += x.bytes;
      continue;
    }
    c.edge_src.push_back(x.src);
    c.edge_dst.push_back(x.dst);
    c.edge_bytes.push_back(x.bytes);
  }
}

}  // namespace

absl::StatusOr<Coarsening> Coarsen(const CostModel& costs, const CoarseningOptions& options) {
  const Graph& g = costs.graph();
  const int32_t num_devices = costs.topology().num_devices();
  ASSIGN_OR_RETURN(const search::SearchUnits units, search::SearchUnits::Build(costs));
  Groups groups(units, num_devices);
  double total_work = 0;
  for (OpId op = 0; op < g.num_ops(); ++op) total_work += costs.fastest_time(op);
  const double ideal_share = total_work / num_devices;
  if (options.fuse_chains) FuseChains(g, units, ideal_share / 4, groups);
  std::vector<int32_t> roots = RootsInOrder(g, units, groups);
  if (options.max_groups > 0 && static_cast<int32_t>(roots.size()) > options.max_groups) {
    MergeRuns(roots, options.max_groups, ideal_share, total_work, groups);
    roots = RootsInOrder(g, units, groups);
  }
  Coarsening c;
  std::vector<int32_t> dense;
  FillMembership(g, units, groups, roots, dense, c);
  FillDeviceTimes(units, groups, dense, num_devices, c);
  FillGroupEdges(g, c);
  return c;
}

}  // namespace placement::learned
