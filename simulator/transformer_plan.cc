#include "simulator/transformer_plan.h"

#include <algorithm>
#include <cmath>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "simulator/transformer_layers.h"

namespace placement::transformer {
namespace {

// Share of a link's bandwidth NCCL's ring collectives reach as bus bandwidth (nccl-tests on NVLink and InfiniBand).
constexpr double kCollectiveShare = 0.8;

// Bytes per parameter of the weights, the gradients and the optimizer's state (Adam) under a precision.
// Mixed precision is Megatron-LM's: 16-bit weights, float32 gradients, float32 master weights and two moments.
struct StateBytes {
  double weights, gradients, optimizer, optimizer_pass;  // optimizer_pass: bytes the step reads and writes
};

StateBytes StateBytesOf(Precision p) {
  switch (p) {
    case Precision::kBf16:
    case Precision::kFp16:
      return {2, 2, 4, 16};
    case Precision::kFp32:
      return {4, 4, 8, 28};
    default:
      return {2, 4, 12, 34};
  }
}

// The links one ring of a group uses: `members_in_host` of its ranks share a host; rings that leave the host share
// its network interface with the other groups of that host.
struct Ring {
  int64_t size = 1;
  double bandwidth = 0;
  double latency = 0;
  bool network = false;
};

Ring RingOf(const ClusterShape& c, int64_t size, int64_t stride) {
  Ring r{.size = size, .bandwidth = c.intra_bandwidth, .latency = c.intra_latency};
  if (size * stride <= c.per_host || c.hosts == 1) return r;
  const int64_t members_in_host = std::max<int64_t>(1, std::min(size, c.per_host / std::max<int64_t>(stride, 1)));
  const double network_share = c.network_bandwidth * static_cast<double>(members_in_host) / c.per_host;
  r.bandwidth = std::min(c.intra_bandwidth > 0 ? c.intra_bandwidth : network_share, network_share);
  r.latency = c.network_latency, r.network = true;
  return r;
}

// Seconds of a ring collective over `bytes` (the whole tensor): an all-reduce moves 2 (n-1)/n of it per rank,
// an all-gather or reduce-scatter (n-1)/n.
double RingSeconds(const Ring& r, KernelKind kind, double bytes) {
  if (r.size <= 1 || bytes <= 0) return 0;
  const double n = static_cast<double>(r.size);
  const double passes = kind == KernelKind::kAllReduce ? 2 : 1;
  return passes * ((n - 1) / n * bytes / (r.bandwidth * kCollectiveShare) + (n - 1) * r.latency);
}

bool IsCollective(KernelKind k) {
  return k == KernelKind::kAllReduce || k == KernelKind::kAllGather || k == KernelKind::kReduceScatter;
}

// One micro-batch through a list of kernels on one GPU: compute and tensor-parallel collectives, forward and
// backward, and the forward work selective recomputation repeats.
struct PassTimes {
  double forward = 0, backward = 0, comm_forward = 0, comm_backward = 0, core_forward = 0;
  double saved = 0, core_saved = 0, largest_transient = 0, flops = 0, core_flops = 0, comm_bytes = 0;
};

PassTimes TimeKernels(const std::vector<LayerKernel>& kernels, const Device& device, double tensor_rate,
                      const Ring& tp_ring) {
  PassTimes p;
  for (const LayerKernel& k : kernels) {
    p.saved += k.saved, p.core_saved += k.core_saved;
    if (IsCollective(k.kind)) {
      const double once = RingSeconds(tp_ring, k.kind, k.bytes);
      p.comm_forward += k.forward_factor * once, p.comm_backward += k.backward_factor * once;
      p.comm_bytes += (k.forward_factor + k.backward_factor) * k.bytes;
      continue;
    }
    const double forward = KernelSeconds(k, device, tensor_rate, false);
    p.forward += forward, p.backward += KernelSeconds(k, device, tensor_rate, true), p.flops += k.flops;
    if (k.attention_core) p.core_forward += forward, p.core_flops += k.flops;
    p.largest_transient = std::max(p.largest_transient, k.output);
  }
  return p;
}

struct StageWork {
  double forward = 0, backward = 0, recompute = 0, tp_forward = 0, tp_backward = 0, send = 0;
  double total() const { return forward + backward + recompute + tp_forward + tp_backward + send; }
};

double TensorRate(Precision p) { return p == Precision::kFp32 ? 0.5 : 1.0; }  // TF32 runs at half the 16-bit rate

}  // namespace

TrainingRun RunFor(const TransformerSpec& spec, int64_t seq, int64_t global_batch, Precision precision,
                   absl::string_view seq_option, absl::string_view precision_option,
                   std::vector<std::string>& notes) {
  const int64_t positions = spec.max_positions;
  TrainingRun run{.seq = seq > 0 ? seq : (positions > 0 ? positions : 2048), .global_batch = global_batch,
                  .precision = precision};
  if (seq <= 0) {
    notes.push_back(absl::StrCat("seq ", run.seq, positions > 0 ? " (the config's positions)" : " (assumed)", "; ",
                                 seq_option, " sets it"));
  }
  if (precision == Precision::kFp32) {
    notes.push_back(absl::StrCat("fp32: float32 weights and Adam state, TF32 matrix products; large models train with ",
                                 precision_option, " amp_bf16 (16-bit weights, float32 gradients and master weights)"));
  }
  return run;
}

std::string PlanShapeProblem(const TransformerSpec& spec, const ClusterShape& cluster, const TrainingRun& run,
                             const TransformerPlan& p) {
  if (spec.family == TransformerFamily::kEncoderDecoder) {
    return "layer-level plans cover decoder and encoder stacks, not encoder-decoder models; use "
           "--parallelism data, pipeline or operator on its graph";
  }
  if (p.tp * p.pp * p.dp != cluster.devices()) {
    return absl::StrCat("tp x pp x dp = ", p.tp * p.pp * p.dp, " but the cluster has ", cluster.devices(), " GPUs");
  }
  if (spec.heads % p.tp != 0 || (spec.kv_heads % p.tp != 0 && p.tp % spec.kv_heads != 0)) {
    return absl::StrCat("tp=", p.tp, " does not divide the ", spec.heads, " attention heads (", spec.kv_heads,
                        " key/value heads)");
  }
  if (spec.layers % (p.pp * p.vpp) != 0) {
    return absl::StrCat("pp x vpp = ", p.pp * p.vpp, " does not divide the ", spec.layers, " layers");
  }
  if (run.global_batch <= 0 || run.global_batch % (p.dp * p.micro_batch) != 0) {
    return absl::StrCat("the global batch ", run.global_batch, " is not a multiple of dp x mbs = ",
                        p.dp * p.micro_batch, " (--batch is the global batch in sequences)");
  }
  const int64_t micro_batches = run.global_batch / (p.dp * p.micro_batch);
  if (p.vpp > 1 && micro_batches % p.pp != 0) {
    return absl::StrCat("an interleaved schedule (vpp=", p.vpp, ") needs micro-batches (", micro_batches,
                        ") in multiples of pp=", p.pp);
  }
  if (p.vpp > 1 && p.pp == 1) return "vpp > 1 interleaves pipeline stages; it needs pp > 1";
  if (p.sequence_parallel && p.tp == 1) return "sp=1 splits the sequence over the tensor-parallel group; it needs tp > 1";
  return "";
}

namespace {

// What one plan's evaluation shares between its parts: the kernels priced, the rings, the stage's parameters.
struct PlanContext {
  const TransformerSpec& spec;
  const ClusterShape& cluster;
  const TrainingRun& run;
  const TransformerPlan& plan;
  int64_t m = 0;  // micro-batches per pipeline
  double rate = 1;
  StateBytes state{};
  LayerShape shape;
  Ring tp_ring, pp_ring, dp_ring;
  PassTimes layer, embedding, head;
  double layers_per_stage = 0;
  double recompute_layer = 0;  // recomputation's extra forward per layer
  double kept_per_layer = 0;   // what each layer keeps per micro-batch in flight
  double message = 0;          // bytes one GPU sends per micro-batch at a stage boundary
  double send = 0;             // seconds of one such send
  LayerParameters params;
  double stage_params = 0;     // parameters one GPU holds for the stage that holds the most
};

void PriceLayers(PlanContext& x) {
  const TransformerPlan& plan = x.plan;
  x.shape = LayerShape{.micro_batch = plan.micro_batch, .seq = x.run.seq, .tp = plan.tp,
                       .sequence_parallel = plan.sequence_parallel, .flash_attention = plan.flash_attention,
                       .act_bytes = x.run.precision == Precision::kFp32 ? 4 : 2};
  x.tp_ring = RingOf(x.cluster, plan.tp, 1);
  x.layer = TimeKernels(LayerKernels(x.spec, x.shape), x.cluster.device, x.rate, x.tp_ring);
  x.embedding = TimeKernels(EmbeddingKernels(x.spec, x.shape), x.cluster.device, x.rate, x.tp_ring);
  x.head = TimeKernels(HeadKernels(x.spec, x.shape), x.cluster.device, x.rate, x.tp_ring);
  x.layers_per_stage = static_cast<double>(x.spec.layers / plan.pp);
  x.kept_per_layer = x.layer.saved + x.layer.core_saved;
  const double layer_input = static_cast<double>(plan.micro_batch * x.run.seq * x.spec.hidden) *
                             x.shape.act_bytes / (plan.sequence_parallel ? plan.tp : 1);
  if (plan.recompute == LayerRecompute::kFull) {
    x.recompute_layer = x.layer.forward + x.layer.comm_forward, x.kept_per_layer = layer_input;
  } else if (plan.recompute == LayerRecompute::kSelective) {
    x.recompute_layer = x.layer.core_forward, x.kept_per_layer = x.layer.saved;
  }
}

PlanContext MakeContext(const TransformerSpec& spec, const ClusterShape& cluster, const TrainingRun& run,
                        const TransformerPlan& plan) {
  PlanContext x{.spec = spec, .cluster = cluster, .run = run, .plan = plan};
  x.m = run.global_batch / (plan.dp * plan.micro_batch);
  x.rate = TensorRate(run.precision);
  x.state = StateBytesOf(run.precision);
  PriceLayers(x);
  // Sends between stages: 1/tp of a micro-batch's activations per GPU (Megatron's scatter-gather).
  // Every stage is charged the slowest boundary's send: across hosts wherever the pipeline spans them (the tp x dp
  // GPUs of a boundary stage then share their host's adapters), else inside one host.
  x.pp_ring = RingOf(cluster, plan.pp, plan.tp * plan.dp);
  x.message = static_cast<double>(plan.micro_batch * run.seq * spec.hidden) * x.shape.act_bytes / plan.tp;
  x.send = plan.pp > 1 ? x.pp_ring.latency + x.message / (x.pp_ring.bandwidth * kCollectiveShare) : 0;
  x.dp_ring = RingOf(cluster, plan.dp, plan.tp);
  x.params = ParametersPerGpu(spec, plan.tp);
  // The first stage holds the embedding, the last the output layer (a copy of the embedding when tied, as
  // Megatron-LM keeps one there); one stage holds both.
  const double vocab_shard = static_cast<double>(spec.vocab * spec.hidden) / plan.tp;
  const double last_head = x.params.head + (spec.tied_embeddings && plan.pp > 1 ? vocab_shard : 0);
  x.stage_params = x.layers_per_stage * x.params.per_layer +
                   (plan.pp == 1 ? x.params.embedding + x.params.head : std::max(x.params.embedding, last_head));
  return x;
}

// Each stage's work per micro-batch; a micro-batch crosses every boundary vpp times each way.
std::vector<StageWork> StageWorks(const PlanContext& x) {
  std::vector<StageWork> stages(x.plan.pp);
  for (int64_t s = 0; s < x.plan.pp; ++s) {
    StageWork& w = stages[s];
    w.forward = x.layers_per_stage * x.layer.forward, w.backward = x.layers_per_stage * x.layer.backward;
    w.tp_forward = x.layers_per_stage * x.layer.comm_forward, w.tp_backward = x.layers_per_stage * x.layer.comm_backward;
    w.recompute = x.layers_per_stage * x.recompute_layer;
    for (const PassTimes* end : {s == 0 ? &x.embedding : nullptr, s == x.plan.pp - 1 ? &x.head : nullptr}) {
      if (end == nullptr) continue;
      w.forward += end->forward, w.backward += end->backward;
      w.tp_forward += end->comm_forward, w.tp_backward += end->comm_backward;
    }
    w.send = 2.0 * x.plan.vpp * x.send;
  }
  return stages;
}

// The data-parallel reduction: once per iteration (ZeRO-1/2: a reduce-scatter of the gradients and an all-gather
// of the weights after the step; ZeRO-3 also gathers the weights for every micro-batch's forward and backward).
struct DataParallelCost {
  double seconds = 0, bytes = 0, zero3_wire = 0, exposed = 0;
};

DataParallelCost DataParallel(const PlanContext& x, const StageWork& slowest) {
  const double grads = x.stage_params * x.state.gradients, weights = x.stage_params * x.state.weights;
  DataParallelCost c;
  if (x.plan.zero == 0) {
    c.bytes = grads, c.seconds = RingSeconds(x.dp_ring, KernelKind::kAllReduce, grads);
  } else {
    c.bytes = grads + weights;
    c.seconds = RingSeconds(x.dp_ring, KernelKind::kReduceScatter, grads) +
                RingSeconds(x.dp_ring, KernelKind::kAllGather, weights);
  }
  double zero3_exposed = 0;
  if (x.plan.zero == 3 && x.plan.dp > 1) {
    const double per_micro_batch = 2 * RingSeconds(x.dp_ring, KernelKind::kAllGather, weights);
    c.zero3_wire = static_cast<double>(x.m) * per_micro_batch;
    zero3_exposed = static_cast<double>(x.m) * std::max(0.0, per_micro_batch - slowest.total());
    c.bytes += static_cast<double>(x.m) * 2 * weights;
  }
  const double hidden_behind = x.plan.overlap_gradient_reduce ? slowest.backward + slowest.recompute : 0;
  c.exposed = std::max(0.0, c.seconds - hidden_behind) + zero3_exposed;
  return c;
}

// The iteration: m times the slowest stage, the fill and drain (the others' time over vpp), what the reduction
// leaves exposed and the optimizer's pass over its shard.
DataParallelCost TimeIteration(const PlanContext& x, TransformerPlanResult& result) {
  const std::vector<StageWork> stages = StageWorks(x);
  const StageWork& slowest = *std::max_element(
      stages.begin(), stages.end(), [](const StageWork& a, const StageWork& b) { return a.total() < b.total(); });
  double stage_sum = 0;
  for (const StageWork& w : stages) {
    stage_sum += w.total();
    result.stage_times.push_back({w.forward + w.tp_forward, w.backward + w.recompute + w.tp_backward});
  }
  result.send_seconds = x.send;
  const double m = static_cast<double>(x.m);
  const double bubble = (stage_sum - slowest.total()) / static_cast<double>(x.plan.vpp);
  const DataParallelCost dp = DataParallel(x, slowest);
  const double shard = x.plan.zero >= 1 ? static_cast<double>(x.plan.dp) : 1.0;
  const double optimizer = StreamSeconds(x.stage_params / shard * x.state.optimizer_pass, x.cluster.device);
  result.iteration_seconds = m * slowest.total() + bubble + dp.exposed + optimizer;
  IterationParts& parts = result.parts;
  parts.forward = m * slowest.forward, parts.backward = m * slowest.backward;
  parts.recompute = m * slowest.recompute, parts.tensor_parallel = m * (slowest.tp_forward + slowest.tp_backward);
  parts.pipeline_send = m * slowest.send, parts.pipeline_bubble = bubble;
  parts.data_parallel = dp.exposed, parts.optimizer = optimizer;
  return dp;
}

// Memory of the first stage (it keeps the most micro-batches in flight) and of the last (the logits). 1F1B keeps
// pp micro-batches of the first stage's layers; interleaving, L (1 + (pp - 1) / (pp vpp)) layers' worth
// (Korthikanti et al., section 4.2.3).
void CountMemory(const PlanContext& x, TransformerPlanResult& result) {
  const TransformerPlan& plan = x.plan;
  const double in_flight = static_cast<double>(std::min<int64_t>(x.m, plan.pp));
  const double in_flight_layers =
      plan.vpp > 1 ? static_cast<double>(x.spec.layers) * (1.0 + (plan.pp - 1.0) / (plan.pp * plan.vpp))
                   : x.layers_per_stage * in_flight;
  const double first = in_flight_layers * x.kept_per_layer + in_flight * x.embedding.saved +
                       (plan.pp == 1 ? x.head.saved : 0);
  const double last = plan.pp > 1 ? x.layers_per_stage * x.kept_per_layer + x.head.saved : 0;
  GpuMemory& mem = result.memory;
  const double dp = static_cast<double>(plan.dp);
  mem.parameters = x.stage_params * x.state.weights / (plan.zero >= 3 ? dp : 1);
  mem.gradients = x.stage_params * x.state.gradients / (plan.zero >= 2 ? dp : 1);
  mem.optimizer = x.stage_params * x.state.optimizer / (plan.zero >= 1 ? dp : 1);
  mem.activations = std::max(first, last);
  // Transients of the backward: the largest output's gradient, full recomputation's one layer of activations
  // rebuilt at a time, ZeRO-3's gathered layers.
  mem.workspace = std::max({x.layer.largest_transient, x.head.largest_transient, x.embedding.largest_transient}) +
                  (plan.recompute == LayerRecompute::kFull ? x.layer.saved + x.layer.core_saved : 0) +
                  (plan.zero == 3 ? 2 * x.params.per_layer * x.state.weights : 0);
  result.memory_capacity = static_cast<double>(x.cluster.device.memory_bytes);
  result.fits = x.cluster.device.memory_bytes <= 0 || mem.total() <= result.memory_capacity;
}

// Throughput and utilization: model FLOPs count the work once (3x the forward, attention's full seq x seq),
// hardware FLOPs add recomputation's.
void CountThroughput(const PlanContext& x, TransformerPlanResult& result) {
  LayerShape whole = x.shape;
  whole.tp = 1, whole.sequence_parallel = false, whole.flash_attention = false;
  const PassTimes one = TimeKernels(LayerKernels(x.spec, whole), x.cluster.device, x.rate, Ring{});
  const PassTimes one_head = TimeKernels(HeadKernels(x.spec, whole), x.cluster.device, x.rate, Ring{});
  const double micro_batches = static_cast<double>(x.m * x.plan.dp);
  const double layers = static_cast<double>(x.spec.layers);
  const double forward_flops = micro_batches * (layers * one.flops + one_head.flops);
  result.model_flops = 3 * forward_flops;
  const double extra = x.plan.recompute == LayerRecompute::kFull        ? forward_flops
                       : x.plan.recompute == LayerRecompute::kSelective ? micro_batches * layers * one.core_flops
                                                                        : 0;
  const double peak = static_cast<double>(x.cluster.devices()) * x.cluster.device.peak_flops * x.rate;
  result.mfu = result.model_flops / (result.iteration_seconds * peak);
  result.hfu = (result.model_flops + extra) / (result.iteration_seconds * peak);
  result.samples_per_second = static_cast<double>(x.run.global_batch) / result.iteration_seconds;
  result.tokens_per_second = result.samples_per_second * static_cast<double>(x.run.seq);
}

void CountCommunication(const PlanContext& x, const DataParallelCost& dp, TransformerPlanResult& result) {
  const auto link = [](const Ring& r) { return r.network ? "network" : "intra_host"; };
  const double m = static_cast<double>(x.m);
  result.communication.push_back(
      {"tensor_parallel", link(x.tp_ring),
       m * (x.layers_per_stage * x.layer.comm_bytes + x.embedding.comm_bytes + x.head.comm_bytes),
       result.parts.tensor_parallel});
  if (x.plan.pp > 1) {
    result.communication.push_back(
        {"pipeline", link(x.pp_ring), m * 2.0 * x.plan.vpp * x.message, result.parts.pipeline_send});
  }
  if (x.plan.dp > 1) {
    result.communication.push_back({"data_parallel", link(x.dp_ring), dp.bytes, dp.seconds + dp.zero3_wire});
  }
}

}  // namespace

absl::StatusOr<TransformerPlanResult> EvaluateTransformerPlan(const TransformerSpec& spec, const ClusterShape& cluster,
                                                              const TrainingRun& run, const TransformerPlan& plan) {
  if (std::string problem = PlanShapeProblem(spec, cluster, run, plan); !problem.empty()) {
    return spec.family == TransformerFamily::kEncoderDecoder ? absl::UnimplementedError(problem)
                                                             : absl::InvalidArgumentError(problem);
  }
  const PlanContext x = MakeContext(spec, cluster, run, plan);
  TransformerPlanResult result;
  result.plan = plan;
  result.micro_batches = x.m;
  const DataParallelCost dp = TimeIteration(x, result);
  CountMemory(x, result);
  CountThroughput(x, result);
  CountCommunication(x, dp, result);
  return result;
}

}  // namespace placement::transformer
