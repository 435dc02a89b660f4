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
constexpr double kStreamShare = 0.8;  // as in transformer_layers.cc, for the optimizer's pass

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
  double forward = 0, backward = 0, recompute = 0, tp_comm = 0, send = 0;
  double total() const { return forward + backward + recompute + tp_comm + send; }
};

double TensorRate(Precision p) { return p == Precision::kFp32 ? 0.5 : 1.0; }  // TF32 runs at half the 16-bit rate

}  // namespace

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

absl::StatusOr<TransformerPlanResult> EvaluateTransformerPlan(const TransformerSpec& spec, const ClusterShape& cluster,
                                                              const TrainingRun& run, const TransformerPlan& plan) {
  if (std::string problem = PlanShapeProblem(spec, cluster, run, plan); !problem.empty()) {
    return spec.family == TransformerFamily::kEncoderDecoder ? absl::UnimplementedError(problem)
                                                             : absl::InvalidArgumentError(problem);
  }
  TransformerPlanResult result;
  result.plan = plan;
  const int64_t m = run.global_batch / (plan.dp * plan.micro_batch);
  result.micro_batches = m;
  const Device& device = cluster.device;
  const double rate = TensorRate(run.precision);
  const StateBytes state = StateBytesOf(run.precision);
  LayerShape shape{.micro_batch = plan.micro_batch, .seq = run.seq, .tp = plan.tp,
                   .sequence_parallel = plan.sequence_parallel, .flash_attention = plan.flash_attention,
                   .act_bytes = run.precision == Precision::kFp32 ? 4 : 2};
  const Ring tp_ring = RingOf(cluster, plan.tp, 1);
  const PassTimes layer = TimeKernels(LayerKernels(spec, shape), device, rate, tp_ring);
  const PassTimes embedding = TimeKernels(EmbeddingKernels(spec, shape), device, rate, tp_ring);
  const PassTimes head = TimeKernels(HeadKernels(spec, shape), device, rate, tp_ring);
  const double layers_per_stage = static_cast<double>(spec.layers / plan.pp);

  // Recomputation's extra forward per layer and what each layer keeps per micro-batch in flight.
  double recompute_layer = 0, kept_per_layer = layer.saved + layer.core_saved;
  const double layer_input = static_cast<double>(plan.micro_batch * run.seq * spec.hidden) * shape.act_bytes /
                             (plan.sequence_parallel ? plan.tp : 1);
  if (plan.recompute == LayerRecompute::kFull) {
    recompute_layer = layer.forward + layer.comm_forward, kept_per_layer = layer_input;
  } else if (plan.recompute == LayerRecompute::kSelective) {
    recompute_layer = layer.core_forward, kept_per_layer = layer.saved;
  }

  // Sends between stages: each micro-batch crosses every stage boundary vpp times each way, 1/tp of the
  // activations per GPU (Megatron's scatter-gather of the pipeline's messages).
  const Ring pp_ring = RingOf(cluster, 2, plan.tp * plan.dp);
  const double message = static_cast<double>(plan.micro_batch * run.seq * spec.hidden) * shape.act_bytes / plan.tp;
  const double send = plan.pp > 1 ? plan.vpp * (pp_ring.latency + message / (pp_ring.bandwidth * kCollectiveShare)) : 0;

  std::vector<StageWork> stages(plan.pp);
  for (int64_t s = 0; s < plan.pp; ++s) {
    StageWork& w = stages[s];
    w.forward = layers_per_stage * layer.forward, w.backward = layers_per_stage * layer.backward;
    w.tp_comm = layers_per_stage * (layer.comm_forward + layer.comm_backward);
    w.recompute = layers_per_stage * recompute_layer;
    if (s == 0) w.forward += embedding.forward, w.backward += embedding.backward,
                w.tp_comm += embedding.comm_forward + embedding.comm_backward;
    if (s == plan.pp - 1) w.forward += head.forward, w.backward += head.backward,
                          w.tp_comm += head.comm_forward + head.comm_backward;
    w.send = plan.pp > 1 ? 2 * send : 0;
  }
  const auto slowest = std::max_element(stages.begin(), stages.end(),
                                        [](const StageWork& a, const StageWork& b) { return a.total() < b.total(); });
  double stage_sum = 0;
  for (const StageWork& w : stages) stage_sum += w.total();
  const double steady = static_cast<double>(m) * slowest->total();
  const double bubble = (stage_sum - slowest->total()) / static_cast<double>(plan.vpp);

  // Data parallelism: the stage's gradients reduced once per iteration (ZeRO-1/2: reduce-scattered and the
  // weights all-gathered after the step; ZeRO-3: weights gathered for every micro-batch's forward and backward).
  const LayerParameters params = ParametersPerGpu(spec, plan.tp);
  // The first stage holds the embedding, the last the output layer (a copy of the embedding when tied, as
  // Megatron-LM keeps one there); one stage holds both.
  const double vocab_shard = static_cast<double>(spec.vocab * spec.hidden) / plan.tp;
  const double last_head = params.head + (spec.tied_embeddings && plan.pp > 1 ? vocab_shard : 0);
  const double stage_params = layers_per_stage * params.per_layer +
                              (plan.pp == 1 ? params.embedding + params.head : std::max(params.embedding, last_head));
  const Ring dp_ring = RingOf(cluster, plan.dp, plan.tp);
  double dp_seconds = 0, dp_bytes = 0;
  if (plan.zero == 0) {
    dp_bytes = stage_params * state.gradients;
    dp_seconds = RingSeconds(dp_ring, KernelKind::kAllReduce, dp_bytes);
  } else {
    dp_bytes = stage_params * (state.gradients + state.weights);
    dp_seconds = RingSeconds(dp_ring, KernelKind::kReduceScatter, stage_params * state.gradients) +
                 RingSeconds(dp_ring, KernelKind::kAllGather, stage_params * state.weights);
  }
  double zero3_exposed = 0, zero3_wire = 0;
  if (plan.zero == 3 && plan.dp > 1) {
    const double per_micro_batch = 2 * RingSeconds(dp_ring, KernelKind::kAllGather, stage_params * state.weights);
    zero3_wire = static_cast<double>(m) * per_micro_batch;
    zero3_exposed = static_cast<double>(m) * std::max(0.0, per_micro_batch - slowest->total());
    dp_bytes += static_cast<double>(m) * 2 * stage_params * state.weights;
  }
  const double hidden_behind = plan.overlap_gradient_reduce ? slowest->backward + slowest->recompute : 0;
  const double dp_exposed = std::max(0.0, dp_seconds - hidden_behind) + zero3_exposed;
  const double shard = plan.zero >= 1 ? static_cast<double>(plan.dp) : 1.0;
  const double optimizer_seconds =
      stage_params / shard * state.optimizer_pass / (device.memory_bandwidth * kStreamShare);

  result.iteration_seconds = steady + bubble + dp_exposed + optimizer_seconds;
  IterationParts& parts = result.parts;
  parts.forward = m * slowest->forward, parts.backward = m * slowest->backward;
  parts.recompute = m * slowest->recompute, parts.tensor_parallel = m * slowest->tp_comm;
  parts.pipeline_send = m * slowest->send, parts.pipeline_bubble = bubble;
  parts.data_parallel = dp_exposed, parts.optimizer = optimizer_seconds;

  // Memory of the first stage (it keeps the most micro-batches in flight) and of the last (the logits).
  // 1F1B keeps pp micro-batches of the first stage's layers; interleaving, L (1 + (pp - 1) / (pp vpp)) layers'
  // worth (Korthikanti et al., section 4.2.3).
  const double in_flight_layers =
      plan.vpp > 1 ? static_cast<double>(spec.layers) * (1.0 + (plan.pp - 1.0) / (plan.pp * plan.vpp))
                   : layers_per_stage * static_cast<double>(std::min<int64_t>(m, plan.pp));
  const double first_activations = in_flight_layers * kept_per_layer +
                                   static_cast<double>(std::min<int64_t>(m, plan.pp)) * embedding.saved +
                                   (plan.pp == 1 ? head.saved : 0);
  const double last_activations = (plan.pp > 1 ? layers_per_stage * kept_per_layer + head.saved : 0);
  GpuMemory& mem = result.memory;
  const double grad_shard = plan.zero >= 2 ? plan.dp : 1, weight_shard = plan.zero >= 3 ? plan.dp : 1;
  mem.parameters = stage_params * state.weights / weight_shard;
  mem.gradients = stage_params * state.gradients / grad_shard;
  mem.optimizer = stage_params * state.optimizer / shard;
  mem.activations = std::max(first_activations, last_activations);
  // Transients of the backward: the largest output's gradient, full recomputation's one layer of activations
  // rebuilt at a time, ZeRO-3's gathered layers.
  mem.workspace = std::max({layer.largest_transient, head.largest_transient, embedding.largest_transient}) +
                  (plan.recompute == LayerRecompute::kFull ? layer.saved + layer.core_saved : 0) +
                  (plan.zero == 3 ? 2 * params.per_layer * state.weights : 0);
  result.memory_capacity = static_cast<double>(device.memory_bytes);
  result.fits = device.memory_bytes <= 0 || mem.total() <= result.memory_capacity;

  // Throughput and utilization: model FLOPs count the work once (3x the forward), hardware FLOPs add recomputation.
  LayerShape whole = shape;
  whole.tp = 1, whole.sequence_parallel = false, whole.flash_attention = false;
  const PassTimes one = TimeKernels(LayerKernels(spec, whole), device, rate, Ring{});
  const PassTimes one_head = TimeKernels(HeadKernels(spec, whole), device, rate, Ring{});
  const double micro_batches_total = static_cast<double>(m * plan.dp);
  const double forward_flops = micro_batches_total * (spec.layers * one.flops + one_head.flops);
  result.model_flops = 3 * forward_flops;
  const double extra = plan.recompute == LayerRecompute::kFull        ? forward_flops
                       : plan.recompute == LayerRecompute::kSelective ? micro_batches_total * spec.layers * one.core_flops
                                                                      : 0;
  const double peak = static_cast<double>(cluster.devices()) * device.peak_flops * rate;
  result.mfu = result.model_flops / (result.iteration_seconds * peak);
  result.hfu = (result.model_flops + extra) / (result.iteration_seconds * peak);
  result.samples_per_second = static_cast<double>(run.global_batch) / result.iteration_seconds;
  result.tokens_per_second = result.samples_per_second * static_cast<double>(run.seq);

  const char* tp_link = tp_ring.network ? "network" : "intra_host";
  result.communication.push_back({"tensor_parallel", tp_link,
                                  m * (layers_per_stage * layer.comm_bytes + embedding.comm_bytes + head.comm_bytes),
                                  parts.tensor_parallel});
  if (plan.pp > 1) {
    result.communication.push_back({"pipeline", pp_ring.network ? "network" : "intra_host",
                                    m * 2.0 * plan.vpp * message, parts.pipeline_send});
  }
  if (plan.dp > 1) {
    result.communication.push_back({"data_parallel", dp_ring.network ? "network" : "intra_host", dp_bytes,
                                    dp_seconds + zero3_wire});
  }
  return result;
}

}  // namespace placement::transformer
