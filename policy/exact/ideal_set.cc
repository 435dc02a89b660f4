#include "policy/exact/ideal_set.h"

#include <algorithm>
#include <numeric>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace placement {
namespace {

// Hyperedge bitsets are kept up to this many words (128 MB); beyond, Comm walks member lists.
constexpr size_t kMaxHedgeWords = size_t{1} << 24;

}  // namespace

// Walks ideals by adding and removing units (last in, first out) and appends snapshots to an IdealSet.
class IdealSet::Builder {
 public:
  explicit Builder(const PipelineModel& model) : model_(model) {
    out_.model_ = &model;
    out_.words_ = std::max(1, (model.num_units + 63) / 64);
    out_.cross_begin_.push_back(0);
    bits_.assign(out_.words_, 0);
    const size_t hedges = model.hedge_weight.size();
    count_.assign(hedges, 0);
    pos_.assign(hedges, -1);
    work_.push_back(0);
    cpu_.push_back(0);
    bytes_.push_back(0);
    acc_bad_.push_back(0);
    cpu_bad_.push_back(0);
  }

  void Add(int32_t u) {
    bits_[u >> 6] |= uint64_t{1} << (u & 63);
    work_.push_back(work_.back() + model_.acc_time[u]);
    cpu_.push_back(cpu_.back() + model_.cpu_time[u]);
    bytes_.push_back(bytes_.back() + model_.bytes[u]);
    acc_bad_.push_back(acc_bad_.back() + (model_.acc_ok[u] ? 0 : 1));
    cpu_bad_.push_back(cpu_bad_.back() + (model_.cpu_ok[u] ? 0 : 1));
    for (int32_t k = model_.unit_hedge_begin[u]; k < model_.unit_hedge_begin[u + 1]; ++k) {
      const int32_t h = model_.unit_hedges[k];
      const int32_t size = model_.hedge_begin[h + 1] - model_.hedge_begin[h];
      ++count_[h];
      if (count_[h] == 1) Insert(h);
      if (count_[h] == size) Erase(h);
    }
  }

  void Remove(int32_t u) {
    bits_[u >> 6] &= ~(uint64_t{1} << (u & 63));
    work_.pop_back();
    cpu_.pop_back();
    bytes_.pop_back();
    acc_bad_.pop_back();
    cpu_bad_.pop_back();
    for (int32_t k = model_.unit_hedge_begin[u]; k < model_.unit_hedge_begin[u + 1]; ++k) {
      const int32_t h = model_.unit_hedges[k];
      const int32_t size = model_.hedge_begin[h + 1] - model_.hedge_begin[h];
      if (count_[h] == size) Insert(h);
      --count_[h];
      if (count_[h] == 0) Erase(h);
    }
  }

  void Emit() {
    out_.bits_.insert(out_.bits_.end(), bits_.begin(), bits_.end());
    out_.work_.push_back(work_.back());
    out_.cpu_.push_back(cpu_.back());
    out_.bytes_.push_back(bytes_.back());
    out_.acc_bad_.push_back(acc_bad_.back());
    out_.cpu_bad_.push_back(cpu_bad_.back());
    double w = 0;
    for (int32_t h : crossing_) w += model_.hedge_weight[h];
    out_.cross_weight_.push_back(w);
    out_.cross_.insert(out_.cross_.end(), crossing_.begin(), crossing_.end());
    out_.cross_begin_.push_back(static_cast<int64_t>(out_.cross_.size()));
  }

  int64_t emitted() const { return out_.size(); }

  // Storage reserved so far (vector capacities), which is what the process holds.
  int64_t bytes() const {
    const IdealSet& o = out_;
    return static_cast<int64_t>(o.bits_.capacity() * 8 +
                                (o.work_.capacity() + o.cpu_.capacity() + o.cross_weight_.capacity() +
                                 o.bytes_.capacity() + o.cross_begin_.capacity()) *
                                    8 +
                                (o.acc_bad_.capacity() + o.cpu_bad_.capacity() + o.cross_.capacity()) * 4);
  }

  // Sorts by accelerator work and hands the set over.
  IdealSet Finish() && {
    const int64_t n = out_.size();
    std::vector<int64_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return out_.work_[a] < out_.work_[b]; });
    // Each array is permuted into a fresh one and the old one released at once, so the peak is the set plus
    // its largest array.
    IdealSet s;
    s.model_ = out_.model_;
    s.words_ = out_.words_;
    const int32_t words = s.words_;
    s.bits_.resize(out_.bits_.size());
    for (int64_t k = 0; k < n; ++k) std::copy_n(&out_.bits_[order[k] * words], words, &s.bits_[k * words]);
    std::vector<uint64_t>().swap(out_.bits_);
    Permute(order, out_.work_, s.work_);
    Permute(order, out_.cpu_, s.cpu_);
    Permute(order, out_.cross_weight_, s.cross_weight_);
    Permute(order, out_.bytes_, s.bytes_);
    Permute(order, out_.acc_bad_, s.acc_bad_);
    Permute(order, out_.cpu_bad_, s.cpu_bad_);
    s.cross_begin_.reserve(n + 1);
    s.cross_begin_.push_back(0);
    s.cross_.reserve(out_.cross_.size());
    for (int64_t k = 0; k < n; ++k) {
      const int64_t i = order[k];
      s.cross_.insert(s.cross_.end(), out_.cross_.begin() + out_.cross_begin_[i],
                      out_.cross_.begin() + out_.cross_begin_[i + 1]);
      s.cross_begin_.push_back(static_cast<int64_t>(s.cross_.size()));
    }
    std::vector<int32_t>().swap(out_.cross_);
    const size_t hedges = model_.hedge_weight.size();
    if (hedges * s.words_ <= kMaxHedgeWords) {
      s.hedge_bits_.assign(hedges * s.words_, 0);
      for (size_t h = 0; h < hedges; ++h) {
        for (int32_t m = model_.hedge_begin[h]; m < model_.hedge_begin[h + 1]; ++m) {
          const int32_t u = model_.hedge_members[m];
          s.hedge_bits_[h * s.words_ + (u >> 6)] |= uint64_t{1} << (u & 63);
        }
      }
    }
    const int32_t units = model_.num_units;
    for (int64_t k = 0; k < n; ++k) {
      int32_t count = 0;
      for (int32_t w = 0; w < words; ++w) count += __builtin_popcountll(s.bits_[k * words + w]);
      if (count == 0) s.empty_ = k;
      if (count == units) s.full_ = k;
    }
    return s;
  }

 private:
  void Insert(int32_t h) {
    pos_[h] = static_cast<int32_t>(crossing_.size());
    crossing_.push_back(h);
  }
  void Erase(int32_t h) {
    const int32_t p = pos_[h];
    const int32_t last = crossing_.back();
    crossing_[p] = last;
    pos_[last] = p;
    crossing_.pop_back();
    pos_[h] = -1;
  }

  template <typename T>
  static void Permute(const std::vector<int64_t>& order, std::vector<T>& from, std::vector<T>& to) {
    to.resize(order.size());
    for (size_t k = 0; k < order.size(); ++k) to[k] = from[order[k]];
    std::vector<T>().swap(from);
  }

  const PipelineModel& model_;
  IdealSet out_;
  std::vector<uint64_t> bits_;
  // Running sums per depth, so that removing a unit restores the exact value it had.
  std::vector<double> work_, cpu_;
  std::vector<int64_t> bytes_;
  std::vector<int32_t> acc_bad_, cpu_bad_;
  std::vector<int32_t> count_, pos_, crossing_;
};

int64_t IdealSet::BytesPerIdeal(const PipelineModel& model) {
  const int64_t words = std::max(1, (model.num_units + 63) / 64);
  return words * 8 + 48;  // bitset, five sums, two counts, the crossing list's offset
}

absl::StatusOr<IdealSet> IdealSet::Enumerate(const PipelineModel& model, int64_t max_ideals, int64_t max_bytes,
                                             const Budget& budget) {
  Builder b(model);
  const int32_t n = model.num_units;
  const int32_t words = std::max(1, (n + 63) / 64);
  std::vector<int32_t> missing(n);
  std::vector<uint64_t> ready(words, 0);
  for (int32_t v = 0; v < n; ++v) {
    missing[v] = model.pred_begin[v + 1] - model.pred_begin[v];
    if (missing[v] == 0) ready[v >> 6] |= uint64_t{1} << (v & 63);
  }
  // The first ready unit at or after `from`, or n.
  auto next_ready = [&](int32_t from) {
    for (int32_t w = from >> 6; w < words; ++w) {
      uint64_t bitsw = ready[w];
      if (w == (from >> 6)) bitsw &= ~uint64_t{0} << (from & 63);
      if (bitsw) return w * 64 + __builtin_ctzll(bitsw);
    }
    return n;
  };
  struct Frame {
    int32_t added;
    int32_t cursor;
  };
  std::vector<Frame> stack;
  b.Emit();
  stack.push_back({-1, 0});
  while (!stack.empty()) {
    Frame& f = stack.back();
    const int32_t v = f.cursor < n ? next_ready(f.cursor) : n;
    if (v >= n) {
      const int32_t u = f.added;
      stack.pop_back();
      if (u < 0) continue;
      for (int32_t k = model.succ_begin[u]; k < model.succ_begin[u + 1]; ++k) {
        const int32_t s = model.succs[k];
        if (missing[s]++ == 0) ready[s >> 6] &= ~(uint64_t{1} << (s & 63));
      }
      ready[u >> 6] |= uint64_t{1} << (u & 63);
      b.Remove(u);
      continue;
    }
    // Units join in increasing number, so only ready units above the last one added extend this ideal.
    f.cursor = v + 1;
    ready[v >> 6] &= ~(uint64_t{1} << (v & 63));
    for (int32_t k = model.succ_begin[v]; k < model.succ_begin[v + 1]; ++k) {
      const int32_t s = model.succs[k];
      if (--missing[s] == 0) ready[s >> 6] |= uint64_t{1} << (s & 63);
    }
    b.Add(v);
    b.Emit();
    if (b.emitted() > max_ideals) {
      return absl::ResourceExhaustedError(
          absl::StrCat("the DAG of ", n, " units has more than ", max_ideals, " ideals (down-closed sets)"));
    }
    if ((b.emitted() & 4095) == 0) {
      if (budget.Expired()) return budget.ExpiredStatus();
      if (b.bytes() > max_bytes) {
        return absl::ResourceExhaustedError(absl::StrCat("the DAG of ", n,
                                                         " units has more ideals (down-closed sets) than ",
                                                         max_bytes >> 20, " MiB hold (", b.emitted(), " so far)"));
      }
    }
    stack.push_back({v, v + 1});
  }
  return std::move(b).Finish();
}

IdealSet IdealSet::Prefixes(const PipelineModel& model, absl::Span<const std::vector<int32_t>> orders) {
  Builder b(model);
  b.Emit();
  for (size_t o = 0; o < orders.size(); ++o) {
    const std::vector<int32_t>& order = orders[o];
    for (size_t i = 0; i < order.size(); ++i) {
      b.Add(order[i]);
      if (o == 0 || i + 1 < order.size()) b.Emit();
    }
    for (size_t i = order.size(); i-- > 0;) b.Remove(order[i]);
  }
  return std::move(b).Finish();
}

double IdealSet::Comm(int64_t i, int64_t j) const {
  double c = cross_weight_[j];
  if (!hedge_bits_.empty()) {
    const uint64_t* in_i = bits(i);
    const uint64_t* in_j = bits(j);
    for (int64_t k = cross_begin_[i]; k < cross_begin_[i + 1]; ++k) {
      const int32_t h = cross_[k];
      const uint64_t* members = &hedge_bits_[static_cast<size_t>(h) * words_];
      bool none = true, all = true;  // of the members outside I, none / all are in J
      for (int32_t w = 0; w < words_; ++w) {
        const uint64_t outside = members[w] & ~in_i[w];
        const uint64_t reached = outside & in_j[w];
        none &= reached == 0;
        all &= reached == outside;
      }
      if (none) {
        c -= model_->hedge_weight[h];
      } else if (all) {
        c += model_->hedge_weight[h];
      }
    }
    return c;
  }
  for (int64_t k = cross_begin_[i]; k < cross_begin_[i + 1]; ++k) {
    const int32_t h = cross_[k];
    int32_t outside = 0, reached = 0;
    for (int32_t m = model_->hedge_begin[h]; m < model_->hedge_begin[h + 1]; ++m) {
      const int32_t unit = model_->hedge_members[m];
      if (Has(i, unit)) continue;
      ++outside;
      reached += Has(j, unit) ? 1 : 0;
    }
    if (reached == 0) {
      c -= model_->hedge_weight[h];
    } else if (reached == outside) {
      c += model_->hedge_weight[h];
    }
  }
  return c;
}

}  // namespace placement
