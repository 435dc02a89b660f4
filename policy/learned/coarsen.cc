#include "policy/learned/coarsen.h"

#include <algorithm>
#include <numeric>

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
      for (DeviceId d = 0; d < d_; ++d) time_[static_cast<size_t>(u) * d_ + d] = units.allowed(u, d) ? units.time(u, d) : kCannotRun;
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

absl::StatusOr<Coarsening> Coarsen(const CostModel& costs, const CoarseningOptions& options) {
  const Graph& g = costs.graph();
  const int32_t n = g.num_ops();
  const int32_t num_devices = costs.topology().num_devices();
  absl::StatusOr<search::SearchUnits> units = search::SearchUnits::Build(costs);
  if (!units.ok()) return units.status();
  Groups groups(*units, num_devices);

  double total_work = 0;
  for (OpId op = 0; op < n; ++op) total_work += costs.fastest_time(op);
  const double ideal_share = total_work / num_devices;

  if (options.fuse_chains) {
    const double cap = ideal_share / 4;
    for (OpId u : g.topo_order()) {
      absl::Span<const Edge> out = g.out_edges(u);
      if (out.empty()) continue;
      const OpId v = out.front().dst;
      bool single = true;
      for (const Edge& e : out) single = single && e.dst == v;
      for (EdgeId e : g.in_edges(v)) single = single && g.edge(e).src == u;
      if (single) groups.Merge(units->unit_of(u), units->unit_of(v), cap);
    }
  }

  // Roots in topological order of their first operator.
  auto roots_in_order = [&] {
    std::vector<int32_t> roots;
    std::vector<uint8_t> seen(units->num_units(), 0);
    for (OpId op : g.topo_order()) {
      const int32_t r = groups.Find(units->unit_of(op));
      if (!seen[r]) {
        seen[r] = 1;
        roots.push_back(r);
      }
    }
    return roots;
  };
  std::vector<int32_t> roots = roots_in_order();
  if (options.max_groups > 0 && static_cast<int32_t>(roots.size()) > options.max_groups) {
    const size_t run = (roots.size() + options.max_groups - 1) / options.max_groups;
    const double cap = std::max(ideal_share, total_work * run / roots.size() * 4);
    for (size_t begin = 0; begin < roots.size(); begin += run) {
      int32_t head = roots[begin];
      for (size_t i = begin + 1; i < std::min(roots.size(), begin + run); ++i) {
        if (!groups.Merge(head, roots[i], cap)) head = roots[i];
      }
    }
    roots = roots_in_order();
  }

  Coarsening c;
  c.num_groups = static_cast<int32_t>(roots.size());
  std::vector<int32_t> dense(units->num_units(), kNone);
  for (int32_t i = 0; i < c.num_groups; ++i) dense[roots[i]] = i;
  c.group_of_op.resize(n);
  c.group_begin.assign(c.num_groups + 1, 0);
  for (OpId op = 0; op < n; ++op) {
    c.group_of_op[op] = dense[groups.Find(units->unit_of(op))];
    ++c.group_begin[c.group_of_op[op] + 1];
  }
  for (int32_t i = 0; i < c.num_groups; ++i) c.group_begin[i + 1] += c.group_begin[i];
  c.ops.resize(n);
  std::vector<int32_t> fill(c.group_begin.begin(), c.group_begin.end() - 1);
  for (OpId op : g.topo_order()) c.ops[fill[c.group_of_op[op]]++] = op;
  c.order.resize(c.num_groups);
  std::iota(c.order.begin(), c.order.end(), 0);  // dense ids follow the topological order of first operators

  c.pinned.assign(c.num_groups, kNone);
  c.allowed.assign(static_cast<size_t>(c.num_groups) * num_devices, 1);
  c.time.assign(static_cast<size_t>(c.num_groups) * num_devices, 0);
  for (int32_t u = 0; u < units->num_units(); ++u) {
    const int32_t grp = dense[groups.Find(u)];
    if (units->pinned(u) != kNone) c.pinned[grp] = units->pinned(u);
    for (DeviceId d = 0; d < num_devices; ++d) {
      const size_t k = static_cast<size_t>(grp) * num_devices + d;
      if (!units->allowed(u, d)) c.allowed[k] = 0;
      c.time[k] += units->time(u, d);
    }
  }
  for (int32_t grp = 0; grp < c.num_groups; ++grp) {
    for (DeviceId d = 0; d < num_devices; ++d) {
      const size_t k = static_cast<size_t>(grp) * num_devices + d;
      if (c.pinned[grp] != kNone && c.pinned[grp] != d) c.allowed[k] = 0;
      if (!c.allowed[k]) c.time[k] = kCannotRun;
    }
  }

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
  return c;
}

}  // namespace placement::learned
