// The precision a PyTorch job runs in, and what it does to the tensors of an exported (float32) graph.
//
// - fp32: PyTorch's defaults (TF32 convolutions, float32 matrix products): every tensor as exported.
// - amp_bf16, amp_fp16: float32 weights run under torch.autocast. The operators on autocast's lower-precision
//   list (convolutions, matrix products, linear layers, recurrent cells) run in 16 bits: their outputs take half
//   the bytes, and each casts its weights to a 16-bit copy (half its parameters' bytes), kept for the backward in
//   a training step (saved with its activations) and, in inference, by autocast's cache until the region ends.
//   The operators on autocast's float32 list (softmax, log-softmax, layer and group normalization, exp, log, pow,
//   reductions by sum) run and answer in float32. Every other operator runs in the widest precision of its
//   inputs, as PyTorch promotes types.
// - bf16, fp16: the model converted (model.to(torch.bfloat16)): every float tensor, the weights and the
//   optimizer's state take half the bytes.
//
// Only tensor bytes change here (memory and transfers); what a precision does to kernel times is the cost model's.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/graph.h"

namespace placement {

enum class Precision : uint8_t { kFp32, kAmpBf16, kAmpFp16, kBf16, kFp16 };

absl::string_view PrecisionName(Precision p);  // "fp32", "amp_bf16", "amp_fp16", "bf16", "fp16"
// Also "tf32" (= fp32: TF32 changes kernels, not bytes); an unknown name is an error listing the known ones.
absl::StatusOr<Precision> ParsePrecision(absl::string_view name);

inline bool IsAutocast(Precision p) { return p == Precision::kAmpBf16 || p == Precision::kAmpFp16; }

// Whether autocast runs operators of this ONNX type in 16 bits (its lower-precision list).
bool RunsInLowPrecision(absl::string_view op_type);

// The forward graph with its tensors as they are under `p` (the exported graph holds float32 ones): ids, names,
// costs and edges unchanged, bytes of float tensors scaled (weights too for bf16 and fp16). With `inference`,
// under autocast, each lower-precision operator holding weights gets its 16-bit weight copy as resident bytes
// (`param_bytes`: autocast's cache holds it until the region ends); a training step keeps it for the backward
// instead (BuildTrainingGraph). Under autocast, every operator also gets the casts autocast runs before it
// (OpSpec::casts, AutocastCasts). Linear in the size of g.
absl::StatusOr<Graph> ApplyPrecision(const Graph& g, Precision p, bool inference);

// The casts autocast runs before operator u of g (a float32 graph; `width` is AutocastWidths(g), `weight_view` and
// `requires_grad` per tensor as graph/saved_tensors.h finds them), and those autograd runs back in a training step:
// - an operator on the lower-precision list casts its weights (once a step: autocast caches the copy until its
//   region ends), every weight laid out for it, and every float32 input (per reader: activations are not cached);
// - an operator on the float32 list casts every 16-bit input up;
// - the bias Add of a Linear (a parameter added to a product's output) is cast with the product's weight;
// - every other operator promotes inside its own kernel, with no cast.
// Each cast reads 4 and writes 2 bytes per element or the reverse: 1.5 times the tensor's float32 bytes.
struct AutocastCast {
  ExtraKernels forward;
  ExtraKernels backward;  // of the forward's, the casts whose source requires a gradient
};
AutocastCast AutocastCasts(const Graph& g, OpId u, const std::vector<int32_t>& width,
                           const std::vector<uint8_t>& weight_view, const std::vector<uint8_t>& requires_grad);

// Bytes per element of each tensor of g under autocast: 2 for what runs in 16 bits, 4 for float32, 0 for tensors
// that are no floats or whose type the graph does not say (sizes, masks, constants, weights).
std::vector<int32_t> AutocastWidths(const Graph& g);

// Bytes per element of each tensor of g under a 16-bit precision p: autocast's widths, or, for a model converted
// whole (bf16, fp16), 2 for every float.
std::vector<int32_t> SixteenBitWidths(const Graph& g, Precision p);

// Under autocast, the 16-bit weight copy a lower-precision operator keeps for its backward: half its parameters'
// bytes; 0 otherwise.
int64_t AutocastWeightCopyBytes(const Graph& g, OpId u, Precision p);

}  // namespace placement
