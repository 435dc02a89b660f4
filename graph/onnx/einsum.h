// Einsum equations ("bij,bjk->bik", with "..." and the implicit output form): the output shape, which ONNX
// 1.12's inference leaves unknown beyond its rank, and the multiply-accumulates of the loop nest.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace placement::onnx_import {

struct EinsumShape {
  std::vector<int64_t> output;
  // Product of every label's size and of the broadcast "..." dims: one multiply-accumulate per point of
  // the iteration space.
  double iterations = 0;
};

// nullopt when the equation is malformed or does not fit the operands' ranks and sizes.
std::optional<EinsumShape> AnalyzeEinsum(const std::string& equation,
                                         const std::vector<std::vector<int64_t>>& operands);

}  // namespace placement::onnx_import
