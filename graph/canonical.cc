#include "graph/canonical.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <numeric>
#include <vector>

#include <openssl/evp.h>

#include "absl/strings/escaping.h"

namespace placement {
namespace {

// Writes the canonical encoding into a buffer that is flushed to a consumer in blocks, so hashing a 100k-node
// graph streams through a few kilobytes instead of building the whole string.
template <typename Consumer>
class CanonicalWriter {
 public:
  explicit CanonicalWriter(Consumer consume) : consume_(std::move(consume)) { buffer_.reserve(kBlock + 64); }
  ~CanonicalWriter() { Flush(); }

  void U64(uint64_t v) {
    for (int i = 0; i < 8; ++i) buffer_.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
    MaybeFlush();
  }
  void I64(int64_t v) { U64(static_cast<uint64_t>(v)); }
  void F64(double v) {
    if (v == 0) v = 0;  // -0.0 and 0.0 are the same cost
    uint64_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    U64(bits);
  }
  void Str(absl::string_view s) {
    U64(s.size());
    buffer_.append(s.data(), s.size());
    MaybeFlush();
  }
  void Flush() {
    if (!buffer_.empty()) consume_(buffer_);
    buffer_.clear();
  }

 private:
  static constexpr size_t kBlock = 1 << 16;
  void MaybeFlush() {
    if (buffer_.size() >= kBlock) Flush();
  }
  Consumer consume_;
  std::string buffer_;
};

template <typename Writer>
void WriteCanonical(const Graph& g, Writer& w) {
  const int32_t n = g.num_ops();
  std::vector<OpId> by_name(n);
  std::iota(by_name.begin(), by_name.end(), 0);
  std::sort(by_name.begin(), by_name.end(), [&g](OpId a, OpId b) { return g.name(a) < g.name(b); });
  std::vector<int32_t> name_rank(n);
  for (int32_t i = 0; i < n; ++i) name_rank[by_name[i]] = i;

  w.Str("placement.graph.v1");
  w.I64(n);
  std::vector<const MeasuredTime*> measured;
  for (OpId op : by_name) {
    w.Str(g.name(op));
    w.Str(g.op_type(op));
    w.F64(g.flops(op));
    w.F64(g.bytes_accessed(op));
    measured.clear();
    for (const MeasuredTime& m : g.measured(op)) measured.push_back(&m);
    std::sort(measured.begin(), measured.end(), [&g](const MeasuredTime* a, const MeasuredTime* b) {
      return g.device_kinds()[a->kind] < g.device_kinds()[b->kind];
    });
    w.I64(static_cast<int64_t>(measured.size()));
    for (const MeasuredTime* m : measured) {
      w.Str(g.device_kinds()[m->kind]);
      w.F64(m->seconds);
    }
    w.I64(g.param_bytes(op));
    w.I64(g.temp_bytes(op));
    w.I64(g.num_outputs(op));
    for (int32_t k = 0; k < g.num_outputs(op); ++k) {
      const OutputTensor& t = g.tensor(g.first_output(op) + k);
      w.I64(t.bytes);
      w.F64(t.transfer_seconds < 0 ? -1.0 : t.transfer_seconds);
    }
    w.Str(g.colocation_group(op) == kNone ? absl::string_view()
                                          : absl::string_view(g.colocation_groups()[g.colocation_group(op)]));
    w.Str(g.pinned(op) == kNone ? absl::string_view() : absl::string_view(g.pinned_devices()[g.pinned(op)]));
    // The window, the layout and whether extra kernels and data bytes follow share the flag's word, so that graphs
    // without them keep the keys they had.
    const bool extra = g.extra_kernels(op).kernels > 0 || g.extra_kernels_back(op).kernels > 0;
    const bool data = g.data_bytes(op) > 0;
    w.U64((g.is_backward(op) ? 1 : 0) | static_cast<uint64_t>(g.window(op)) << 1 |
          static_cast<uint64_t>(g.channels_last(op) ? 1 : 0) << 40 | static_cast<uint64_t>(extra ? 1 : 0) << 41 |
          static_cast<uint64_t>(data ? 1 : 0) << 42 | static_cast<uint64_t>(g.shared_weights(op) ? 1 : 0) << 43);
    if (extra) {
      for (const ExtraKernels& c : {g.extra_kernels(op), g.extra_kernels_back(op)}) {
        w.I64(c.kernels);
        w.F64(c.bytes);
      }
    }
    if (data) w.I64(g.data_bytes(op));
  }
  // Edges by (producer name, output, consumer name); a producer's out-edges are contiguous, so sort each run.
  w.I64(g.num_edges());
  std::vector<EdgeId> run;
  for (OpId op : by_name) {
    run.clear();
    for (EdgeId e = g.out_begin(op); e < g.out_end(op); ++e) run.push_back(e);
    std::sort(run.begin(), run.end(), [&](EdgeId a, EdgeId b) {
      const Edge& x = g.edge(a);
      const Edge& y = g.edge(b);
      return std::make_pair(x.src_output, name_rank[x.dst]) < std::make_pair(y.src_output, name_rank[y.dst]);
    });
    for (EdgeId e : run) {
      const Edge& edge = g.edge(e);
      w.I64(name_rank[edge.src]);
      w.I64(edge.src_output);
      w.I64(name_rank[edge.dst]);
      w.I64(edge.bytes);
    }
  }
}

}  // namespace

std::string CanonicalSerialization(const Graph& graph) {
  std::string out;
  {
    CanonicalWriter writer([&out](const std::string& block) { out += block; });
    WriteCanonical(graph, writer);
  }
  return out;
}

std::string GraphHash(const Graph& graph) {
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
  EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr);
  {
    CanonicalWriter writer(
        [&ctx](const std::string& block) { EVP_DigestUpdate(ctx.get(), block.data(), block.size()); });
    WriteCanonical(graph, writer);
  }
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_DigestFinal_ex(ctx.get(), digest, &len);
  return absl::BytesToHexString(absl::string_view(reinterpret_cast<const char*>(digest), len));
}

std::string Sha256Hex(absl::string_view bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(bytes.data(), bytes.size(), digest, &len, EVP_sha256(), nullptr);
  return absl::BytesToHexString(absl::string_view(reinterpret_cast<const char*>(digest), len));
}

}  // namespace placement
