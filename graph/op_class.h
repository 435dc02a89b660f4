// Operator classes of the cost model. Real kernels reach a different share of a device's peak per class: a
// large GEMM or convolution most of its FLOP/s, a depthwise convolution or a normalization a fraction of its
// memory bandwidth. A device carries one efficiency per class (Device::efficiency), measured by
// `placectl calibrate` on a host or taken from published measurements for the GPU presets, and the roofline
// divides by it.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <utility>

#include "absl/strings/string_view.h"

namespace placement {

class Graph;

enum class OpClass : int {
  kGemm,            // MatMul, Gemm, Einsum, recurrent cells: dense matrix products
  kThinGemm,        // the same with few rows (a small batch through a large Linear): streaming the weights
  kConv,            // convolutions that reuse each input many times
  kThinConv,        // depthwise, grouped or few-channel convolutions: little reuse, bandwidth-bound
  kPooling,         // max and average pooling over windows
  kNormalization,   // batch, layer, instance and group norms, softmax, reductions and global pooling
  kElementwise,     // activations, arithmetic, casts: one pass over the data
  kTranscendental,  // sigmoid, tanh, exp, erf, GELU: one pass, but a vector exponential or so per element
  kDataMovement,    // concatenations, slices, gathers, transposes, padding: copies
  kView,            // reshapes, squeezes, identities, shapes: metadata where the runtime has views
  kOptimizer,       // the training step's parameter updates
  kOther,
  kWideThinConv,  // thin convolutions with windows past 3x3 (5x5, 7x7 depthwise): their backward is another kernel
  kChannelsLastThinConv,  // thin convolutions on channels-last data (ConvNeXt's 7x7 depthwise): other kernels again
  kInferenceBatchNorm,    // a batch normalization outside a training step: with its running statistics, a per-channel
                          // scale and shift, one pass over the data where a training step's computes the batch's
  kTrainingBatchNorm,     // a batch normalization in a training step: the batch's statistics, then the scale and
                          // shift; its backward reduces twice over the data
};
inline constexpr int kNumOpClasses = 16;

using ClassFactors = std::array<double, kNumOpClasses>;

// Every class at 1: the plain roofline.
inline constexpr ClassFactors kUnitFactors = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};

// How a class's share of the roofline moves with an operator's arithmetic intensity (FLOPs per byte) on a device:
// points measured on it (intensity, factor on the class's efficiency), by increasing intensity. A large 3x3
// convolution runs on a GPU's tensor cores at several times the rate of a small one, more than any one factor per
// class can say. size 0: none, the class's efficiency alone (graph/cost_model.h IntensityFactor).
struct IntensityCurve {
  static constexpr int kMaxPoints = 8;
  int32_t size = 0;
  std::array<double, kMaxPoints> intensity{};
  std::array<double, kMaxPoints> factor{};
  bool operator==(const IntensityCurve&) const = default;
};
using ClassCurves = std::array<IntensityCurve, kNumOpClasses>;

// Classes split off another after topology and measurement files were written, each with the class it was counted
// in before: a file or a calibration without the first takes the second's factor, in this order (a channels-last
// convolution takes a wide one's, which may itself be the thin ones').
inline constexpr std::pair<OpClass, OpClass> kClassFallbacks[] = {
    {OpClass::kWideThinConv, OpClass::kThinConv},
    {OpClass::kChannelsLastThinConv, OpClass::kWideThinConv},
    {OpClass::kInferenceBatchNorm, OpClass::kNormalization},
    {OpClass::kTrainingBatchNorm, OpClass::kNormalization},
};

// "gemm", "thin_gemm", "conv", "thin_conv", "pooling", "normalization", "elementwise", "transcendental",
// "data_movement", "view", "optimizer", "other", "wide_thin_conv", "channels_last_thin_conv",
// "inference_batch_norm", "training_batch_norm": the keys of a topology's "efficiency" object.
absl::string_view OpClassName(OpClass c);
std::optional<OpClass> OpClassFromName(absl::string_view name);

// The class of an operator type; "ConvGrad" and "ConvWeightGrad" (a training step's backward operators) are
// of the class of "Conv", except "ConcatGrad", a view.
OpClass ClassOfType(absl::string_view op_type);

// A matrix product or convolution doing fewer than kThinFlopsPerByte FLOPs per byte it reads and writes is a
// thin one: a 3x3 depthwise convolution does about 2, a 3x3 over 64 channels about 100, a batch of 8 through a
// Linear layer 4, a ViT's MLP 200. A thin convolution whose kernel window (kh x kw) is past kMaxNarrowWindow is a
// wide one: eager PyTorch's CPU backward of a 5x5 or 7x7 depthwise convolution runs 10 to 30 times its forward,
// of a 3x3 one about twice (torch 1.13, oneDNN), and the flops and bytes do not tell them apart. A thin
// convolution on channels-last data, whatever its window, is of a class of its own: PyTorch runs other kernels
// for it (a 7x7 depthwise backward over 8x96x56x56 on one thread: 46 ms channels-last, 112 ms contiguous).
inline constexpr double kThinFlopsPerByte = 16;
inline constexpr int32_t kMaxNarrowWindow = 9;
OpClass RefineByIntensity(OpClass c, double flops, double bytes_accessed, int32_t window = 0,
                          bool channels_last = false);

// The class of one operator: of its type, refined by its intensity.
OpClass ClassOf(const Graph& graph, int32_t op);

// A measured or fitted efficiency kept within [1e-3, 1e3]: a layer timed at almost nothing (a view) or far
// past its roofline says little beyond "negligible" or "slow", and an extreme factor would swamp the others.
double ClampEfficiency(double efficiency);

// Backward kernels of a class and of its thin form behave alike relative to their forward (a 3x3 depthwise
// convolution's backward takes about twice its forward, as a dense one's does): one backward factor is fitted
// for both. kThinConv -> kConv, kThinGemm -> kGemm, every other class itself (kWideThinConv and
// kChannelsLastThinConv too: their backward kernels are of other kinds, see kMaxNarrowWindow).
OpClass BackwardFamily(OpClass c);

// The class family of a PyTorch autograd function as a profiler trace names it ("ConvolutionBackward0" ->
// kConv, "NativeBatchNormBackward0" -> kNormalization, "AccumulateGrad" -> kOptimizer); kElementwise for the
// activations and arithmetic and for functions it does not know.
OpClass FamilyOfAutogradFunction(absl::string_view function);

// True for a training step's backward operators, by their type ("...Grad", "...WeightGrad").
bool IsBackwardType(absl::string_view op_type);

}  // namespace placement
