#include "policy/learned/features.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>

#include "absl/strings/string_view.h"

namespace placement::learned {
namespace {

float Clip(double x, double lo, double hi) { return static_cast<float>(std::min(hi, std::max(lo, x))); }
double SafeLog(double x) { return std::log(std::max(x, 1e-12)); }

// A stable hash (std::hash is not promised to be the same across builds, and the weights outlive a build).
uint64_t Fnv1a(absl::string_view s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

// Per group, what its operators add up to.
struct GroupSums {
  std::vector<double> out_bytes, depth, backward;
  int32_t max_level = 0;
};

// Depth (longest path from a source, in operators) and the other per-group sums; fills in.fastest, in.params and
// in.type_bucket (the op type of the group's heaviest operator).
GroupSums SumGroups(const CostModel& costs, const Coarsening& c, int32_t D, PolicyInput& in) {
  const Graph& g = costs.graph();
  const int32_t G = c.num_groups;
  std::vector<int32_t> level(g.num_ops(), 0);
  GroupSums s;
  for (OpId u : g.topo_order()) {
    for (const Edge& e : g.out_edges(u)) level[e.dst] = std::max(level[e.dst], level[u] + 1);
    s.max_level = std::max(s.max_level, level[u]);
  }
  s.out_bytes.assign(G, 0);
  s.depth.assign(G, 0);
  s.backward.assign(G, 0);
  std::vector<double> heaviest(G, -1);
  in.type_bucket.assign(G, 0);
  in.fastest.assign(G, kCannotRun);
  in.params.assign(G, 0);
  for (int32_t grp = 0; grp < G; ++grp) {
    for (DeviceId d = 0; d < D; ++d)
      in.fastest[grp] = std::min(in.fastest[grp], c.time[static_cast<size_t>(grp) * D + d]);
  }
  for (OpId op = 0; op < g.num_ops(); ++op) {
    const int32_t grp = c.group_of_op[op];
    in.params[grp] += static_cast<double>(g.param_bytes(op));
    s.depth[grp] += level[op];
    s.backward[grp] += g.is_backward(op) ? 1 : 0;
    for (int32_t k = 0; k < g.num_outputs(op); ++k)
      s.out_bytes[grp] += static_cast<double>(g.tensor(g.first_output(op) + k).bytes);
    if (costs.fastest_time(op) > heaviest[grp]) {
      heaviest[grp] = costs.fastest_time(op);
      in.type_bucket[grp] = static_cast<int64_t>(Fnv1a(g.op_type(op)) % kTypeBuckets);
    }
  }
  return s;
}

// The cluster's figures the features are relative to.
struct ClusterFigures {
  double max_peak = 0, max_membw = 0, best_bw = 0, min_capacity = 0;
  std::vector<double> mean_bw, mean_lat;  // per device, to the others
};

ClusterFigures MeasureCluster(const Topology& topo) {
  const int32_t D = topo.num_devices();
  ClusterFigures f;
  for (const Device& dev : topo.devices()) {
    f.max_peak = std::max(f.max_peak, dev.peak_flops);
    f.max_membw = std::max(f.max_membw, dev.memory_bandwidth);
    if (dev.memory_bytes > 0) {
      f.min_capacity = f.min_capacity == 0 ? dev.memory_bytes : std::min<double>(f.min_capacity, dev.memory_bytes);
    }
  }
  f.mean_bw.assign(D, 0);
  f.mean_lat.assign(D, 0);
  for (DeviceId a = 0; a < D; ++a) {
    for (DeviceId b = 0; b < D; ++b) {
      if (a == b) continue;
      f.mean_bw[a] += topo.path(a, b).bandwidth / std::max(1, D - 1);
      f.mean_lat[a] += topo.path(a, b).latency / std::max(1, D - 1);
    }
    f.best_bw = std::max(f.best_bw, f.mean_bw[a]);
  }
  return f;
}

void FillGroupFeatures(const Coarsening& c, const GroupSums& s, const ClusterFigures& cluster, int32_t D,
                       PolicyInput& in) {
  const int32_t G = c.num_groups;
  double total_work = 0, mean_out = 0, mean_params = 0;
  for (int32_t grp = 0; grp < G; ++grp) {
    total_work += in.fastest[grp];
    mean_out += s.out_bytes[grp] / G;
    mean_params += in.params[grp] / G;
  }
  const double mean_work = std::max(total_work / G, 1e-12);
  in.ideal_share = std::max(total_work / D, 1e-12);
  const double transfer_bw = cluster.best_bw > 0 ? cluster.best_bw : 1e12;
  std::vector<int32_t> in_deg(G, 0), out_deg(G, 0);
  for (size_t e = 0; e < c.edge_src.size(); ++e) {
    ++out_deg[c.edge_src[e]];
    ++in_deg[c.edge_dst[e]];
  }
  in.group.resize(static_cast<size_t>(G) * kGroupFeatures);
  for (int32_t grp = 0; grp < G; ++grp) {
    const double size = c.group_begin[grp + 1] - c.group_begin[grp];
    float* f = &in.group[static_cast<size_t>(grp) * kGroupFeatures];
    f[0] = Clip(SafeLog(in.fastest[grp] / mean_work) / 5, -3, 3);
    f[1] = Clip(in.fastest[grp] / in.ideal_share, 0, 4);
    f[2] = Clip(std::log1p(s.out_bytes[grp] / std::max(mean_out, 1.0)), 0, 6);
    f[3] = Clip(std::log1p(in.params[grp] / std::max(mean_params, 1.0)), 0, 6);
    f[4] = cluster.min_capacity > 0 ? Clip(in.params[grp] / cluster.min_capacity, 0, 4) : 0;
    f[5] = s.max_level > 0 ? static_cast<float>(s.depth[grp] / size / s.max_level) : 0;
    f[6] = static_cast<float>(s.backward[grp] / size);
    f[7] = Clip(std::log(size) / 5, 0, 4);
    f[8] = Clip(std::log1p(in_deg[grp]) / 3, 0, 3);
    f[9] = Clip(std::log1p(out_deg[grp]) / 3, 0, 3);
    f[10] = Clip(std::log1p(s.out_bytes[grp] / transfer_bw / std::max(in.fastest[grp], 1e-9)), 0, 6);
    f[11] = 1;
  }
}

void FillDeviceFeatures(const Topology& topo, const ClusterFigures& cluster, PolicyInput& in) {
  const int32_t D = topo.num_devices();
  double total_params = 0;
  for (double p : in.params) total_params += p;
  const double footprint_share = std::max(total_params / D, 1.0);
  in.device.resize(static_cast<size_t>(D) * kDeviceFeatures);
  in.capacity.resize(D);
  for (DeviceId d = 0; d < D; ++d) {
    const Device& dev = topo.device(d);
    float* f = &in.device[static_cast<size_t>(d) * kDeviceFeatures];
    in.capacity[d] = static_cast<double>(dev.memory_bytes);
    f[0] = Clip(SafeLog(dev.peak_flops / cluster.max_peak), -6, 0);
    f[1] = Clip(SafeLog(dev.memory_bandwidth / cluster.max_membw), -6, 0);
    f[2] = dev.memory_bytes > 0 ? Clip(std::log1p(dev.memory_bytes / footprint_share) / 3, 0, 4) : 4;
    f[3] = D > 1 ? Clip(SafeLog(cluster.mean_bw[d] / cluster.best_bw), -6, 0) : 0;
    f[4] = D > 1 ? Clip((SafeLog(cluster.mean_lat[d] + 1e-9) + 14) / 5, -3, 3) : 0;
    f[5] = dev.type == DeviceType::kCpu ? 1 : 0;
    f[6] = static_cast<float>((d + 0.5) / D);
    f[7] = static_cast<float>(1.0 / D);
    f[8] = 1;
  }
}

void FillPairFeatures(const Coarsening& c, int32_t D, PolicyInput& in) {
  const int32_t G = c.num_groups;
  in.allowed = c.allowed;
  in.pair.resize(static_cast<size_t>(G) * D * kPairFeatures);
  for (int32_t grp = 0; grp < G; ++grp) {
    const double gdepth = in.group[static_cast<size_t>(grp) * kGroupFeatures + 5];
    for (DeviceId d = 0; d < D; ++d) {
      const size_t k = static_cast<size_t>(grp) * D + d;
      float* f = &in.pair[k * kPairFeatures];
      const double t = c.time[k];
      f[0] = t == kCannotRun ? 6 : Clip(SafeLog(t / std::max(in.fastest[grp], 1e-15)), 0, 6);
      f[1] = t != kCannotRun && t <= in.fastest[grp] * (1 + 1e-9) ? 1 : 0;
      f[2] = static_cast<float>(gdepth - (d + 0.5) / D);
      f[3] = std::fabs(f[2]);
      f[4] = in.capacity[d] > 0 ? Clip(in.params[grp] / in.capacity[d], 0, 4) : 0;
    }
  }
}

// The group edges, and for each group the edges it is an end of (CSR).
void FillEdges(const Coarsening& c, PolicyInput& in) {
  const int32_t G = c.num_groups;
  in.edge_src.assign(c.edge_src.begin(), c.edge_src.end());
  in.edge_dst.assign(c.edge_dst.begin(), c.edge_dst.end());
  in.edge_bytes = c.edge_bytes;
  in.incident_begin.assign(G + 1, 0);
  for (size_t e = 0; e < c.edge_src.size(); ++e) {
    ++in.incident_begin[c.edge_src[e] + 1];
    ++in.incident_begin[c.edge_dst[e] + 1];
  }
  for (int32_t grp = 0; grp < G; ++grp) in.incident_begin[grp + 1] += in.incident_begin[grp];
  in.incident.resize(in.incident_begin[G]);
  std::vector<int32_t> fill(in.incident_begin.begin(), in.incident_begin.end() - 1);
  for (size_t e = 0; e < c.edge_src.size(); ++e) {
    in.incident[fill[c.edge_src[e]]++] = static_cast<int32_t>(e);
    in.incident[fill[c.edge_dst[e]]++] = static_cast<int32_t>(e);
  }
}

}  // namespace

PolicyInput BuildPolicyInput(const CostModel& costs, const Coarsening& c) {
  const Topology& topo = costs.topology();
  const int32_t D = topo.num_devices();
  PolicyInput in;
  in.num_groups = c.num_groups;
  in.num_devices = D;
  const GroupSums sums = SumGroups(costs, c, D, in);
  const ClusterFigures cluster = MeasureCluster(topo);
  FillGroupFeatures(c, sums, cluster, D, in);
  FillDeviceFeatures(topo, cluster, in);
  FillPairFeatures(c, D, in);
  FillEdges(c, in);
  return in;
}

DeviceTotals Totals(const PolicyInput& in, const std::vector<int32_t>& group_device) {
  DeviceTotals t;
  t.load.assign(in.num_devices, 0);
  t.params.assign(in.num_devices, 0);
  for (int32_t grp = 0; grp < in.num_groups; ++grp) {
    t.load[group_device[grp]] += in.fastest[grp];
    t.params[group_device[grp]] += in.params[grp];
  }
  return t;
}

void GroupContext(const PolicyInput& in, int32_t grp, const std::vector<int32_t>& group_device,
                  const DeviceTotals& totals, float* out) {
  const int32_t D = in.num_devices;
  std::fill(out, out + static_cast<size_t>(D) * kContextFeatures, 0.0f);
  double bytes = 0;
  for (int32_t i = in.incident_begin[grp]; i < in.incident_begin[grp + 1]; ++i) {
    const int32_t e = in.incident[i];
    const int32_t other =
        in.edge_src[e] == grp ? static_cast<int32_t>(in.edge_dst[e]) : static_cast<int32_t>(in.edge_src[e]);
    out[static_cast<size_t>(group_device[other]) * kContextFeatures + 0] += static_cast<float>(in.edge_bytes[e]);
    bytes += in.edge_bytes[e];
  }
  const int32_t here = group_device[grp];
  for (DeviceId d = 0; d < D; ++d) {
    float* f = out + static_cast<size_t>(d) * kContextFeatures;
    f[0] = bytes > 0 ? static_cast<float>(f[0] / bytes) : 0;
    const double load = totals.load[d] - (d == here ? in.fastest[grp] : 0);
    f[1] = Clip(load / in.ideal_share, 0, 4);
    f[2] = d == here ? 1 : 0;
    const double params = totals.params[d] + (d == here ? 0 : in.params[grp]);
    f[3] = in.capacity[d] > 0 && params > in.capacity[d] ? 1 : 0;
  }
}

std::vector<float> ContextFeatures(const PolicyInput& in, const std::vector<int32_t>& group_device) {
  const DeviceTotals totals = Totals(in, group_device);
  std::vector<float> out(static_cast<size_t>(in.num_groups) * in.num_devices * kContextFeatures);
  for (int32_t grp = 0; grp < in.num_groups; ++grp) {
    GroupContext(in, grp, group_device, totals, &out[static_cast<size_t>(grp) * in.num_devices * kContextFeatures]);
  }
  return out;
}

}  // namespace placement::learned
