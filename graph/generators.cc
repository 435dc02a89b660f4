#include "graph/generators.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "graph/seeded_random.h"
#include "graph/status_macros.h"

namespace placement {
namespace {

using seeded::Chance;
using seeded::LogUniform;
using seeded::UniformBelow;

absl::Status CheckRange(absl::string_view name, double lo, double hi) {
  if (!(std::isfinite(lo) && std::isfinite(hi) && lo > 0 && lo <= hi)) {
    return absl::InvalidArgumentError(
        absl::StrCat("LayeredDagOptions: ", name, " range [", lo, ", ", hi, "] must be finite with 0 < min <= max"));
  }
  return absl::OkStatus();
}

absl::Status CheckFraction(absl::string_view name, double p) {
  if (!(p >= 0 && p <= 1)) {
    return absl::InvalidArgumentError(absl::StrCat("LayeredDagOptions: ", name, " must be in [0, 1] (got ", p, ")"));
  }
  return absl::OkStatus();
}

absl::Status Validate(const LayeredDagOptions& o) {
  if (o.num_ops < 1)
    return absl::InvalidArgumentError(
        absl::StrCat("LayeredDagOptions: num_ops must be at least 1 (got ", o.num_ops, ")"));
  if (!(std::isfinite(o.average_fan_in) && o.average_fan_in >= 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("LayeredDagOptions: average_fan_in must be at least 1 (got ", o.average_fan_in, ")"));
  }
  if (o.layer_width < 0)
    return absl::InvalidArgumentError(absl::StrCat("LayeredDagOptions: layer_width is negative (", o.layer_width, ")"));
  if (o.num_colocation_groups < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("LayeredDagOptions: num_colocation_groups is negative (", o.num_colocation_groups, ")"));
  }
  for (auto [name, lo, hi] : {std::tuple{"flops", o.min_flops, o.max_flops},
                              std::tuple{"bytes_accessed", o.min_bytes_accessed, o.max_bytes_accessed},
                              std::tuple{"output_bytes", o.min_output_bytes, o.max_output_bytes},
                              std::tuple{"param_bytes", o.min_param_bytes, o.max_param_bytes},
                              std::tuple{"temp_bytes", o.min_temp_bytes, o.max_temp_bytes}}) {
    RETURN_IF_ERROR(CheckRange(name, lo, hi));
  }
  for (auto [name, p] :
       {std::pair{"skip_probability", o.skip_probability}, std::pair{"param_fraction", o.param_fraction},
        std::pair{"temp_fraction", o.temp_fraction}, std::pair{"two_output_fraction", o.two_output_fraction},
        std::pair{"colocation_probability", o.colocation_probability}}) {
    RETURN_IF_ERROR(CheckFraction(name, p));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Graph> LayeredRandomDag(const LayeredDagOptions& o) {
  RETURN_IF_ERROR(Validate(o));
  std::mt19937_64 rng(o.seed);
  const int32_t n = o.num_ops;
  const int32_t width =
      o.layer_width > 0 ? o.layer_width
                        : std::max<int32_t>(1, static_cast<int32_t>(std::lround(std::sqrt(static_cast<double>(n)))));

  GraphBuilder builder;
  std::vector<int32_t> num_outputs(n);
  for (OpId v = 0; v < n; ++v) {
    OpSpec op;
    op.name = absl::StrCat("op", v);
    op.op_type = "synthetic";
    op.flops = LogUniform(rng, o.min_flops, o.max_flops);
    op.bytes_accessed = LogUniform(rng, o.min_bytes_accessed, o.max_bytes_accessed);
    if (Chance(rng, o.param_fraction))
      op.param_bytes = static_cast<int64_t>(LogUniform(rng, o.min_param_bytes, o.max_param_bytes));
    if (Chance(rng, o.temp_fraction))
      op.temp_bytes = static_cast<int64_t>(LogUniform(rng, o.min_temp_bytes, o.max_temp_bytes));
    num_outputs[v] = Chance(rng, o.two_output_fraction) ? 2 : 1;
    for (int32_t k = 0; k < num_outputs[v]; ++k) {
      op.outputs.push_back(
          OutputTensor{static_cast<int64_t>(LogUniform(rng, o.min_output_bytes, o.max_output_bytes)), -1});
    }
    if (o.num_colocation_groups > 0 && Chance(rng, o.colocation_probability)) {
      op.colocation_group = absl::StrCat("group", UniformBelow(rng, static_cast<uint64_t>(o.num_colocation_groups)));
    }
    builder.AddOp(std::move(op));
  }

  // Extra inputs beyond the first follow a geometric law with mean average_fan_in - 1, capped so one
  // operator cannot swallow a layer.
  constexpr int32_t kMaxFanIn = 16;
  const double more_input = (o.average_fan_in - 1) / o.average_fan_in;
  std::vector<std::pair<OpId, int32_t>> inputs;  // (src, output) of the operator being wired
  for (OpId v = width; v < n; ++v) {
    const int32_t layer_begin = v / width * width;
    const int32_t prev_begin = layer_begin - width;
    inputs.clear();
    int32_t fan_in = 1;
    while (fan_in < kMaxFanIn && Chance(rng, more_input)) ++fan_in;
    for (int32_t i = 0; i < fan_in; ++i) {
      // A few draws at most: with a tiny pool every candidate may already be an input, and then we stop.
      for (int32_t attempt = 0; attempt < 4; ++attempt) {
        const bool skip = i > 0 && prev_begin > 0 && Chance(rng, o.skip_probability);
        const int32_t lo = skip ? 0 : prev_begin;
        const int32_t hi = skip ? prev_begin : layer_begin;
        const OpId src = lo + static_cast<OpId>(UniformBelow(rng, static_cast<uint64_t>(hi - lo)));
        const int32_t out = static_cast<int32_t>(UniformBelow(rng, static_cast<uint64_t>(num_outputs[src])));
        if (std::find(inputs.begin(), inputs.end(), std::pair{src, out}) != inputs.end()) continue;
        inputs.emplace_back(src, out);
        builder.AddEdge(src, out, v);
        break;
      }
    }
  }
  return std::move(builder).Build();
}

}  // namespace placement
