#include "graph/onnx/constant_layout.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "graph/onnx/constant_kernels.h"

namespace placement::onnx_import {
namespace {

using onnx::TensorProto;

std::vector<int64_t> Strides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (size_t d = dims.size(); d-- > 1;) strides[d - 1] = strides[d] * dims[d];
  return strides;
}

// For every element of shape `out` (row-major), the flat index `source` maps its coordinates to.
template <typename Source>
std::optional<std::vector<int64_t>> MapIndices(const std::vector<int64_t>& out, const Source& source) {
  std::optional<int64_t> n = FoldableElements(out);
  if (!n) return std::nullopt;
  std::vector<int64_t> index(*n);
  std::vector<int64_t> coord(out.size(), 0);
  for (int64_t flat = 0; flat < *n; ++flat) {
    index[flat] = source(coord);
    for (size_t d = out.size(); d-- > 0;) {
      if (++coord[d] < out[d]) break;
      coord[d] = 0;
    }
  }
  return index;
}

std::optional<ConstValue> Remap(const ConstValue& data, std::vector<int64_t> out_dims,
                                const std::optional<std::vector<int64_t>>& index) {
  if (!index) return std::nullopt;
  return Pick(data, *index, std::move(out_dims));
}

}  // namespace

std::optional<ConstValue> Gather(const ConstValue& data, const ConstValue& indices, int64_t axis_attr) {
  std::optional<int64_t> axis = NormalizeAxis(axis_attr, static_cast<int64_t>(data.dims.size()));
  if (!axis || indices.is_real) return std::nullopt;
  const int64_t size = data.dims[*axis];
  std::vector<int64_t> out(data.dims.begin(), data.dims.begin() + *axis);
  out.insert(out.end(), indices.dims.begin(), indices.dims.end());
  out.insert(out.end(), data.dims.begin() + *axis + 1, data.dims.end());
  for (int64_t k : indices.ints) {
    if (k < -size || k >= size) return std::nullopt;
  }
  const std::vector<int64_t> strides = Strides(data.dims), index_strides = Strides(indices.dims);
  const size_t rank_i = indices.dims.size();
  return Remap(data, out, MapIndices(out, [&](const std::vector<int64_t>& c) {
                 int64_t flat = 0, pick = 0;
                 for (size_t d = 0; d < rank_i; ++d) pick += c[*axis + d] * index_strides[d];
                 int64_t k = indices.ints[pick];
                 for (int64_t d = 0; d < *axis; ++d) flat += c[d] * strides[d];
                 flat += (k < 0 ? k + size : k) * strides[*axis];
                 for (size_t d = *axis + 1; d < data.dims.size(); ++d) flat += c[d - 1 + rank_i] * strides[d];
                 return flat;
               }));
}

std::optional<ConstValue> GatherElements(const ConstValue& data, const ConstValue& indices, int64_t axis_attr) {
  std::optional<int64_t> axis = NormalizeAxis(axis_attr, static_cast<int64_t>(data.dims.size()));
  if (!axis || indices.is_real || indices.dims.size() != data.dims.size()) return std::nullopt;
  const int64_t size = data.dims[*axis];
  for (int64_t k : indices.ints) {
    if (k < -size || k >= size) return std::nullopt;
  }
  const std::vector<int64_t> strides = Strides(data.dims), index_strides = Strides(indices.dims);
  return Remap(data, indices.dims, MapIndices(indices.dims, [&](const std::vector<int64_t>& c) {
                 int64_t pick = 0, flat = 0;
                 for (size_t d = 0; d < c.size(); ++d) pick += c[d] * index_strides[d];
                 for (size_t d = 0; d < c.size(); ++d) {
                   int64_t k = static_cast<int64_t>(d) == *axis ? indices.ints[pick] : c[d];
                   flat += (k < 0 ? k + size : k) * strides[d];
                 }
                 return flat;
               }));
}

std::optional<ConstValue> Concat(absl::Span<const ConstValue* const> inputs, int64_t axis_attr) {
  if (inputs.empty()) return std::nullopt;
  const ConstValue& first = *inputs[0];
  std::optional<int64_t> axis = NormalizeAxis(axis_attr, static_cast<int64_t>(first.dims.size()));
  if (!axis) return std::nullopt;
  std::vector<int64_t> dims = first.dims;
  dims[*axis] = 0;
  bool real = false;
  for (const ConstValue* in : inputs) {
    if (in->dims.size() != first.dims.size()) return std::nullopt;
    for (size_t d = 0; d < dims.size(); ++d) {
      if (static_cast<int64_t>(d) != *axis && in->dims[d] != first.dims[d]) return std::nullopt;
    }
    dims[*axis] += in->dims[*axis];
    real = real || in->is_real;
  }
  if (!FoldableElements(dims)) return std::nullopt;
  int64_t outer = 1;
  for (int64_t d = 0; d < *axis; ++d) outer *= dims[d];
  ConstValue out = real ? Reals(first.elem_type, dims, {}) : Ints(first.elem_type, dims, {});
  for (int64_t o = 0; o < outer; ++o) {
    for (const ConstValue* in : inputs) {
      const int64_t chunk = outer > 0 ? in->size() / outer : 0;
      for (int64_t i = o * chunk; i < (o + 1) * chunk; ++i) {
        if (real)
          out.reals.push_back(in->Real(i));
        else
          out.ints.push_back(in->ints[i]);
      }
    }
  }
  return out;
}

std::optional<ConstValue> Slice(const ConstValue& data, const std::vector<int64_t>& starts,
                                const std::vector<int64_t>& ends, std::vector<int64_t> axes,
                                std::vector<int64_t> steps) {
  const int64_t rank = static_cast<int64_t>(data.dims.size());
  if (axes.empty()) {
    axes.resize(starts.size());
    std::iota(axes.begin(), axes.end(), 0);
  }
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    return std::nullopt;
  std::vector<int64_t> first(rank, 0), step(rank, 1), out = data.dims;
  std::vector<bool> seen(rank, false);
  for (size_t i = 0; i < axes.size(); ++i) {
    std::optional<int64_t> axis = NormalizeAxis(axes[i], rank);
    if (!axis || seen[*axis] || steps[i] == 0) return std::nullopt;
    seen[*axis] = true;
    const int64_t n = data.dims[*axis];
    int64_t s = starts[i], e = ends[i];
    if (s < 0) s = s < -n ? -1 : s + n;  // saturate: INT64_MIN is a common "from the end"
    if (e < 0) e = e < -n ? -1 : e + n;
    if (steps[i] > 0) {
      s = std::clamp<int64_t>(s, 0, n);
      e = std::clamp<int64_t>(e, 0, n);
      out[*axis] = e > s ? (e - s + steps[i] - 1) / steps[i] : 0;
    } else {
      s = std::clamp<int64_t>(s, 0, n - 1);
      e = std::clamp<int64_t>(e, -1, n - 1);
      out[*axis] = s > e ? (s - e - steps[i] - 1) / -steps[i] : 0;
    }
    first[*axis] = s;
    step[*axis] = steps[i];
  }
  const std::vector<int64_t> strides = Strides(data.dims);
  return Remap(data, out, MapIndices(out, [&](const std::vector<int64_t>& c) {
                 int64_t flat = 0;
                 for (int64_t d = 0; d < rank; ++d) flat += (first[d] + c[d] * step[d]) * strides[d];
                 return flat;
               }));
}

std::optional<ConstValue> Transpose(const ConstValue& data, std::vector<int64_t> perm) {
  const int64_t rank = static_cast<int64_t>(data.dims.size());
  if (perm.empty()) {
    for (int64_t d = rank; d-- > 0;) perm.push_back(d);
  }
  if (static_cast<int64_t>(perm.size()) != rank) return std::nullopt;
  std::vector<bool> used(rank, false);
  std::vector<int64_t> out(rank);
  for (int64_t d = 0; d < rank; ++d) {
    if (perm[d] < 0 || perm[d] >= rank || used[perm[d]]) return std::nullopt;
    used[perm[d]] = true;
    out[d] = data.dims[perm[d]];
  }
  const std::vector<int64_t> strides = Strides(data.dims);
  return Remap(data, out, MapIndices(out, [&](const std::vector<int64_t>& c) {
                 int64_t flat = 0;
                 for (int64_t d = 0; d < rank; ++d) flat += c[d] * strides[perm[d]];
                 return flat;
               }));
}

std::optional<ConstValue> Tile(const ConstValue& data, const std::vector<int64_t>& repeats) {
  if (repeats.size() != data.dims.size()) return std::nullopt;
  std::vector<int64_t> out(data.dims.size());
  for (size_t d = 0; d < out.size(); ++d) {
    if (repeats[d] < 0 || __builtin_mul_overflow(data.dims[d], repeats[d], &out[d])) return std::nullopt;
  }
  const std::vector<int64_t> strides = Strides(data.dims);
  return Remap(data, out, MapIndices(out, [&](const std::vector<int64_t>& c) {
                 int64_t flat = 0;
                 for (size_t d = 0; d < c.size(); ++d) flat += (c[d] % data.dims[d]) * strides[d];
                 return flat;
               }));
}

std::optional<ConstValue> Expand(const ConstValue& data, const std::vector<int64_t>& shape) {
  std::optional<std::vector<int64_t>> out = Broadcast(data.dims, shape);
  std::optional<int64_t> n = out ? FoldableElements(*out) : std::nullopt;
  if (!n) return std::nullopt;
  return Pick(data, BroadcastIndex(data.dims, *out, *n), *out);
}

std::optional<std::vector<ConstValue>> Split(const ConstValue& data, int64_t axis_attr,
                                             const std::vector<int64_t>& sizes) {
  const int64_t rank = static_cast<int64_t>(data.dims.size());
  std::optional<int64_t> axis = NormalizeAxis(axis_attr, rank);
  if (!axis) return std::nullopt;
  int64_t total = 0;
  for (int64_t s : sizes) {
    if (s < 0) return std::nullopt;
    total += s;
  }
  if (total != data.dims[*axis]) return std::nullopt;
  std::vector<ConstValue> parts;
  int64_t start = 0;
  for (int64_t s : sizes) {
    std::optional<ConstValue> part = Slice(data, {start}, {start + s}, {*axis}, {1});
    if (!part) return std::nullopt;
    parts.push_back(*std::move(part));
    start += s;
  }
  return parts;
}

std::optional<ConstValue> PadConstant(const ConstValue& data, const std::vector<int64_t>& pads, double value) {
  const size_t rank = data.dims.size();
  if (pads.size() != 2 * rank) return std::nullopt;
  std::vector<int64_t> out(rank);
  for (size_t d = 0; d < rank; ++d) {
    out[d] = data.dims[d] + pads[d] + pads[d + rank];
    if (out[d] < 0) return std::nullopt;
  }
  std::optional<int64_t> n = FoldableElements(out);
  if (!n) return std::nullopt;
  // One extra element holds the pad value; coordinates outside the input pick it.
  ConstValue extended = data;
  if (extended.is_real)
    extended.reals.push_back(value);
  else
    extended.ints.push_back(static_cast<int64_t>(value));
  const int64_t pad_index = data.size();
  const std::vector<int64_t> strides = Strides(data.dims);
  return Remap(extended, out, MapIndices(out, [&](const std::vector<int64_t>& c) {
                 int64_t flat = 0;
                 for (size_t d = 0; d < rank; ++d) {
                   int64_t x = c[d] - pads[d];
                   if (x < 0 || x >= data.dims[d]) return pad_index;
                   flat += x * strides[d];
                 }
                 return flat;
               }));
}

std::optional<ConstValue> NonZero(const ConstValue& data) {
  const int64_t rank = static_cast<int64_t>(data.dims.size());
  if (rank == 0) return std::nullopt;
  const std::vector<int64_t> strides = Strides(data.dims);
  std::vector<int64_t> hits;
  for (int64_t i = 0; i < data.size(); ++i) {
    if (data.Real(i) != 0) hits.push_back(i);
  }
  const int64_t count = static_cast<int64_t>(hits.size());
  if (!FoldableElements({rank, count})) return std::nullopt;
  std::vector<int64_t> values(rank * count, 0);
  for (int64_t d = 0; d < rank; ++d) {
    for (int64_t k = 0; k < count; ++k) values[d * count + k] = hits[k] / strides[d] % data.dims[d];
  }
  return Ints(TensorProto::INT64, {rank, count}, std::move(values));
}

std::optional<ConstValue> Reduce(const std::string& op, const ConstValue& data, std::vector<int64_t> axes,
                                 bool keepdims, bool noop_with_empty_axes) {
  const int64_t rank = static_cast<int64_t>(data.dims.size());
  if (axes.empty()) {
    if (noop_with_empty_axes) return data;
    for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
  }
  std::vector<bool> reduced(rank, false);
  for (int64_t a : axes) {
    std::optional<int64_t> axis = NormalizeAxis(a, rank);
    if (!axis) return std::nullopt;
    reduced[*axis] = true;
  }
  std::vector<int64_t> kept(rank);
  for (int64_t d = 0; d < rank; ++d) kept[d] = reduced[d] ? 1 : data.dims[d];
  std::optional<int64_t> n = FoldableElements(kept);
  if (!n) return std::nullopt;
  const std::vector<int64_t> kept_strides = Strides(kept);
  std::vector<double> acc(*n, op == "ReduceProd" ? 1.0 : 0.0);
  std::vector<int64_t> count(*n, 0);
  std::vector<int64_t> coord(rank, 0);
  for (int64_t i = 0; i < data.size(); ++i) {
    int64_t k = 0;
    for (int64_t d = 0; d < rank; ++d) k += (reduced[d] ? 0 : coord[d]) * kept_strides[d];
    const double x = data.Real(i);
    double& a = acc[k];
    if (op == "ReduceSum" || op == "ReduceMean")
      a += x;
    else if (op == "ReduceProd")
      a *= x;
    else if (op == "ReduceL1")
      a += std::fabs(x);
    else if (op == "ReduceL2" || op == "ReduceSumSquare")
      a += x * x;
    else if (op == "ReduceMax")
      a = count[k] == 0 ? x : std::max(a, x);
    else if (op == "ReduceMin")
      a = count[k] == 0 ? x : std::min(a, x);
    else
      return std::nullopt;
    ++count[k];
    for (int64_t d = rank; d-- > 0;) {
      if (++coord[d] < data.dims[d]) break;
      coord[d] = 0;
    }
  }
  for (int64_t k = 0; k < *n; ++k) {
    if (op == "ReduceMean") acc[k] = count[k] > 0 ? acc[k] / count[k] : NAN;
    if (op == "ReduceL2") acc[k] = std::sqrt(acc[k]);
  }
  std::vector<int64_t> out;
  for (int64_t d = 0; d < rank; ++d) {
    if (!reduced[d] || keepdims) out.push_back(kept[d]);
  }
  if (data.is_real) return Reals(data.elem_type, out, std::move(acc));
  std::vector<int64_t> ints(acc.begin(), acc.end());
  return Ints(data.elem_type, out, std::move(ints));
}

std::optional<ConstValue> ArgReduce(bool max, const ConstValue& data, int64_t axis_attr, bool keepdims,
                                    bool select_last) {
  std::optional<int64_t> axis = NormalizeAxis(axis_attr, static_cast<int64_t>(data.dims.size()));
  if (!axis || data.dims[*axis] == 0) return std::nullopt;
  std::vector<int64_t> out = data.dims;
  out[*axis] = 1;
  const std::vector<int64_t> strides = Strides(data.dims);
  std::optional<std::vector<int64_t>> best = MapIndices(out, [&](const std::vector<int64_t>& c) {
    int64_t base = 0;
    for (size_t d = 0; d < c.size(); ++d) base += c[d] * strides[d];
    int64_t pick = 0;
    for (int64_t k = 1; k < data.dims[*axis]; ++k) {
      double x = data.Real(base + k * strides[*axis]), b = data.Real(base + pick * strides[*axis]);
      if (max ? (x > b || (select_last && x == b)) : (x < b || (select_last && x == b))) pick = k;
    }
    return pick;
  });
  if (!best) return std::nullopt;
  if (!keepdims) out.erase(out.begin() + *axis);
  return Ints(TensorProto::INT64, out, *std::move(best));
}

std::optional<ConstValue> CumSum(const ConstValue& data, int64_t axis_attr, bool exclusive, bool reverse) {
  std::optional<int64_t> axis = NormalizeAxis(axis_attr, static_cast<int64_t>(data.dims.size()));
  if (!axis) return std::nullopt;
  const std::vector<int64_t> strides = Strides(data.dims);
  const int64_t n = data.dims[*axis], stride = strides[*axis];
  ConstValue out = data;
  for (int64_t i = 0; i < data.size(); ++i) {
    if ((i / stride) % n != 0) continue;  // start of a line along the axis
    double real = 0;
    int64_t integer = 0;
    for (int64_t k = 0; k < n; ++k) {
      const int64_t j = i + (reverse ? n - 1 - k : k) * stride;
      const double x = data.Real(j);
      const int64_t xi = data.is_real ? 0 : data.ints[j];
      if (exclusive) {
        if (data.is_real)
          out.reals[j] = real;
        else
          out.ints[j] = integer;
      }
      real += x;
      if (!data.is_real && __builtin_add_overflow(integer, xi, &integer)) return std::nullopt;
      if (!exclusive) {
        if (data.is_real)
          out.reals[j] = real;
        else
          out.ints[j] = integer;
      }
    }
  }
  return out;
}

std::optional<std::vector<int64_t>> ReshapeDims(const std::vector<int64_t>& input, const std::vector<int64_t>& target,
                                                bool allowzero) {
  int64_t total = 1, known = 1, infer = -1;
  for (int64_t d : input) {
    if (__builtin_mul_overflow(total, d, &total)) return std::nullopt;
  }
  std::vector<int64_t> out = target;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == 0 && !allowzero) {
      if (i >= input.size()) return std::nullopt;
      out[i] = input[i];
    }
    if (out[i] == -1) {
      if (infer >= 0) return std::nullopt;
      infer = static_cast<int64_t>(i);
      continue;
    }
    if (out[i] < 0 || __builtin_mul_overflow(known, out[i], &known)) return std::nullopt;
  }
  if (infer >= 0) {
    if (known == 0 || total % known != 0) return std::nullopt;
    out[infer] = total / known;
  } else if (known != total) {
    return std::nullopt;
  }
  return out;
}

}  // namespace placement::onnx_import
