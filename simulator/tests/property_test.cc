// Properties over many seeded random problems: small layered DAGs on random heterogeneous clusters (matrix,
// shared-bus and hierarchical), random valid placements, both queue priorities, with and without Placeto's
// gaps. Each simulated schedule is checked against the rules it must obey and its peak memory against a
// brute-force recount; lower bounds must never exceed what is simulated; simulating twice must agree.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "graph/generators.h"
#include "gtest/gtest.h"
#include "simulator/objectives.h"
#include "simulator/simulator.h"

namespace placement {
namespace {

using Kind = TimelineEntry::Kind;

int Between(std::mt19937_64& rng, int lo, int hi) {
  return lo + static_cast<int>(rng() % static_cast<uint64_t>(hi - lo + 1));
}
double Uniform(std::mt19937_64& rng, double lo, double hi) {
  return lo + (hi - lo) * static_cast<double>(rng() >> 11) * 0x1.0p-53;
}

// Three device models; devices of one kind must agree on every figure the cost model reads.
Device MakeDevice(std::mt19937_64& rng, int index) {
  const int kind = Between(rng, 0, 2);
  Device d;
  d.name = "dev" + std::to_string(index);
  d.memory_bytes = Between(rng, 0, 1) == 0 ? 0 : static_cast<int64_t>(Uniform(rng, 1e6, 5e8));
  switch (kind) {
    case 0:
      d.kind = "small";
      d.peak_flops = 1e12;
      d.memory_bandwidth = 2e11;
      d.launch_overhead = 4e-6;
      break;
    case 1:
      d.kind = "large";
      d.peak_flops = 8e12;
      d.memory_bandwidth = 9e11;
      d.launch_overhead = 2e-6;
      break;
    default:
      d.kind = "host";
      d.type = DeviceType::kCpu;
      d.peak_flops = 2e11;
      d.memory_bandwidth = 5e10;
      break;
  }
  return d;
}

Topology RandomTopology(std::mt19937_64& rng) {
  const int n = Between(rng, 1, 6);
  std::vector<Device> devices;
  for (int i = 0; i < n; ++i) devices.push_back(MakeDevice(rng, i));
  absl::StatusOr<Topology> t;
  switch (Between(rng, 0, 2)) {
    case 0: {
      std::vector<std::vector<double>> bw(n, std::vector<double>(n)), lat(n, std::vector<double>(n));
      for (int a = 0; a < n; ++a) {
        for (int b = 0; b < n; ++b) {
          bw[a][b] = Uniform(rng, 1e9, 1e11);
          lat[a][b] = Uniform(rng, 0, 2e-5);
        }
      }
      t = BuildMatrix("matrix", devices, bw, lat);
      break;
    }
    case 1:
      t = BuildSharedBus("bus", devices, Uniform(rng, 1e9, 5e10), Uniform(rng, 0, 1e-5));
      break;
    default: {
      HierarchySpec spec;
      spec.name = "hierarchy";
      spec.network_bandwidth = Uniform(rng, 1e9, 2.5e10);
      spec.network_latency = Uniform(rng, 0, 3e-5);
      const int hosts = Between(rng, 1, std::min(n, 3));
      spec.hosts.resize(hosts);
      for (int i = 0; i < n; ++i) spec.hosts[i < hosts ? i : Between(rng, 0, hosts - 1)].devices.push_back(devices[i]);
      for (int h = 0; h < hosts; ++h) {
        spec.hosts[h].name = "h" + std::to_string(h);
        spec.hosts[h].intra_bandwidth = Uniform(rng, 5e10, 3e11);
        spec.hosts[h].intra_latency = Uniform(rng, 0, 5e-6);
      }
      t = BuildHierarchy(spec);
    }
  }
  EXPECT_TRUE(t.ok()) << t.status();
  return *std::move(t);
}

Graph RandomGraph(std::mt19937_64& rng) {
  LayeredDagOptions o;
  o.num_ops = Between(rng, 5, 60);
  o.average_fan_in = Uniform(rng, 1.0, 3.0);
  o.layer_width = Between(rng, 0, 8);
  o.skip_probability = Uniform(rng, 0, 0.5);
  o.two_output_fraction = Uniform(rng, 0, 0.5);
  o.num_colocation_groups = Between(rng, 0, 3);
  o.colocation_probability = Uniform(rng, 0, 0.4);
  o.seed = rng();
  absl::StatusOr<Graph> g = LayeredRandomDag(o);
  EXPECT_TRUE(g.ok()) << g.status();
  return *std::move(g);
}

// The same graph with whole-second operator and transfer times, so that many events fall due at once and
// the order in which simultaneous events are handled is put to the test.
Graph WithWholeSeconds(std::mt19937_64& rng, const Graph& g) {
  GraphBuilder builder;
  for (OpId v = 0; v < g.num_ops(); ++v) {
    OpSpec op;
    op.name = std::string(g.name(v));
    op.op_type = "tick";
    for (const char* kind : {"small", "large", "host"}) op.measured_seconds.push_back({kind, Between(rng, 1, 3)});
    op.param_bytes = g.param_bytes(v);
    op.temp_bytes = g.temp_bytes(v);
    for (int32_t k = 0; k < g.num_outputs(v); ++k) {
      op.outputs.push_back(
          OutputTensor{g.tensor(g.first_output(v) + k).bytes, static_cast<double>(Between(rng, 1, 2))});
    }
    if (g.colocation_group(v) != kNone) op.colocation_group = g.colocation_groups()[g.colocation_group(v)];
    builder.AddOp(std::move(op));
  }
  for (EdgeId e = 0; e < g.num_edges(); ++e) builder.AddEdge(g.edge(e).src, g.edge(e).src_output, g.edge(e).dst);
  absl::StatusOr<Graph> out = std::move(builder).Build();
  EXPECT_TRUE(out.ok()) << out.status();
  return *std::move(out);
}

Placement RandomPlacement(std::mt19937_64& rng, const Graph& g, int32_t num_devices) {
  std::vector<DeviceId> group_device(g.colocation_groups().size());
  for (DeviceId& d : group_device) d = Between(rng, 0, num_devices - 1);
  Placement p;
  for (OpId v = 0; v < g.num_ops(); ++v) {
    p.device.push_back(g.colocation_group(v) != kNone ? group_device[g.colocation_group(v)]
                                                      : Between(rng, 0, num_devices - 1));
  }
  return p;
}

// The timeline indexed: each operator's entry and each tensor's transfer to each device (null: none).
struct Timeline {
  std::vector<const TimelineEntry*> op;
  std::vector<std::vector<const TimelineEntry*>> sent;  // [tensor][device]
  bool once = true;                                     // no operator ran twice, no tensor went twice to one device
};

Timeline IndexTimeline(const Graph& g, const Topology& t, const SimulationResult& r) {
  Timeline x{std::vector<const TimelineEntry*>(g.num_ops(), nullptr),
             std::vector<std::vector<const TimelineEntry*>>(g.num_tensors(),
                                                            std::vector<const TimelineEntry*>(t.num_devices()))};
  for (const TimelineEntry& e : r.timeline) {
    if (e.kind == Kind::kOp) {
      if (x.op[e.id] != nullptr) ADD_FAILURE() << "operator " << e.id << " ran twice";
      x.once = x.once && x.op[e.id] == nullptr;
      x.op[e.id] = &e;
    } else {
      if (x.sent[e.id][e.peer] != nullptr) ADD_FAILURE() << "tensor " << e.id << " sent twice to device " << e.peer;
      x.once = x.once && x.sent[e.id][e.peer] == nullptr;
      x.sent[e.id][e.peer] = &e;
    }
  }
  return x;
}

// Every operator ran, on its device, for its time, after its inputs were there. False when one never ran or
// read a tensor that never arrived (nothing further can be checked then).
bool CheckDependencies(const CostModel& costs, const Placement& p, const SimulationResult& r, const Timeline& x) {
  const Graph& g = costs.graph();
  double makespan = 0;
  for (OpId v = 0; v < g.num_ops(); ++v) {
    if (x.op[v] == nullptr) {
      ADD_FAILURE() << "operator " << v << " never ran";
      return false;
    }
    EXPECT_EQ(x.op[v]->device, p.device[v]);
    EXPECT_EQ(x.op[v]->end, x.op[v]->start + costs.op_time(v, p.device[v]));
    makespan = std::max(makespan, x.op[v]->end);
    for (EdgeId e : g.in_edges(v)) {
      const OpId u = g.edge(e).src;
      const TimelineEntry* sent = x.sent[g.edge_tensor(e)][p.device[v]];
      if (p.device[u] == p.device[v]) {
        EXPECT_GE(x.op[v]->start, x.op[u]->end);
      } else {
        if (sent == nullptr) {
          ADD_FAILURE() << "operator " << v << " read a tensor that never arrived";
          return false;
        }
        EXPECT_GE(sent->start, x.op[u]->end);
        EXPECT_EQ(sent->end, sent->start + costs.transfer_time(g.edge_tensor(e), p.device[u], p.device[v]));
        EXPECT_GE(x.op[v]->start, sent->end);
      }
    }
  }
  EXPECT_EQ(r.makespan, makespan);
  return true;
}

using Spells = std::vector<std::vector<std::pair<double, double>>>;  // per device or link: [from, to) sorted

// One operator at a time per device, resting op_gap after each; one transfer at a time per link. Returns the
// devices' busy spells.
Spells CheckExclusiveUse(const Topology& t, const SimulatorConfig& config, const SimulationResult& r) {
  Spells busy(t.num_devices()), link(t.num_resources());
  for (const TimelineEntry& e : r.timeline) {
    if (e.kind == Kind::kOp) {
      busy[e.device].push_back({e.start, e.end + config.op_gap});
    } else {
      for (int32_t l : t.path_resources(t.path(e.device, e.peer)))
        link[l].push_back({e.start, e.end + config.transfer_gap});
    }
  }
  for (auto* uses : {&busy, &link}) {
    for (auto& intervals : *uses) {
      std::sort(intervals.begin(), intervals.end());
      for (size_t i = 1; i < intervals.size(); ++i) {
        EXPECT_GE(intervals[i].first, intervals[i - 1].second - 1e-15) << "overlapping use of a device or link";
      }
    }
  }
  return busy;
}

// Each operator's upward rank: its time plus the longest path after it, transfers included.
std::vector<double> UpwardRanks(const CostModel& costs, const Placement& p) {
  const Graph& g = costs.graph();
  std::vector<double> rank(g.num_ops(), 0);
  for (auto it = g.topo_order().rbegin(); it != g.topo_order().rend(); ++it) {
    const OpId v = *it;
    double after = 0;
    for (const Edge& e : g.out_edges(v)) {
      const double move = p.device[e.dst] == p.device[v]
                              ? 0
                              : costs.transfer_time(g.first_output(v) + e.src_output, p.device[v], p.device[e.dst]);
      after = std::max(after, move + rank[e.dst]);
    }
    rank[v] = costs.op_time(v, p.device[v]) + after;
  }
  return rank;
}

// List scheduling: a device never idles while an operator waits for it, and the one it picks has the
// highest priority among those waiting at that moment.
void CheckListScheduling(const CostModel& costs, const Placement& p, const SimulatorConfig& config, const Timeline& x,
                         const Spells& busy) {
  const Graph& g = costs.graph();
  std::vector<double> ready(g.num_ops(), 0);
  for (OpId v = 0; v < g.num_ops(); ++v) {
    for (EdgeId e : g.in_edges(v)) {
      const OpId u = g.edge(e).src;
      ready[v] =
          std::max(ready[v], p.device[u] == p.device[v] ? x.op[u]->end : x.sent[g.edge_tensor(e)][p.device[v]]->end);
    }
  }
  const std::vector<double> rank = UpwardRanks(costs, p);
  auto runs_first = [&](OpId a, OpId b) {
    if (config.priority == QueuePriority::kTopological) return g.topo_rank(a) < g.topo_rank(b);
    return rank[a] > rank[b] || (rank[a] == rank[b] && a < b);
  };
  for (OpId v = 0; v < g.num_ops(); ++v) {
    const DeviceId d = p.device[v];
    // Walk the device's busy spells from v's ready time to its start: they must leave no gap.
    double covered = ready[v];
    for (const auto& [from, to] : busy[d]) {
      if (from <= covered && to > covered) covered = std::min(to, x.op[v]->start);
    }
    EXPECT_GE(covered, x.op[v]->start) << "device " << d << " idled while operator " << v << " was ready";
    for (OpId w = 0; w < g.num_ops(); ++w) {
      if (w != v && p.device[w] == d && ready[w] <= x.op[v]->start && x.op[w]->start > x.op[v]->start) {
        EXPECT_TRUE(runs_first(v, w)) << "operator " << v << " ran before the higher-priority " << w;
      }
    }
  }
}

// A buffer's [from, to) on a device, as documented in simulator.h.
struct Buffer {
  DeviceId device;
  double from, to;
  int64_t bytes;
};

std::vector<Buffer> Buffers(const Graph& g, const Topology& t, const Placement& p, const Timeline& x) {
  std::vector<Buffer> buffers;
  for (OpId v = 0; v < g.num_ops(); ++v) {
    buffers.push_back({p.device[v], x.op[v]->start, x.op[v]->end, g.temp_bytes(v)});
    for (TensorId tensor = g.first_output(v); tensor < g.first_output(v + 1); ++tensor) {
      double until = x.op[v]->end;
      for (const Edge& e : g.out_edges(v)) {
        if (g.first_output(v) + e.src_output == tensor && p.device[e.dst] == p.device[v])
          until = std::max(until, x.op[e.dst]->end);
      }
      for (DeviceId d = 0; d < t.num_devices(); ++d) {
        const TimelineEntry* sent = x.sent[tensor][d];
        if (sent == nullptr) continue;
        until = std::max(until, sent->end);
        double last_reader = sent->end;
        for (const Edge& e : g.out_edges(v)) {
          if (g.first_output(v) + e.src_output == tensor && p.device[e.dst] == d)
            last_reader = std::max(last_reader, x.op[e.dst]->end);
        }
        buffers.push_back({d, sent->start, last_reader, g.tensor(tensor).bytes});
      }
      buffers.push_back({p.device[v], x.op[v]->start, until, g.tensor(tensor).bytes});
    }
  }
  return buffers;
}

int64_t LiveBytes(const std::vector<Buffer>& buffers, DeviceId d, int64_t params, double at) {
  int64_t live = params;
  for (const Buffer& b : buffers) {
    if (b.device == d && b.from <= at && at < b.to) live += b.bytes;
  }
  return live;
}

// Recounts device d's peak memory with the brute force the simulator avoids (every buffer's interval, summed
// at every instant), and checks the recorded step function: it starts at 0, strictly increases in time, and
// at every time a buffer comes or goes holds what the buffers add up to.
void CheckMemory(const CostModel& costs, const Placement& p, const SimulationResult& r,
                 const std::vector<Buffer>& buffers, DeviceId d) {
  const Graph& g = costs.graph();
  int64_t params = 0;
  for (OpId v = 0; v < g.num_ops(); ++v) params += p.device[v] == d ? g.param_bytes(v) : 0;
  int64_t peak = params;
  for (const Buffer& at : buffers) {
    if (at.device == d && at.from < at.to) peak = std::max(peak, LiveBytes(buffers, d, params, at.from));
  }
  EXPECT_EQ(r.devices[d].peak_memory, peak) << "device " << d;
  EXPECT_EQ(r.devices[d].oom,
            costs.topology().device(d).memory_bytes > 0 && peak > costs.topology().device(d).memory_bytes);

  const std::vector<MemorySample>& samples = r.memory[d];
  ASSERT_FALSE(samples.empty());
  EXPECT_EQ(samples.front().time, 0);
  for (size_t i = 1; i < samples.size(); ++i) EXPECT_LT(samples[i - 1].time, samples[i].time);
  std::vector<double> changes = {0};
  for (const Buffer& b : buffers) {
    if (b.device == d) changes.insert(changes.end(), {b.from, b.to});
  }
  for (double at : changes) {
    auto after = std::upper_bound(samples.begin(), samples.end(), at,
                                  [](double time, const MemorySample& m) { return time < m.time; });
    ASSERT_NE(after, samples.begin());
    EXPECT_EQ(std::prev(after)->bytes, LiveBytes(buffers, d, params, at)) << "device " << d << " at " << at;
  }
}

// Checks the schedule against the rules of the model, and recounts each device's peak memory from the
// timeline.
void CheckSchedule(const CostModel& costs, const Placement& p, const SimulatorConfig& config,
                   const SimulationResult& r) {
  const Graph& g = costs.graph();
  const Topology& t = costs.topology();
  const Timeline x = IndexTimeline(g, t, r);
  if (!x.once || !CheckDependencies(costs, p, r, x)) return;
  const Spells busy = CheckExclusiveUse(t, config, r);
  CheckListScheduling(costs, p, config, x, busy);
  const std::vector<Buffer> buffers = Buffers(g, t, p, x);
  ASSERT_EQ(r.memory.size(), static_cast<size_t>(t.num_devices()));
  for (DeviceId d = 0; d < t.num_devices(); ++d) CheckMemory(costs, p, r, buffers, d);
}

void ExpectSameResult(const SimulationResult& a, const SimulationResult& b) {
  EXPECT_EQ(a.makespan, b.makespan);
  EXPECT_EQ(a.transfers, b.transfers);
  EXPECT_EQ(a.bytes_moved, b.bytes_moved);
  EXPECT_EQ(a.fits_memory, b.fits_memory);
  ASSERT_EQ(a.devices.size(), b.devices.size());
  for (size_t d = 0; d < a.devices.size(); ++d) {
    EXPECT_EQ(a.devices[d].peak_memory, b.devices[d].peak_memory);
    EXPECT_EQ(a.devices[d].busy, b.devices[d].busy);
  }
  ASSERT_EQ(a.timeline.size(), b.timeline.size());
  for (size_t i = 0; i < a.timeline.size(); ++i) {
    EXPECT_EQ(a.timeline[i].kind, b.timeline[i].kind);
    EXPECT_EQ(a.timeline[i].id, b.timeline[i].id);
    EXPECT_EQ(a.timeline[i].device, b.timeline[i].device);
    EXPECT_EQ(a.timeline[i].peer, b.timeline[i].peer);
    EXPECT_EQ(a.timeline[i].start, b.timeline[i].start);
    EXPECT_EQ(a.timeline[i].end, b.timeline[i].end);
  }
}

TEST(SimulatorProperties, SchedulesObeyTheModelAndBoundsNeverExceedThem) {
  constexpr int kProblems = 1000;
  // What the corpus exercised, so that a change to the generators cannot quietly make the test vacuous.
  int with_transfers = 0, with_queued_transfers = 0, out_of_memory = 0, with_groups = 0, with_cpu = 0, multi_host = 0;
  for (int seed = 0; seed < kProblems; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937_64 rng(seed);
    const Topology topology = RandomTopology(rng);
    Graph graph = RandomGraph(rng);
    if (seed % 3 == 0) graph = WithWholeSeconds(rng, graph);
    absl::StatusOr<CostModel> costs = CostModel::Create(graph, topology);
    ASSERT_TRUE(costs.ok()) << costs.status();
    const Placement placement = RandomPlacement(rng, graph, topology.num_devices());
    with_groups += !graph.colocation_groups().empty();
    multi_host += topology.devices().back().host > 0;
    for (const Device& d : topology.devices()) {
      if (d.type == DeviceType::kCpu) {
        ++with_cpu;
        break;
      }
    }

    SimulatorConfig config = Between(rng, 0, 1) == 0 ? SimulatorConfig{} : SimulatorConfig::Placeto();
    config.record_timeline = true;
    const LowerBound step_bound = ComputeLowerBound(*costs, Objective::kStepTime);
    for (QueuePriority priority : {QueuePriority::kTopological, QueuePriority::kUpwardRank}) {
      config.priority = priority;
      absl::StatusOr<SimulationResult> first = Simulate(*costs, placement, config);
      ASSERT_TRUE(first.ok()) << first.status();
      CheckSchedule(*costs, placement, config, *first);
      EXPECT_LE(step_bound.value, first->makespan);
      EXPECT_LE(step_bound.critical_path, first->makespan);
      absl::StatusOr<SimulationResult> second = Simulate(*costs, placement, config);
      ASSERT_TRUE(second.ok()) << second.status();
      ExpectSameResult(*first, *second);
      if (priority == QueuePriority::kTopological) {
        with_transfers += first->transfers > 0;
        out_of_memory += !first->fits_memory;
        std::vector<double> end(graph.num_ops());
        for (const TimelineEntry& e : first->timeline) {
          if (e.kind == Kind::kOp) end[e.id] = e.end;
        }
        for (const TimelineEntry& e : first->timeline) {
          // A transfer that starts after its producer ended waited for a link.
          if (e.kind == Kind::kTransfer && e.start > end[graph.tensor_producer(e.id)]) {
            ++with_queued_transfers;
            break;
          }
        }
      }
      if (::testing::Test::HasFailure()) return;  // one seed's story is enough to debug
    }

    absl::StatusOr<Evaluation> throughput = Evaluate(*costs, placement, Objective::kThroughput);
    ASSERT_TRUE(throughput.ok()) << throughput.status();
    EXPECT_LE(throughput->bound.value, throughput->value);
    EXPECT_GE(throughput->ratio, 1.0);
    if (::testing::Test::HasFailure()) return;
  }
  EXPECT_GT(with_transfers, kProblems / 2);
  EXPECT_GT(with_queued_transfers, kProblems / 10);
  EXPECT_GT(out_of_memory, kProblems / 20);
  EXPECT_LT(out_of_memory, kProblems / 2);
  EXPECT_GT(with_groups, kProblems / 2);
  EXPECT_GT(with_cpu, kProblems / 2);
  EXPECT_GT(multi_host, kProblems / 10);
  std::printf(
      "%d problems: %d with transfers, %d with queued transfers, %d out of memory, %d with colocation "
      "groups, %d with a CPU, %d on several hosts\n",
      kProblems, with_transfers, with_queued_transfers, out_of_memory, with_groups, with_cpu, multi_host);
}

}  // namespace
}  // namespace placement
