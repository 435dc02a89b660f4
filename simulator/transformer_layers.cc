#include "simulator/transformer_layers.h"

#include <algorithm>
#include <cmath>

#include "graph/op_class.h"

namespace placement::transformer {
namespace {

// Share of the tensor-core peak that large 16-bit GEMMs keep up through a training run on a DGX A100 (clocks under
// sustained load included), where the device states no matrix-product efficiency of its own: the one constant of
// this model set from published runs (Korthikanti et al.'s eight iteration times; bench/megatron/check.py and
// docs/BENCHMARKS.md "Transformer plans" show those and the held-out runs).
constexpr double kLargeGemmShare = 0.77;
// The size of a GEMM dimension at which tile and wave quantization cost half the rate (one 128-wide tile of a
// 256-wide problem leaves the same share idle as 64 of 128).
constexpr double kGemmHalfDim = 48;
// FlashAttention-2 reaches 50-73% of an A100's peak forward and less in the backward (Dao, arXiv 2307.08691):
// its share of the GEMM rate of the same shape.
constexpr double kFlashForwardShare = 0.75;
constexpr double kFlashBackwardShare = 0.55;
// Share of the memory bandwidth a streaming kernel (norm, softmax, dropout, residual) reaches.
constexpr double kStreamShare = 0.8;

struct Dims {
  double b, s, h, a, g, d, t, f, q, kv, tokens, act, rep;  // rep: 1/t under sequence parallelism, else 1
};

Dims DimsOf(const TransformerSpec& spec, const LayerShape& shape) {
  Dims x{};
  x.b = static_cast<double>(shape.micro_batch), x.s = static_cast<double>(shape.seq);
  x.h = static_cast<double>(spec.hidden), x.a = static_cast<double>(spec.heads);
  x.g = static_cast<double>(spec.kv_heads), x.d = static_cast<double>(spec.head_dim);
  x.t = static_cast<double>(shape.tp), x.f = static_cast<double>(spec.ffn);
  // x.kv is per GPU times tp: with fewer key/value heads than tp, each GPU keeps a whole copy of one.
  x.q = x.a * x.d, x.kv = std::max(x.g, x.t) * x.d, x.tokens = x.b * x.s, x.act = shape.act_bytes;
  x.rep = shape.sequence_parallel ? 1.0 / x.t : 1.0;
  return x;
}

LayerKernel Gemm(const char* name, double m, double n, double k, double batch, double saved) {
  LayerKernel g{.name = name, .kind = KernelKind::kGemm, .m = m, .n = n, .k = k, .batch = batch};
  g.flops = 2 * m * n * k * batch;
  g.saved = saved;
  g.output = m * n * batch * 2;
  return g;
}

// A memory-bound kernel moving `bytes`, writing `output` of them.
LayerKernel Stream(const char* name, double bytes, double saved, double output, double backward_factor = 2) {
  return {.name = name, .kind = KernelKind::kMemory, .bytes = bytes, .saved = saved, .output = output,
          .backward_factor = backward_factor};
}

// Entering a tensor-parallel region: under SP an all-gather of the sequence shards (again in the backward, for the
// weight gradient, besides its dual reduce-scatter); without SP nothing forward, an all-reduce backward.
void EnterParallelRegion(const Dims& x, const LayerShape& shape, const char* name, std::vector<LayerKernel>& out) {
  if (shape.tp <= 1) return;
  const bool sp = shape.sequence_parallel;
  out.push_back({.name = name, .kind = sp ? KernelKind::kAllGather : KernelKind::kAllReduce,
                 .bytes = x.tokens * x.h * x.act, .forward_factor = sp ? 1.0 : 0.0, .backward_factor = sp ? 2.0 : 1.0});
}

// Leaving one: an all-reduce forward (identity backward), or under SP a reduce-scatter (an all-gather backward).
void LeaveParallelRegion(const Dims& x, const LayerShape& shape, const char* name, std::vector<LayerKernel>& out) {
  if (shape.tp <= 1) return;
  const bool sp = shape.sequence_parallel;
  out.push_back({.name = name, .kind = sp ? KernelKind::kReduceScatter : KernelKind::kAllReduce,
                 .bytes = x.tokens * x.h * x.act, .backward_factor = sp ? 1.0 : 0.0});
}

void AttentionCore(const TransformerSpec& spec, const LayerShape& shape, const Dims& x,
                   std::vector<LayerKernel>& out) {
  const double heads = x.a / x.t;
  if (shape.flash_attention) {
    const bool causal = spec.family != TransformerFamily::kEncoder;
    LayerKernel fa{.name = "flash_attention", .kind = KernelKind::kAttention, .m = x.s, .n = x.s, .k = x.d,
                   .batch = x.b * heads, .backward_factor = 2.5};
    fa.flops = 4 * x.b * heads * x.s * x.s * x.d * (causal ? 0.5 : 1.0);
    // Q, K and V as projected (no repeat for grouped-query attention) and the row log-sum-exp in float32; the
    // output is the next projection's saved input.
    fa.saved = x.tokens * (x.q + 2 * x.kv) / x.t * x.act + x.b * heads * x.s * 4;
    out.push_back(fa);
    return;
  }
  // Megatron's and eager PyTorch's attention: K and V repeated to every query head, the full seq x seq scores.
  const double scores = x.b * heads * x.s * x.s;
  LayerKernel qk = Gemm("attention_scores", x.s, x.s, x.d, x.b * heads, 2 * x.tokens * x.q / x.t * x.act);
  qk.attention_core = true;
  LayerKernel softmax = Stream("softmax", scores * x.act * 2, 0, scores * x.act);
  LayerKernel dropout = Stream("attention_dropout", scores * (x.act * 2 + 1), 0, scores * x.act);
  // The context product keeps V and the dropout's output; only the latter is seq x seq.
  LayerKernel context = Gemm("attention_context", x.s, x.d, x.s, x.b * heads, x.tokens * x.q / x.t * x.act);
  softmax.core_saved = scores * x.act, dropout.core_saved = scores, context.core_saved = scores * x.act;
  softmax.attention_core = dropout.attention_core = context.attention_core = true;
  out.push_back(qk), out.push_back(softmax), out.push_back(dropout), out.push_back(context);
}

void Mlp(const TransformerSpec& spec, const Dims& x, std::vector<LayerKernel>& out) {
  const double routed = spec.experts > 0 ? static_cast<double>(spec.experts_per_token) : 1.0;
  const double rows = x.tokens * routed;  // token-expert pairs
  if (spec.experts > 0) {
    out.push_back(Gemm("router", x.tokens, static_cast<double>(spec.experts), x.h, 1, 0));
  }
  if (spec.mlp == MlpKind::kGated) {
    out.push_back(Gemm("mlp_gate_up", rows, 2 * x.f / x.t, x.h, 1, rows * x.h * x.act * x.rep));
    // Megatron's fused SwiGLU keeps the gate and up projections (its input), not its product.
    out.push_back(Stream("mlp_activation", rows * x.f / x.t * x.act * 3, 2 * rows * x.f / x.t * x.act,
                             rows * x.f / x.t * x.act));
  } else {
    out.push_back(Gemm("mlp_up", rows, x.f / x.t, x.h, 1, rows * x.h * x.act * x.rep));
    out.push_back(Stream("mlp_activation", rows * x.f / x.t * x.act * 2, rows * x.f / x.t * x.act,
                             rows * x.f / x.t * x.act));
  }
  out.push_back(Gemm("mlp_down", rows, x.h, x.f / x.t, 1, rows * x.f / x.t * x.act));
}

double GemmSeconds(double m, double n, double k, double batch, const Device& device, double tensor_rate,
                   int32_t element_bytes) {
  const double flops = 2 * m * n * k * batch;
  const double compute = flops / (device.peak_flops * tensor_rate * GemmEfficiency(device, m, n, k));
  const double traffic = StreamSeconds(batch * (m * k + k * n + m * n) * element_bytes, device);
  return std::max(compute, traffic);
}

}  // namespace

std::vector<LayerKernel> LayerKernels(const TransformerSpec& spec, const LayerShape& shape) {
  const Dims x = DimsOf(spec, shape);
  const double replicated = x.tokens * x.h * x.rep;  // elements of a tensor of the residual stream on one GPU
  std::vector<LayerKernel> out;
  out.reserve(24);
  out.push_back(Stream("attention_norm", replicated * x.act * 2, replicated * x.act, replicated * x.act));
  EnterParallelRegion(x, shape, "attention_input_collective", out);
  out.push_back(Gemm("qkv", x.tokens, (x.q + 2 * x.kv) / x.t, x.h, 1, replicated * x.act));
  AttentionCore(spec, shape, x, out);
  out.push_back(Gemm("attention_out", x.tokens, x.h, x.q / x.t, 1, x.tokens * x.q / x.t * x.act));
  LeaveParallelRegion(x, shape, "attention_output_collective", out);
  out.push_back(Stream("attention_dropout_add", replicated * (x.act * 3 + 1), replicated, replicated * x.act));
  out.push_back(Stream("mlp_norm", replicated * x.act * 2, replicated * x.act, replicated * x.act));
  EnterParallelRegion(x, shape, "mlp_input_collective", out);
  Mlp(spec, x, out);
  LeaveParallelRegion(x, shape, "mlp_output_collective", out);
  out.push_back(Stream("mlp_dropout_add", replicated * (x.act * 3 + 1), replicated, replicated * x.act));
  return out;
}

std::vector<LayerKernel> EmbeddingKernels(const TransformerSpec& spec, const LayerShape& shape) {
  const Dims x = DimsOf(spec, shape);
  std::vector<LayerKernel> out;
  out.push_back(Stream("embedding", x.tokens * x.h * x.act * 2, 0, x.tokens * x.h * x.act, 1));
  LeaveParallelRegion(x, shape, "embedding_collective", out);  // the vocabulary split over tp
  out.push_back(Stream("embedding_dropout", x.tokens * x.h * x.rep * (x.act * 2 + 1), x.tokens * x.h * x.rep,
                           x.tokens * x.h * x.rep * x.act));
  return out;
}

std::vector<LayerKernel> HeadKernels(const TransformerSpec& spec, const LayerShape& shape) {
  const Dims x = DimsOf(spec, shape);
  const double vocab = static_cast<double>(spec.vocab) / x.t;
  std::vector<LayerKernel> out;
  out.push_back(Stream("final_norm", x.tokens * x.h * x.rep * x.act * 2, x.tokens * x.h * x.rep * x.act,
                           x.tokens * x.h * x.rep * x.act));
  if (spec.family == TransformerFamily::kEncoder) {  // BERT's masked-LM transform: dense and LayerNorm, whole
    out.push_back(Gemm("mlm_transform", x.tokens, x.h, x.h, 1, x.tokens * x.h * x.act));
    out.push_back(Stream("mlm_norm", x.tokens * x.h * x.act * 2, x.tokens * x.h * x.act, x.tokens * x.h * x.act));
  }
  EnterParallelRegion(x, shape, "output_input_collective", out);
  out.push_back(Gemm("output_layer", x.tokens, vocab, x.h, 1, x.tokens * x.h * x.rep * x.act));
  // Cross-entropy in float32 over the vocabulary shard: the logits read, the softmax written and kept.
  out.push_back(Stream("cross_entropy", x.tokens * vocab * (x.act + 8), x.tokens * vocab * 4, x.tokens * vocab * 4, 1));
  if (shape.tp > 1) {
    out.push_back({.name = "cross_entropy_collective", .kind = KernelKind::kAllReduce, .bytes = x.tokens * 12,
                   .backward_factor = 0});  // the logits' maximum, the sum of exponentials, the target's logit
  }
  return out;
}

LayerParameters ParametersPerGpu(const TransformerSpec& spec, int64_t tp) {
  const double h = static_cast<double>(spec.hidden), t = static_cast<double>(tp);
  const double q = static_cast<double>(spec.heads * spec.head_dim);
  // With fewer key/value heads than tp, each GPU keeps a whole copy of one (as x.kv in LayerKernels).
  const double kv = static_cast<double>(std::max(spec.kv_heads, tp) * spec.head_dim);
  const double f = static_cast<double>(spec.ffn), v = static_cast<double>(spec.vocab);
  const double norm = spec.norm == NormKind::kLayerNorm ? 2 * h : h;
  // Column-parallel projections split their biases; the row-parallel output projections' biases are whole.
  const double attention_bias =
      spec.attention_bias ? (q + 2 * kv) / t + (spec.attention_output_bias ? h : 0) : 0;
  double mlp = (spec.mlp == MlpKind::kGated ? 3 : 2) * h * f / t;
  if (spec.mlp_bias) mlp += (spec.mlp == MlpKind::kGated ? 2 * f : f) / t + h;
  if (spec.experts > 0) mlp = mlp * static_cast<double>(spec.experts) + h * static_cast<double>(spec.experts);
  LayerParameters p;
  p.per_layer = h * (q + 2 * kv) / t + q * h / t + attention_bias + mlp + 2 * norm;
  p.embedding = v * h / t + static_cast<double>(spec.max_positions + spec.token_types) * h;
  p.head = norm + (spec.tied_embeddings ? 0 : v * h / t);
  if (spec.family == TransformerFamily::kEncoder) {
    // BERT: a LayerNorm after the embeddings, and the masked-LM head's transform (dense, LayerNorm) and output bias.
    p.embedding += norm;
    p.head += h * h + h + v / t;
  }
  return p;
}

double StreamSeconds(double bytes, const Device& device) { return bytes / (device.memory_bandwidth * kStreamShare); }

double GemmEfficiency(const Device& device, double m, double n, double k) {
  const double stated = device.efficiency[static_cast<int>(OpClass::kGemm)];
  const double share = stated < 1 ? stated : kLargeGemmShare;
  const auto fill = [](double dim) { return dim / (dim + kGemmHalfDim); };
  return share * fill(m) * fill(n) * fill(k);
}

double KernelSeconds(const LayerKernel& kernel, const Device& device, double tensor_rate, bool backward) {
  const int32_t element_bytes = 2;
  switch (kernel.kind) {
    case KernelKind::kGemm:
      if (!backward) {
        return GemmSeconds(kernel.m, kernel.n, kernel.k, kernel.batch, device, tensor_rate, element_bytes) +
               device.launch_overhead;
      }
      // The input's gradient (m x n by n x k) and the weight's (k x m by m x n).
      return GemmSeconds(kernel.m, kernel.k, kernel.n, kernel.batch, device, tensor_rate, element_bytes) +
             GemmSeconds(kernel.k, kernel.n, kernel.m, kernel.batch, device, tensor_rate, element_bytes) +
             2 * device.launch_overhead;
    case KernelKind::kAttention: {
      const double share = backward ? kFlashBackwardShare : kFlashForwardShare;
      const double flops = kernel.flops * (backward ? kernel.backward_factor : 1);
      return flops / (device.peak_flops * tensor_rate * share * GemmEfficiency(device, kernel.m, kernel.n, kernel.k)) +
             device.launch_overhead;
    }
    case KernelKind::kMemory: {
      const double factor = backward ? kernel.backward_factor : 1;
      if (kernel.bytes * factor <= 0) return 0;
      return StreamSeconds(kernel.bytes * factor, device) + device.launch_overhead;
    }
    default:
      return 0;
  }
}

}  // namespace placement::transformer
