// Patterns of exported operators that PyTorch runs as one function: what an exporter spells out in several ONNX
// operators (GELU as Div, Erf, Add, Mul, Mul; SiLU as Sigmoid and Mul; layer normalization before opset 17 as
// ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div; average pooling with padding as Pad and AveragePool; a Linear
// layer on an input of more than two dimensions as MatMul and the bias's Add, where PyTorch runs one addmm with the
// bias in the matrix product) is one autograd node in the model that was exported, which
// keeps only the function's input for its backward. Recognizing them lets two exports of one model, one with the
// fused ONNX operator and one spelled out, cost the same.
#pragma once

#include <cstdint>
#include <vector>

#include "graph/graph.h"

namespace placement {

enum class FusedKind : uint8_t { kGelu, kSilu, kLayerNorm, kPaddedPool, kLinearBias };

// Every pattern found, flat: pattern i's operators are ops[begin[i] .. begin[i + 1]), its input tensor input[i]
// (x of gelu(x), silu(x), layer_norm(x)). A pattern is matched only where its inner tensors have no reader
// outside it, so that fusing it changes nothing else. Linear in the size of g.
struct FusedPatterns {
  std::vector<FusedKind> kind;
  std::vector<TensorId> input;
  std::vector<int32_t> begin = {0};
  std::vector<OpId> ops;

  int32_t size() const { return static_cast<int32_t>(kind.size()); }
};

FusedPatterns FindFusedPatterns(const Graph& g);

}  // namespace placement
