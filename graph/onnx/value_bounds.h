// Bounds of small values computed from the data. A detection model clips its boxes to the image (Max with 0,
// Min with the width) and later sizes a mask by a box's width: the size depends on the data, but never exceeds
// the image. Intervals carried through the arithmetic and layout operators give such sizes the most they can
// be, which is the stated bound data_dependent.h assumes for them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "absl/types/span.h"
#include "graph/onnx/constant_folding.h"

namespace placement::onnx_import {

// The least and the most a tensor's values can be (infinite where nothing bounds them): per element for a small
// tensor whose elements are followed one by one, else one range for all of its elements (`uniform`, lo and hi
// scalars), which is what a large tensor or a selection by data-dependent indices allows.
struct Bounds {
  ConstValue lo;
  ConstValue hi;
  bool uniform = false;

  // True when some element has a finite bound at either end: worth keeping.
  bool Informative() const;
  // The most element i (row-major) can be.
  double Upper(int64_t i) const;
};

// A constant is its own bound.
Bounds ExactBounds(const ConstValue& value);
// A tensor about whose values nothing is known.
Bounds UnknownBounds();
// One range for every element: the least and the most of any (the parts of a Split, a selection by indices).
Bounds Uniform(const Bounds& b);

// Whether BoundOutput (or, for Split, Uniform) has a rule for the op: the others are not worth the inputs' bounds.
bool HasBoundRule(const std::string& op);

// The bounds of output 0 of `node` from its inputs' (nullptr: a slot left empty); nullopt when the op has no
// rule. `output_dims` is output 0's shape when inference knows it: per-element bounds need it.
std::optional<Bounds> BoundOutput(const onnx::NodeProto& node, int opset, absl::Span<const Bounds* const> inputs,
                                  const std::vector<int64_t>* output_dims);

}  // namespace placement::onnx_import
