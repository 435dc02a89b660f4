#include "simulator/plan_simulation.h"

#include <algorithm>
#include <numeric>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "simulator/collectives.h"
#include "simulator/plan_facts.h"
#include "simulator/plan_model.h"

namespace placement {
namespace {

// One operator of the unrolled graph as it is listed (the listing order is the devices' priority).
struct NewOp {
  OpSpec spec;
  DeviceId device = kNone;
  int32_t micro = -1;   // the micro-batch it belongs to
  int32_t control = 0;  // its zero-byte output, for the schedule's edges
};

// The cluster with a collective engine beside every device: a device of its own kind and host whose transfers
// use the device's own link resources, reached from it at no cost, so that all-reduce steps move over the links
// without waiting for the device to finish an operator (NCCL runs on streams of its own).
absl::StatusOr<Topology> WithCollectiveEngines(const Topology& t) {
  const int32_t n = t.num_devices();
  TopologySpec spec;
  spec.name = t.name();
  spec.data_parallel_across_hosts = t.data_parallel_across_hosts();
  for (const Device& d : t.devices()) spec.devices.push_back(d);
  for (const Device& d : t.devices()) {
    spec.devices.push_back(d);
    spec.devices.back().name = absl::StrCat(d.name, "/collectives");
    spec.devices.back().memory_bytes = 0;
  }
  for (int32_t r = 0; r < t.num_resources(); ++r) spec.resources.push_back(t.resource(r));
  const size_t m = 2 * static_cast<size_t>(n);
  spec.latency.assign(m * m, 0);
  spec.path_resources.assign(m * m, {});
  for (size_t a = 0; a < m; ++a) {
    for (size_t b = 0; b < m; ++b) {
      const DeviceId from = static_cast<DeviceId>(a % n), to = static_cast<DeviceId>(b % n);
      if (a == b) continue;
      if (from == to) {
        spec.path_resources[a * m + b] = {static_cast<int32_t>(spec.resources.size())};
        spec.resources.push_back(LinkResource{absl::StrCat(spec.devices[a].name, "->", spec.devices[b].name), 1e18});
        continue;
      }
      const Path& p = t.path(from, to);
      spec.latency[a * m + b] = p.latency;
      const absl::Span<const int32_t> res = t.path_resources(p);
      spec.path_resources[a * m + b].assign(res.begin(), res.end());
    }
  }
  return Topology::Create(std::move(spec));
}

class Unroller {
 public:
  Unroller(const CostModel& costs, const ParallelPlan& plan, int32_t micro_batches)
      : c_(costs), g_(costs.graph()), p_(plan), m_(micro_batches), n_(g_.num_ops()), s_(plan.num_stages()) {
    flush_ = plan.global_batch > 0;
    copy_.assign(static_cast<size_t>(m_) * n_, kNone);
    done_.assign(static_cast<size_t>(m_) * s_, kNone);
    sync_.assign(static_cast<size_t>(m_) * s_, kNone);
    in_flight_.assign(s_, 0);
    backward_.assign(s_, 0);
    for (OpId v = 0; v < n_; ++v) backward_[p_.stage_of_op[v]] |= g_.is_backward(v) && !IsOptimizerUpdate(g_, v);
    facts_ = plan_internal::GatherPlanFacts(costs, plan);
    for (int32_t s = 0; s < s_; ++s) {
      const double grad = facts_.training ? static_cast<double>(facts_.stages[s].weight_bytes) : 0;
      allreduce_.push_back(PlanAllReduce(costs.topology(), plan.stages[s].devices, grad));
      in_flight_[s] = plan.schedule == Schedule::kGPipe || !backward_[s] ? 0 : InFlightMicroBatches(plan, s);
    }
  }

  absl::StatusOr<std::unique_ptr<PlanSimulation>> Run(bool record) {
    List();
    GraphBuilder b;
    for (NewOp& op : ops_) b.AddOp(std::move(op.spec));
    Edges(b);
    auto sim = std::make_unique<PlanSimulation>();
    absl::StatusOr<Graph> graph = std::move(b).Build();
    if (!graph.ok()) return absl::InternalError(absl::StrCat("unrolling the plan: ", graph.status().message()));
    sim->graph = std::make_unique<Graph>(*std::move(graph));
    absl::StatusOr<Topology> engines = WithCollectiveEngines(c_.topology());
    if (!engines.ok()) return engines.status();
    sim->topology = std::make_unique<Topology>(*std::move(engines));
    absl::StatusOr<CostModel> costs = CostModel::Create(*sim->graph, *sim->topology);
    if (!costs.ok()) return costs.status();
    sim->costs = std::make_unique<CostModel>(*std::move(costs));
    for (const NewOp& op : ops_) sim->placement.device.push_back(op.device);
    SimulatorConfig config;
    config.priority = QueuePriority::kOpOrder;
    config.record_timeline = true;
    config.host_thread_per_device = true;  // a process per replica and stage
    absl::StatusOr<SimulationResult> result = Simulate(*sim->costs, sim->placement, config);
    if (!result.ok()) return result.status();
    sim->result = *std::move(result);
    sim->micro_batches = m_;
    Measure(*sim);
    if (!record) sim->result.timeline.clear();
    return sim;
  }

 private:
  DeviceId Replica(int32_t s, int32_t micro) const { return p_.stages[s].devices[micro % p_.replicas(s)]; }
  // The device's collective engine (WithCollectiveEngines).
  DeviceId Engine(DeviceId d) const { return d + c_.topology().num_devices(); }
  int32_t LastOf(int32_t s, int32_t micro) const {  // the replica's last micro-batch of the step
    const int32_t r = p_.replicas(s);
    return micro + ((m_ - 1 - micro) / r) * r;
  }

  int32_t Add(OpSpec spec, DeviceId d, int32_t micro) {
    const int32_t control = static_cast<int32_t>(spec.outputs.size()) - 1;
    ops_.push_back(NewOp{std::move(spec), d, micro, control});
    return static_cast<int32_t>(ops_.size() - 1);
  }

  static OpSpec Control(std::string name, std::vector<int64_t> outputs = {0}) {
    OpSpec op;
    op.name = std::move(name);
    op.op_type = "Schedule";
    op.measured_seconds = {{kAnyDeviceKind, 0.0}};
    for (int64_t bytes : outputs) op.outputs.push_back(OutputTensor{bytes});
    return op;
  }

  // What a replica keeps of an operator's resident state: ZeRO splits the optimizer's state (held by the
  // backward's update operators) from stage 1 and the weights from stage 3 over the stage's replicas, as the plan
  // model does (plan_model.cc Shard).
  int64_t ResidentBytes(OpId v, int32_t s) const {
    const int64_t bytes = g_.param_bytes(v), r = p_.replicas(s);
    const bool split = r > 1 && (g_.is_backward(v) ? p_.sharding >= Sharding::kOptimizer
                                                   : p_.sharding == Sharding::kParameters);
    return split ? (bytes + r - 1) / r : bytes;
  }

  void AddCopy(int32_t micro, OpId v) {
    const int32_t s = p_.stage_of_op[v];
    if (flush_ && IsOptimizerUpdate(g_, v) && LastOf(s, micro) != micro) return;  // one update a step
    if (copy_[static_cast<size_t>(micro) * n_ + v] != kNone) return;
    const DeviceId d = Replica(s, micro);
    OpSpec op = SpecOf(g_, v);
    op.name = absl::StrCat(op.name, "#", micro);
    double seconds = c_.op_time(v, d);
    // Recomputation runs the stage's forward again within its backward pass, the host issuing its operators
    // again too: each backward operator's kernels take their share of both passes (forward and backward each at
    // least the host's time to issue, as the plan model counts them).
    if (p_.recompute == Recompute::kFull && g_.is_backward(v) && !IsOptimizerUpdate(g_, v)) {
      const plan_internal::StageFacts& f = facts_.stages[s];
      if (f.backward_kernels > 0) seconds *= (f.backward + f.forward) / f.backward_kernels;
    }
    op.measured_seconds = {{c_.topology().device(d).kind, seconds}};
    op.flops = op.bytes_accessed = 0;
    op.colocation_group.clear();
    op.pinned_device.clear();
    op.param_bytes = micro < p_.replicas(s) ? ResidentBytes(v, s) : 0;  // resident once per replica
    op.outputs.push_back(OutputTensor{0});            // control
    copy_[static_cast<size_t>(micro) * n_ + v] = Add(std::move(op), d, micro);
  }

  void List() {
    const bool gpipe = p_.schedule == Schedule::kGPipe;
    for (int pass = 0; pass < (gpipe ? 2 : 1); ++pass) {
      for (int32_t micro = 0; micro < m_; ++micro) {
        for (OpId v : g_.topo_order()) {
          // Without a flush a round's updates wait for its all-reduce and are listed with its syncs (ListRounds).
          if (!flush_ && IsOptimizerUpdate(g_, v)) continue;
          if (!gpipe || g_.is_backward(v) == (pass == 1)) AddCopy(micro, v);
        }
        if (gpipe && pass == 0) continue;
        for (int32_t s = 0; s < s_; ++s) {
          if (backward_[s])
            done_[Slot(micro, s)] =
                Add(Control(absl::StrCat("stage", s + 1, "/done#", micro)), Replica(s, micro), micro);
        }
        if (!flush_) ListRounds(micro);
      }
    }
    if (flush_) ListStepEnd();
    for (int32_t s = 0; s < s_; ++s) ListUpdates(s);
  }

  size_t Slot(int32_t micro, int32_t s) const { return static_cast<size_t>(micro) * s_ + s; }

  // Without a global batch: a stage's round closes with its last micro-batch, then its all-reduce and syncs.
  void ListRounds(int32_t micro) {
    for (int32_t s = 0; s < s_; ++s) {
      const int32_t r = p_.replicas(s);
      if (!backward_[s] || ((micro + 1) % r != 0 && micro != m_ - 1)) continue;
      const int32_t first = micro - micro % r;
      std::vector<int32_t> members;
      for (int32_t k = first; k <= micro; ++k) members.push_back(k);
      // The round before this one updates now: its updates come after this round's backward passes on each
      // device, so that one round's all-reduce can start while the round before it still updates.
      ListUpdates(s);
      ListSync(s, members, absl::StrCat(first / r));
      pending_[s] = members;
    }
  }

  // The updates and syncs of the stage's last round not yet listed.
  void ListUpdates(int32_t s) {
    if (pending_.empty()) pending_.resize(s_);
    for (int32_t micro : pending_[s]) {
      for (OpId v : g_.topo_order()) {
        if (p_.stage_of_op[v] == s && IsOptimizerUpdate(g_, v)) AddCopy(micro, v);
      }
      sync_[Slot(micro, s)] = Add(Control(absl::StrCat("stage", s + 1, "/sync#", micro)), Replica(s, micro), micro);
    }
    pending_[s].clear();
  }

  // With a flush, each stage's gradient buckets are all-reduced one after another, each once the replicas' last
  // micro-batches have produced its gradients (DistributedDataParallel), then the replicas sync.
  void ListStepEnd() {
    for (int32_t s = 0; s < s_; ++s) {
      if (!backward_[s]) continue;
      std::vector<int32_t> lasts;
      for (int32_t q = 0; q < std::min(p_.replicas(s), m_); ++q) lasts.push_back(LastOf(s, q));
      const std::vector<plan_internal::GradientBucket>& buckets = facts_.stages[s].buckets;
      if (lasts.size() < 2 || buckets.empty()) {
        ListSync(s, lasts, "step");
        continue;
      }
      for (size_t k = 0; k < buckets.size(); ++k)
        ListSync(s, lasts, absl::StrCat("bucket", k), &buckets[k], /*sync=*/k + 1 == buckets.size());
    }
  }

  // The all-reduce among the replicas running `micros` (one each), the stage's whole gradient or one bucket of it,
  // then, with `sync`, a sync per replica after its update.
  void ListSync(int32_t s, const std::vector<int32_t>& micros, const std::string& tag,
                const plan_internal::GradientBucket* bucket = nullptr, bool sync = true) {
    std::vector<std::vector<int32_t>> steps;  // [step][replica]
    const AllReducePlan& ar = bucket != nullptr ? bucket->allreduce : allreduce_[s];
    if (micros.size() > 1 && ar.kind != AllReduceKind::kNone) {
      int32_t t = 0;
      for (const CollectiveStep& step : ar.steps) {
        for (int32_t k = 0; k < step.repeat; ++k, ++t) steps.push_back(ListStep(s, micros, step, tag, t));
      }
      steps.push_back(ListStep(s, micros, CollectiveStep{}, tag, t));  // receives the last chunk
      collectives_.push_back(Collective{s, micros, steps, {}, bucket});
      for (const CollectiveStep& step : ar.steps) {
        for (int32_t k = 0; k < step.repeat; ++k) collectives_.back().sends.push_back(&step);
      }
    }
    if (flush_ && sync) {
      for (int32_t micro : micros) {
        sync_[Slot(micro, s)] =
            Add(Control(absl::StrCat("stage", s + 1, "/sync", tag, "#", micro)), Replica(s, micro), micro);
      }
    }
  }

  // The step's operators, one per member, listed in the order of the step's sends (the order the simulator then
  // requests them in, collectives.h); ids[k] is member k's.
  std::vector<int32_t> ListStep(int32_t s, const std::vector<int32_t>& micros, const CollectiveStep& step,
                                const std::string& tag, int32_t t) {
    std::vector<int32_t> order;
    for (const auto& [from, to] : step.sends) {
      for (size_t k = 0; k < micros.size(); ++k) {
        if (Replica(s, micros[k]) == from) order.push_back(static_cast<int32_t>(k));
      }
    }
    for (size_t k = 0; k < micros.size(); ++k) {
      if (std::find(order.begin(), order.end(), static_cast<int32_t>(k)) == order.end())
        order.push_back(static_cast<int32_t>(k));
    }
    std::vector<int32_t> ids(micros.size());
    for (int32_t k : order) {
      const int32_t micro = micros[k];
      ids[k] = (Add(Control(absl::StrCat("stage", s + 1, "/allreduce", tag, ".", t, "#", micro),
                            {static_cast<int64_t>(step.bytes), 0}),
                    Engine(Replica(s, micro)), micro));
    }
    return ids;
  }

  int32_t ControlOutput(int32_t id) const { return ops_[id].control; }
  void Order(GraphBuilder& b, int32_t from, int32_t to) {
    if (from != kNone && to != kNone) b.AddEdge(from, ControlOutput(from), to, 0);
  }

  void Edges(GraphBuilder& b);
  void CollectiveEdges(GraphBuilder& b);
  void Measure(PlanSimulation& sim) const;

  struct Collective {
    int32_t stage;
    std::vector<int32_t> micros;
    std::vector<std::vector<int32_t>> steps;   // ids [step][member]
    std::vector<const CollectiveStep*> sends;  // what step t sends
    const plan_internal::GradientBucket* bucket = nullptr;  // the bucket it all-reduces; null: the stage's gradients
  };

  const CostModel& c_;
  const Graph& g_;
  const ParallelPlan& p_;
  const int32_t m_, n_, s_;
  bool flush_ = false;
  std::vector<NewOp> ops_;
  std::vector<int32_t> copy_, done_, sync_, in_flight_;
  std::vector<uint8_t> backward_;
  std::vector<AllReducePlan> allreduce_;
  std::vector<Collective> collectives_;
  plan_internal::PlanFacts facts_;  // collectives point at its buckets' all-reduce steps
  std::vector<std::vector<int32_t>> pending_;  // per stage: the members of its round whose updates are not listed
};

void Unroller::Edges(GraphBuilder& b) {
  for (int32_t micro = 0; micro < m_; ++micro) {
    for (OpId v = 0; v < n_; ++v) {
      const int32_t to = copy_[static_cast<size_t>(micro) * n_ + v];
      if (to == kNone) continue;
      for (EdgeId e : g_.in_edges(v)) {
        const Edge& edge = g_.edge(e);
        const int32_t from = copy_[static_cast<size_t>(micro) * n_ + edge.src];
        if (from != kNone) b.AddEdge(from, edge.src_output, to, edge.bytes);
      }
      const int32_t s = p_.stage_of_op[v];
      if (g_.is_backward(v) && !IsOptimizerUpdate(g_, v)) Order(b, to, done_[Slot(micro, s)]);
      if (IsOptimizerUpdate(g_, v)) Order(b, to, sync_[Slot(micro, s)]);
      // The window: a forward pass waits for the backward pass `in_flight` micro-batches before it on its replica
      // and, without a global batch, for the all-reduce and update of the round before that one.
      const int32_t window = in_flight_[s] * p_.replicas(s), lag = window + p_.replicas(s);
      if (!g_.is_backward(v) && in_flight_[s] > 0 && micro >= window) {
        Order(b, done_[Slot(micro - window, s)], to);
        if (!flush_ && micro >= lag) Order(b, sync_[Slot(micro - lag, s)], to);
      }
    }
    for (int32_t s = 0; s < s_; ++s) Order(b, done_[Slot(micro, s)], sync_[Slot(micro, s)]);
  }
  CollectiveEdges(b);
}

// Each step's chunk goes to the peer's next step; a device's steps follow one another; the first step waits for
// the backward passes of its micro-batches, the updates and the syncs for the last step.
void Unroller::CollectiveEdges(GraphBuilder& b) {
  for (size_t i = 0; i < collectives_.size(); ++i) {
    const Collective& c = collectives_[i];
    // A stage's buckets go one after another on its devices' collective engines.
    const Collective* previous =
        c.bucket != nullptr && i > 0 && collectives_[i - 1].bucket != nullptr && collectives_[i - 1].stage == c.stage
            ? &collectives_[i - 1]
            : nullptr;
    const int32_t r = p_.replicas(c.stage);
    std::vector<int32_t> member_of(c.micros.size());
    for (size_t k = 0; k < c.micros.size(); ++k) {
      for (int32_t micro = c.micros[k] % r; micro <= c.micros[k]; micro += r) {
        if (c.bucket != nullptr && micro == c.micros[k]) {
          for (OpId v : c.bucket->producers) Order(b, copy_[static_cast<size_t>(micro) * n_ + v], c.steps[0][k]);
        } else if (flush_ || micro == c.micros[k]) {
          Order(b, done_[Slot(micro, c.stage)], c.steps[0][k]);
        }
      }
      if (previous != nullptr) Order(b, previous->steps.back()[k], c.steps[0][k]);
      Order(b, c.steps.back()[k], sync_[Slot(c.micros[k], c.stage)]);
      for (OpId v = 0; v < n_; ++v) {
        if (p_.stage_of_op[v] == c.stage && IsOptimizerUpdate(g_, v)) {
          Order(b, c.steps.back()[k], copy_[static_cast<size_t>(c.micros[k]) * n_ + v]);
        }
      }
    }
    for (size_t t = 0; t + 1 < c.steps.size(); ++t) {
      for (size_t k = 0; k < c.micros.size(); ++k) Order(b, c.steps[t][k], c.steps[t + 1][k]);
      for (const auto& [from, to] : c.sends[t]->sends) {
        const auto at = [&](DeviceId d) {
          for (size_t k = 0; k < c.micros.size(); ++k) {
            if (Engine(Replica(c.stage, c.micros[k])) == d) return static_cast<int32_t>(k);
          }
          return -1;
        };
        const int32_t a = at(Engine(from)), z = at(Engine(to));
        if (a >= 0 && z >= 0) b.AddEdge(c.steps[t][a], 0, c.steps[t + 1][z]);
      }
    }
  }
}

void Unroller::Measure(PlanSimulation& sim) const {
  sim.step_time = flush_ ? sim.result.makespan : 0;
  sim.time_per_sample = sim.result.makespan / (flush_ ? static_cast<double>(p_.global_batch) : m_);
}

}  // namespace

absl::StatusOr<std::unique_ptr<PlanSimulation>> SimulatePlan(const CostModel& costs, const ParallelPlan& plan,
                                                             const PlanSimulationOptions& options) {
  if (absl::Status s = ValidatePlan(costs, plan); !s.ok()) return s;
  int64_t devices = 0, cycle = 1, widest = 1, filling = 1;
  for (int32_t s = 0; s < plan.num_stages(); ++s) {
    devices += plan.replicas(s);
    widest = std::max<int64_t>(widest, plan.replicas(s));
    cycle = std::min<int64_t>(std::lcm(cycle, plan.replicas(s)), 1 << 12);
    filling = std::max<int64_t>(filling, int64_t{InFlightMicroBatches(plan, s)} * plan.replicas(s));
  }
  // Per micro-batch: the graph's copies, a done and a sync per stage, and the all-reduce steps of its replica.
  const int64_t per_micro = costs.graph().num_ops() + 2 * plan.num_stages() + 4 * widest;
  if (plan.global_batch > 0) {
    if (plan.global_batch * per_micro > options.max_operators) {
      return absl::ResourceExhaustedError(absl::StrCat("simulating a step of ", plan.global_batch, " micro-batches of ",
                                                       costs.graph().num_ops(), " operators takes more than ",
                                                       options.max_operators, " operators"));
    }
    return Unroller(costs, plan, static_cast<int32_t>(plan.global_batch)).Run(options.record_timeline);
  }
  // Two runs, the second twice as long: their difference is that many micro-batches in the steady state, what
  // filling and draining the pipeline take cancelling out.
  int64_t micro = options.micro_batches;
  if (micro <= 0) {
    micro = std::max<int64_t>({24, 3 * devices, 2 * filling});
    micro = std::min((micro + cycle - 1) / cycle * cycle, options.max_operators / (2 * per_micro));
    if (micro < filling) micro = 0;  // the pipeline would not fill
  }
  if (micro * 2 * per_micro > options.max_operators || micro < 1) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "simulating the plan's steady state takes ", 2 * std::max<int64_t>(2, filling), " micro-batches of ",
        costs.graph().num_ops(), " operators, more than ", options.max_operators, " operators in all"));
  }
  absl::StatusOr<std::unique_ptr<PlanSimulation>> shorter =
      Unroller(costs, plan, static_cast<int32_t>(micro)).Run(false);
  if (!shorter.ok()) return shorter.status();
  absl::StatusOr<std::unique_ptr<PlanSimulation>> longer =
      Unroller(costs, plan, static_cast<int32_t>(2 * micro)).Run(options.record_timeline);
  if (!longer.ok()) return longer.status();
  (*longer)->time_per_sample = ((*longer)->result.makespan - (*shorter)->result.makespan) / static_cast<double>(micro);
  return longer;
}

}  // namespace placement
