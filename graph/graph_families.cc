#include "graph/graph_families.h"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <random>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/generators.h"
#include "graph/seeded_random.h"
#include "graph/spelling.h"

namespace placement {
namespace {

constexpr int64_t kFloatBytes = 4;
constexpr int32_t kMaxOps = 2'000'000;

// Builds operators with roofline costs and a seeded jitter of up to 25% either way, so that repeated layers
// differ the way measured layers do.
class Emitter {
 public:
  explicit Emitter(uint64_t seed) : rng_(seed) {}

  // An operator reading the first output of each input. bytes_accessed = inputs + outputs + parameters.
  OpId Op(absl::string_view type, double flops, int64_t out_bytes, int64_t param_bytes,
          std::initializer_list<OpId> inputs) {
    return Op(type, flops, out_bytes, param_bytes, std::vector<OpId>(inputs));
  }
  OpId Op(absl::string_view type, double flops, int64_t out_bytes, int64_t param_bytes,
          const std::vector<OpId>& inputs) {
    OpSpec op;
    op.name = absl::StrCat(type, "_", next_);
    op.op_type = std::string(type);
    const double jitter = seeded::LogUniform(rng_, 0.8, 1.25);
    op.flops = flops * jitter;
    double in_bytes = 0;
    for (OpId in : inputs) in_bytes += static_cast<double>(out_bytes_[in]);
    op.bytes_accessed = (in_bytes + static_cast<double>(out_bytes + param_bytes)) * jitter;
    op.param_bytes = param_bytes;
    op.outputs.push_back(OutputTensor{out_bytes, -1});
    builder_.AddOp(std::move(op));
    out_bytes_.push_back(out_bytes);
    for (OpId in : inputs) builder_.AddEdge(in, 0, next_);
    return next_++;
  }

  std::mt19937_64& rng() { return rng_; }
  int32_t count() const { return next_; }
  absl::StatusOr<Graph> Build() && { return std::move(builder_).Build(); }

 private:
  std::mt19937_64 rng_;
  GraphBuilder builder_;
  std::vector<int64_t> out_bytes_;
  OpId next_ = 0;
};

// A chain alternating dense layers and activations, like an unrolled recurrent network.
absl::StatusOr<Graph> Chain(const FamilyOptions& o) {
  Emitter e(o.seed);
  const int64_t act = o.batch * o.width * kFloatBytes;
  OpId prev = e.Op("Input", 0, act, 0, {});
  while (e.count() < o.approx_ops) {
    const bool dense = e.count() % 2 == 1;
    prev = dense ? e.Op("MatMul", 2.0 * o.batch * o.width * o.width, act, o.width * o.width * kFloatBytes, {prev})
                 : e.Op("Tanh", 4.0 * o.batch * o.width, act, 0, {prev});
  }
  return std::move(e).Build();
}

// One source, sqrt(n) branches of equal depth, joined by a concatenation.
absl::StatusOr<Graph> FanOut(const FamilyOptions& o) {
  Emitter e(o.seed);
  const int64_t act = o.batch * o.width * kFloatBytes;
  const int32_t branches = std::max<int32_t>(2, static_cast<int32_t>(std::sqrt(static_cast<double>(o.approx_ops))));
  const int32_t depth = std::max<int32_t>(1, (o.approx_ops - 2) / branches);
  const OpId source = e.Op("Input", 0, act, 0, {});
  std::vector<OpId> ends;
  for (int32_t b = 0; b < branches; ++b) {
    OpId prev = source;
    // Branches differ in width, as experts or inception towers do.
    const int64_t w = std::max<int64_t>(8, static_cast<int64_t>(o.width * seeded::LogUniform(e.rng(), 0.25, 2.0)));
    for (int32_t d = 0; d < depth; ++d) {
      prev = d % 2 == 0 ? e.Op("MatMul", 2.0 * o.batch * o.width * w, o.batch * w * kFloatBytes,
                               o.width * w * kFloatBytes, {prev})
                        : e.Op("Relu", 1.0 * o.batch * w, o.batch * w * kFloatBytes, 0, {prev});
    }
    ends.push_back(prev);
  }
  e.Op("Concat", 0, act * branches, 0, ends);
  return std::move(e).Build();
}

// Transformer blocks over batch x 128 tokens.
absl::StatusOr<Graph> Blocks(const FamilyOptions& o) {
  Emitter e(o.seed);
  constexpr int64_t kSeq = 128;
  const double tokens = static_cast<double>(o.batch * kSeq);
  const int64_t d = o.width;
  const int64_t act = static_cast<int64_t>(tokens) * d * kFloatBytes;
  const int64_t scores = o.batch * 8 * kSeq * kSeq * kFloatBytes;  // 8 heads
  const int64_t dense = d * d * kFloatBytes;
  OpId x = e.Op("Embedding", 0, act, 32000 * d * kFloatBytes, {});
  constexpr int32_t kOpsPerBlock = 14;
  const int32_t blocks = std::max<int32_t>(1, (o.approx_ops - 2) / kOpsPerBlock);
  for (int32_t b = 0; b < blocks; ++b) {
    const OpId ln1 = e.Op("LayerNormalization", 8 * tokens * d, act, 2 * d * kFloatBytes, {x});
    const OpId q = e.Op("MatMul", 2 * tokens * d * d, act, dense, {ln1});
    const OpId k = e.Op("MatMul", 2 * tokens * d * d, act, dense, {ln1});
    const OpId v = e.Op("MatMul", 2 * tokens * d * d, act, dense, {ln1});
    const OpId s = e.Op("MatMul", 2 * tokens * kSeq * d, scores, 0, {q, k});
    const OpId p = e.Op("Softmax", 5.0 * scores / kFloatBytes, scores, 0, {s});
    const OpId ctx = e.Op("MatMul", 2 * tokens * kSeq * d, act, 0, {p, v});
    const OpId proj = e.Op("MatMul", 2 * tokens * d * d, act, dense, {ctx});
    const OpId add1 = e.Op("Add", tokens * d, act, 0, {x, proj});
    const OpId ln2 = e.Op("LayerNormalization", 8 * tokens * d, act, 2 * d * kFloatBytes, {add1});
    const OpId ff1 = e.Op("MatMul", 8 * tokens * d * d, 4 * act, 4 * dense, {ln2});
    const OpId gelu = e.Op("Gelu", 8 * tokens * 4 * d, 4 * act, 0, {ff1});
    const OpId ff2 = e.Op("MatMul", 8 * tokens * d * d, act, 4 * dense, {gelu});
    x = e.Op("Add", tokens * d, act, 0, {add1, ff2});
  }
  e.Op("MatMul", 2 * tokens * d * 32000, static_cast<int64_t>(tokens) * 32000 * kFloatBytes, 0, {x});
  return std::move(e).Build();
}

// NAS-style cells over a 32x32 feature map with width / 8 channels.
absl::StatusOr<Graph> NasCells(const FamilyOptions& o) {
  Emitter e(o.seed);
  constexpr int64_t kSpatial = 32 * 32;
  constexpr int32_t kBlocks = 5;
  const int64_t c = std::max<int64_t>(8, o.width / 8);
  const int64_t act = o.batch * c * kSpatial * kFloatBytes;
  const double pixels = static_cast<double>(o.batch * kSpatial);
  // One operation on one input; an identity adds no operator.
  auto apply = [&](OpId in) -> OpId {
    switch (seeded::UniformBelow(e.rng(), 4)) {
      case 0:
        return e.Op("Conv", 2 * pixels * c * c * 9, act, c * c * 9 * kFloatBytes, {in});
      case 1: {
        const OpId dw = e.Op("DepthwiseConv", 2 * pixels * c * 9, act, c * 9 * kFloatBytes, {in});
        return e.Op("Conv", 2 * pixels * c * c, act, c * c * kFloatBytes, {dw});
      }
      case 2:
        return e.Op("MaxPool", pixels * c * 9, act, 0, {in});
      default:
        return in;
    }
  };
  OpId prev_prev = e.Op("Input", 0, act, 0, {});
  OpId prev = e.Op("Conv", 2 * pixels * c * 3 * 9, act, c * 3 * 9 * kFloatBytes, {prev_prev});
  while (e.count() < o.approx_ops - 2) {
    std::vector<OpId> states = {prev_prev, prev};
    for (int32_t b = 0; b < kBlocks; ++b) {
      const OpId left = apply(states[seeded::UniformBelow(e.rng(), states.size())]);
      OpId right = apply(states[seeded::UniformBelow(e.rng(), states.size())]);
      // Two identities of one state would add a tensor to itself; the block still needs two distinct inputs.
      if (right == left) right = e.Op("MaxPool", pixels * c * 9, act, 0, {left});
      states.push_back(e.Op("Add", pixels * c, act, 0, {left, right}));
    }
    const std::vector<OpId> blocks(states.begin() + 2, states.end());
    const OpId concat = e.Op("Concat", 0, act * kBlocks, 0, blocks);
    prev_prev = prev;
    prev = e.Op("Conv", 2 * pixels * c * c * kBlocks, act, c * c * kBlocks * kFloatBytes, {concat});
  }
  e.Op("GlobalAveragePool", pixels * c, o.batch * c * kFloatBytes, 0, {prev});
  return std::move(e).Build();
}

// Multi-branch residual blocks (ResNeXt, Inception-ResNet) over batch x 64 positions: each block normalizes the
// stream, runs one to four parallel branches of one to three layers of seeded widths, merges them (a sum, or a
// concatenation and a projection) and adds the result to the stream. Half the graphs use dense layers, half
// 3x3 convolutions over an 8x8 map, so branch costs differ by family member as well as by branch.
absl::StatusOr<Graph> Branches(const FamilyOptions& o) {
  Emitter e(o.seed);
  const bool conv = seeded::Chance(e.rng(), 0.5);
  const double positions = static_cast<double>(o.batch * 64);
  const int64_t d = o.width;
  const double kernel = conv ? 9 : 1;
  const char* layer = conv ? "Conv" : "MatMul";
  auto bytes = [&](int64_t channels) { return static_cast<int64_t>(positions) * channels * kFloatBytes; };
  auto dense = [&](int64_t in, int64_t out, OpId from) {
    return e.Op(layer, 2 * positions * in * out * kernel, bytes(out),
                static_cast<int64_t>(in * out * kernel) * kFloatBytes, {from});
  };
  OpId x = e.Op("Input", 0, bytes(d), 0, {});
  x = dense(d, d, x);
  while (e.count() < o.approx_ops - 1) {
    const OpId norm = e.Op("BatchNormalization", 4 * positions * d, bytes(d), 2 * d * kFloatBytes, {x});
    const int32_t branches = 1 + static_cast<int32_t>(seeded::UniformBelow(e.rng(), 4));
    const bool concat = branches > 1 && seeded::Chance(e.rng(), 0.5);
    std::vector<OpId> ends;
    int64_t concat_channels = 0;
    for (int32_t b = 0; b < branches; ++b) {
      const int32_t depth = 1 + static_cast<int32_t>(seeded::UniformBelow(e.rng(), 3));
      const int64_t w = std::max<int64_t>(8, static_cast<int64_t>(d * seeded::LogUniform(e.rng(), 0.25, 2.0)));
      OpId prev = norm;
      int64_t channels = d;
      for (int32_t l = 0; l < depth; ++l) {
        // The last layer of a summed branch returns to the stream's width; a concatenated one keeps its own.
        const int64_t out = (l + 1 == depth && !concat) ? d : w;
        prev = dense(channels, out, prev);
        channels = out;
        if (l + 1 < depth) prev = e.Op("Relu", positions * channels, bytes(channels), 0, {prev});
      }
      ends.push_back(prev);
      concat_channels += channels;
    }
    OpId merged = ends[0];
    if (concat) {
      merged = dense(concat_channels, d, e.Op("Concat", 0, bytes(concat_channels), 0, ends));
    } else if (branches > 1) {
      merged = e.Op("Sum", positions * d * (branches - 1), bytes(d), 0, ends);
    }
    x = e.Op("Add", positions * d, bytes(d), 0, {x, merged});
    x = e.Op("Relu", positions * d, bytes(d), 0, {x});
  }
  return std::move(e).Build();
}

// A U-Net: four levels down (convolutions, then pooling to half the side and twice the channels), a bottom
// stage, and four levels up (upsampling, a concatenation with the same level's skip, convolutions) over a
// 64x64 map with width / 8 channels at the top. The size sets the convolutions per stage, so large members are
// deep stages joined by long skips whose tensors live from the first half of the graph to the second.
absl::StatusOr<Graph> UNet(const FamilyOptions& o) {
  Emitter e(o.seed);
  constexpr int32_t kLevels = 4;
  const int64_t c0 = std::max<int64_t>(8, o.width / 8);
  // 18 operators per convolution of a stage (a convolution and its activation in each of nine stages), and 14
  // more (pools, upsamplings, concatenations, the input and the output convolution); the count is rounded to the
  // nearest (+9 before dividing by 18), so from the smallest U-Net (32 operators) up the graph lands within 9
  // operators of the asked size.
  const int32_t convs = std::max<int32_t>(1, (o.approx_ops - 14 + 9) / 18);
  auto pixels = [&](int32_t level) { return static_cast<double>(o.batch) * (64 >> level) * (64 >> level); };
  auto bytes = [&](int32_t level, int64_t channels) {
    return static_cast<int64_t>(pixels(level)) * channels * kFloatBytes;
  };
  auto stage = [&](int32_t level, int64_t in, int64_t out, OpId x) {
    for (int32_t k = 0; k < convs; ++k) {
      const int64_t from = k == 0 ? in : out;
      x = e.Op("Conv", 2 * pixels(level) * from * out * 9, bytes(level, out), from * out * 9 * kFloatBytes, {x});
      x = e.Op("Relu", pixels(level) * out, bytes(level, out), 0, {x});
    }
    return x;
  };
  OpId x = e.Op("Input", 0, bytes(0, 3), 0, {});
  std::vector<OpId> skips;
  int64_t channels = 3;
  for (int32_t level = 0; level < kLevels; ++level) {
    const int64_t out = c0 << level;
    x = stage(level, channels, out, x);
    channels = out;
    skips.push_back(x);
    x = e.Op("MaxPool", pixels(level) * channels, bytes(level + 1, channels), 0, {x});
  }
  x = stage(kLevels, channels, channels * 2, x);
  channels *= 2;
  for (int32_t level = kLevels - 1; level >= 0; --level) {
    const int64_t out = c0 << level;
    x = e.Op("ConvTranspose", 2 * pixels(level) * channels * out * 4, bytes(level, out),
             channels * out * 4 * kFloatBytes, {x});
    x = e.Op("Concat", 0, bytes(level, 2 * out), 0, {skips[level], x});
    x = stage(level, 2 * out, out, x);
    channels = out;
  }
  e.Op("Conv", 2 * pixels(0) * channels, bytes(0, 1), channels * kFloatBytes, {x});
  return std::move(e).Build();
}

absl::StatusOr<Graph> Layered(const FamilyOptions& o) {
  LayeredDagOptions options;
  options.num_ops = o.approx_ops;
  options.seed = o.seed;
  return LayeredRandomDag(options);
}

using Generator = absl::StatusOr<Graph> (*)(const FamilyOptions&);
constexpr std::pair<absl::string_view, Generator> kFamilies[] = {
    {"layered", Layered}, {"nas_cells", NasCells}, {"blocks", Blocks}, {"fan_out", FanOut},
    {"chain", Chain},     {"branches", Branches},  {"unet", UNet},
};

}  // namespace

const std::vector<std::string>& GraphFamilies() {
  static const std::vector<std::string>* names = [] {
    auto* v = new std::vector<std::string>;
    for (const auto& [name, fn] : kFamilies) v->emplace_back(name);
    return v;
  }();
  return *names;
}

absl::StatusOr<Graph> GenerateFamily(absl::string_view family, const FamilyOptions& o) {
  if (o.approx_ops < 2 || o.approx_ops > kMaxOps) {
    return absl::InvalidArgumentError(
        absl::StrCat("approx_ops must be between 2 and ", kMaxOps, " (got ", o.approx_ops, ")"));
  }
  if (o.batch < 1 || o.batch > 1'000'000)
    return absl::InvalidArgumentError(absl::StrCat("batch must be between 1 and 1000000 (got ", o.batch, ")"));
  if (o.width < 1 || o.width > 1'000'000)
    return absl::InvalidArgumentError(absl::StrCat("width must be between 1 and 1000000 (got ", o.width, ")"));
  for (const auto& [name, generate] : kFamilies) {
    if (name == family) return generate(o);
  }
  const std::string nearest = NearestSpelling(family, GraphFamilies());
  return absl::InvalidArgumentError(absl::StrCat("unknown graph family '", family, "'",
                                                 nearest.empty() ? "" : absl::StrCat(" (did you mean ", nearest, "?)"),
                                                 "; known families: ", absl::StrJoin(GraphFamilies(), ", ")));
}

}  // namespace placement
