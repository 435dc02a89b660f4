// A training plan of a transformer as practitioners write it: tensor (tp), pipeline (pp, interleaved into vpp
// virtual stages), data (dp) parallelism with ZeRO sharding, recomputation, sequence parallelism, a micro-batch
// size; and its iteration: time at the global batch, tokens per second, model FLOPs utilization, memory per GPU
// by kind and communication by kind, on a cluster of identical hosts (graph/cluster_shape.h).
//
// The model stacks the kernels of transformer_layers.h: a stage's forward and backward per micro-batch (the
// tensor-parallel collectives on the host's links, recomputation's extra forward, the pipeline's sends), 1F1B's
// fill and drain shortened by interleaving ((pp - 1) / vpp stage times), the data-parallel gradient reduction
// (overlapped with the last backward when asked) or ZeRO's reduce-scatter and all-gather, and the optimizer's
// pass over its shard. Ranks are laid out as Megatron-LM lays them out: tensor-parallel groups innermost on
// consecutive GPUs of a host, then data-parallel, then pipeline stages.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/cluster_shape.h"
#include "graph/precision.h"
#include "graph/transformer_spec.h"
#include "simulator/pipeline_schedule.h"

namespace placement::transformer {

enum class LayerRecompute : uint8_t {
  kNone = 0,
  kSelective = 1,  // attention's seq x seq part (scores, softmax, dropout, context) run again in the backward
  kFull = 2,       // each layer's forward run again; only its input kept
};

absl::string_view LayerRecomputeName(LayerRecompute r);  // "none", "selective", "full"

struct TransformerPlan {
  int64_t tp = 1, pp = 1, vpp = 1, dp = 1;
  int64_t micro_batch = 1;  // sequences per micro-batch (mbs)
  int32_t zero = 0;         // 0: none; 1: optimizer state; 2: and gradients; 3: and weights, split over dp
  LayerRecompute recompute = LayerRecompute::kNone;
  bool sequence_parallel = false;
  bool flash_attention = true;
  bool overlap_gradient_reduce = true;  // the data-parallel reduction overlaps the last micro-batch's backward
};

// "tp=8,pp=8,vpp=3,dp=1,mbs=1,zero=1,recompute=selective,sp=1" (also flash=0|1, overlap=0|1); keys may come in
// any order, unnamed ones keep their defaults. INVALID_ARGUMENT naming the key or value otherwise.
// `keys`, when given, receives the keys the text names (a search holds those fixed).
absl::StatusOr<TransformerPlan> ParseTransformerPlan(absl::string_view text,
                                                     std::vector<std::string>* keys = nullptr);
// Whether `plan` agrees with `fixed` on each of `keys`.
bool AgreesOn(const TransformerPlan& plan, const TransformerPlan& fixed, const std::vector<std::string>& keys);
std::string TransformerPlanString(const TransformerPlan& plan);

struct TrainingRun {
  int64_t seq = 2048;
  int64_t global_batch = 0;  // sequences per optimizer step
  Precision precision = Precision::kAmpBf16;
};

// Bytes one GPU holds, by kind (the worst stage's; parameters etc. of the stage that holds the most).
struct GpuMemory {
  double parameters = 0;  // the weights the kernels read (16-bit under mixed precision)
  double gradients = 0;   // float32 under mixed precision (Megatron's main gradients)
  double optimizer = 0;   // Adam's two moments, and the float32 master weights under mixed precision
  double activations = 0; // what autograd keeps for the micro-batches in flight
  double workspace = 0;   // transients of the backward: the largest output's gradient, a recomputed layer
  double total() const { return parameters + gradients + optimizer + activations + workspace; }
};

// Seconds of one iteration by what spends them, on the slowest stage.
struct IterationParts {
  double forward = 0;             // compute of the forward passes (every micro-batch)
  double backward = 0;            // compute of the backward passes
  double recompute = 0;           // recomputation's extra forward work
  double tensor_parallel = 0;     // tensor/sequence-parallel collectives
  double pipeline_send = 0;       // activations and gradients between stages
  double pipeline_bubble = 0;     // fill and drain of the pipeline
  double data_parallel = 0;       // the gradient reduction (and ZeRO's gathers) not hidden behind compute
  double optimizer = 0;           // the optimizer's pass over its shard
};

struct CommunicationVolume {
  std::string kind;  // "tensor_parallel", "pipeline", "data_parallel"
  std::string link;  // "intra_host" or "network"
  double bytes = 0;    // per GPU per iteration
  double seconds = 0;  // on the wire, hidden behind compute or not (IterationParts has what is exposed)
};

struct TransformerPlanResult {
  TransformerPlan plan;
  int64_t micro_batches = 0;  // per pipeline per iteration
  double iteration_seconds = 0;
  double samples_per_second = 0;
  double tokens_per_second = 0;
  double model_flops = 0;     // per iteration: 3 x the forward's, no recomputation
  double mfu = 0;             // model FLOPs / (time x GPUs x peak)
  double hfu = 0;             // hardware FLOPs (recomputation included) likewise
  IterationParts parts;
  GpuMemory memory;
  double memory_capacity = 0;  // bytes per GPU
  bool fits = false;
  std::vector<CommunicationVolume> communication;
  // Per pipeline stage, one micro-batch's forward and backward (collectives and recomputation included), and one
  // send between stages: what SchedulePipeline (pipeline_schedule.h) lays out for a chart.
  std::vector<PipelineStageTimes> stage_times;
  double send_seconds = 0;
  std::vector<std::string> notes;
};

// The run a request asks for: `seq` 0 takes the config's learned positions, else 2048. What was left to that
// default, and what fp32 means here, are said in `notes`, naming the caller's options (`seq_option`: "--seq" or a
// request field; `precision_option` likewise).
TrainingRun RunFor(const TransformerSpec& spec, int64_t seq, int64_t global_batch, Precision precision,
                   absl::string_view seq_option, absl::string_view precision_option,
                   std::vector<std::string>& notes);

// INVALID_ARGUMENT when the plan does not tile the cluster (tp * pp * dp != GPUs), splits what cannot be split
// (heads or kv heads by tp, layers by pp * vpp), leaves a fractional micro-batch count (global batch by dp * mbs)
// or interleaves with a micro-batch count that is not a multiple of pp; UNIMPLEMENTED for an encoder-decoder.
absl::StatusOr<TransformerPlanResult> EvaluateTransformerPlan(const TransformerSpec& spec, const ClusterShape& cluster,
                                                              const TrainingRun& run, const TransformerPlan& plan);

// Why a plan cannot run as given (the first reason EvaluateTransformerPlan would refuse it), or "" when it can.
std::string PlanShapeProblem(const TransformerSpec& spec, const ClusterShape& cluster, const TrainingRun& run,
                             const TransformerPlan& plan);

}  // namespace placement::transformer
