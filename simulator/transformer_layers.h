// One transformer layer as the GPUs of a tensor-parallel group run it: the kernels of one micro-batch's forward
// pass on one GPU (Megatron-LM's column and row splits over `tp`, sequence parallelism, unfused or flash
// attention), each with its FLOPs, bytes moved, the bytes autograd keeps for the backward, and the collectives
// between them; the embedding and output layers likewise. The plan model (transformer_plan.h) prices and stacks
// them; the saved bytes reproduce Korthikanti et al.'s activation formulas (sbh(34 + 5as/h) without parallelism,
// arXiv 2205.05198) because they are counted from the same tensors.
#pragma once

#include <cstdint>
#include <vector>

#include "graph/topology.h"
#include "graph/transformer_spec.h"

namespace placement::transformer {

struct LayerShape {
  int64_t micro_batch = 1;  // sequences per micro-batch
  int64_t seq = 2048;
  int64_t tp = 1;                  // tensor-parallel GPUs
  bool sequence_parallel = false;  // norms, dropouts and residuals split over the sequence (Megatron's SP)
  bool flash_attention = false;    // one fused attention kernel, no seq x seq tensors kept
  int32_t act_bytes = 2;           // bytes per activation element (2: bf16/fp16, 4: fp32)
};

enum class KernelKind : uint8_t {
  kGemm = 0,       // a (batched) matrix product, priced by its shape
  kAttention = 1,  // flash attention: seq x seq work in one kernel
  kMemory = 2,     // bound by memory traffic: norms, softmax, activations, dropout, residuals, gathers
  kAllReduce = 3,  // tensor-parallel collectives over the group's `tp` GPUs
  kAllGather = 4,
  kReduceScatter = 5,
};

struct LayerKernel {
  const char* name = "";
  KernelKind kind = KernelKind::kMemory;
  double m = 0, n = 0, k = 0, batch = 1;  // kGemm: batch products of m x k by k x n
  double flops = 0;                       // forward, one GPU
  double bytes = 0;                       // forward memory traffic (kMemory) or bytes sent (collectives), one GPU
  double saved = 0;                       // bytes kept for the backward, one GPU
  double output = 0;                      // bytes of its output (and of that output's gradient in the backward)
  double core_saved = 0;                  // seq x seq bytes kept, unless selective recomputation drops them
  double forward_factor = 1;              // collectives: how many run forward (0: the forward is the identity)
  double backward_factor = 2;             // backward work as a multiple of the forward's (collectives: a count)
  bool attention_core = false;            // run again in the backward under selective recomputation
};

// The kernels of one decoder or encoder layer, forward, one GPU. GQA's smaller K and V, gated MLPs and experts
// (each token through experts_per_token of them) follow the spec.
std::vector<LayerKernel> LayerKernels(const TransformerSpec& spec, const LayerShape& shape);

// The first stage's embedding (vocabulary split over tp) and the last stage's final norm, output layer and
// cross-entropy (float32 logits kept for the backward).
std::vector<LayerKernel> EmbeddingKernels(const TransformerSpec& spec, const LayerShape& shape);
std::vector<LayerKernel> HeadKernels(const TransformerSpec& spec, const LayerShape& shape);

// Parameters one GPU of the tensor-parallel group holds: of one layer, of the embedding (the vocabulary split, the
// learned positions whole) and of the final norm and output layer (none of its own when tied).
struct LayerParameters {
  double per_layer = 0;
  double embedding = 0;
  double head = 0;
};
LayerParameters ParametersPerGpu(const TransformerSpec& spec, int64_t tp);

// The kernel's time on `device`: GEMMs by shape (GemmEfficiency), flash attention at a share of the GEMM rate,
// memory-bound kernels at the device's bandwidth; plus its launch. `tensor_rate` scales the peak (0.5 for TF32 on
// a device whose peak is the 16-bit one). Collectives are the plan model's. Backward: `backward` true.
double KernelSeconds(const LayerKernel& kernel, const Device& device, double tensor_rate, bool backward);

// Seconds a streaming pass over `bytes` takes at the share of the memory bandwidth such kernels reach (norms,
// softmax, residuals, the optimizer's step).
double StreamSeconds(double bytes, const Device& device);

// Share of the device's peak a GEMM of this shape reaches: the device's matrix-product efficiency (or, for a
// datasheet device that states none, what cuBLAS reaches on large products), lowered where a dimension is
// small enough to leave tiles or waves of the GPU idle.
double GemmEfficiency(const Device& device, double m, double n, double k);

}  // namespace placement::transformer
