// A family of ideals (down-closed unit sets) of a PipelineModel's unit DAG, with what a segment J \ I between
// two of them costs.
//
// Every ideal is a fixed-width bitset in one flat array (no per-ideal allocation), stored with the running
// sums a segment needs (accelerator work, CPU time, bytes, units a device type cannot run) and the list of
// hyperedges that cross it. The family is sorted by accelerator work, so that the ideals a pipeline stage can
// start or end at under a bound on the load are contiguous index ranges.
//
// The transfer cost of a segment S = J \ I follows from the two crossing lists: a hyperedge crosses S iff it
// meets S and is not inside S, and since I ⊆ J, the hyperedges meeting S either cross I (and meet J \ I) or
// cross J without meeting I. So comm(S) = crossW(J) + Σ_{e crossing I} w_e · ([e \ I ⊆ J] − [e \ I disjoint
// from J]): only the (few) hyperedges on I's frontier are examined.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "policy/exact/pipeline_model.h"
#include "policy/placer.h"

namespace placement {

class IdealSet {
 public:
  // Every ideal of the unit DAG, enumerated once each (an ideal's units are added in increasing topological
  // number, so the ideal is reached only from the one with its largest unit removed). RESOURCE_EXHAUSTED
  // past max_ideals or past max_bytes of storage (the peak while sorting stays below twice that); the
  // budget's status when it expires.
  static absl::StatusOr<IdealSet> Enumerate(const PipelineModel& model, int64_t max_ideals, int64_t max_bytes,
                                            const Budget& budget);
  // The prefixes of each given topological order of the units (the empty and the full set once each order).
  static IdealSet Prefixes(const PipelineModel& model, absl::Span<const std::vector<int32_t>> orders);

  int64_t size() const { return static_cast<int64_t>(work_.size()); }
  int32_t words() const { return words_; }
  // Bytes held per ideal besides its crossing hyperedges, for sizing a family before building it.
  static int64_t BytesPerIdeal(const PipelineModel& model);

  double work(int64_t i) const { return work_[i]; }
  double cpu(int64_t i) const { return cpu_[i]; }
  int64_t bytes(int64_t i) const { return bytes_[i]; }
  int32_t acc_bad(int64_t i) const { return acc_bad_[i]; }
  int32_t cpu_bad(int64_t i) const { return cpu_bad_[i]; }
  bool Has(int64_t i, int32_t unit) const { return (bits_[i * words_ + (unit >> 6)] >> (unit & 63)) & 1; }
  const uint64_t* bits(int64_t i) const { return &bits_[i * words_]; }

  // Ideal i is a subset of ideal j.
  bool Subset(int64_t i, int64_t j) const {
    const uint64_t* a = bits(i);
    const uint64_t* b = bits(j);
    for (int32_t w = 0; w < words_; ++w) {
      if (a[w] & ~b[w]) return false;
    }
    return true;
  }
  // Transfer time paid by an accelerator holding J \ I (I ⊆ J).
  double Comm(int64_t i, int64_t j) const;
  // Total weight of the hyperedges crossing ideal i. Every hyperedge crossing I either meets J \ I or
  // crosses J, and every one crossing J either meets J \ I or crosses I, so Comm(i, j) is at least
  // |cross_weight(j) - cross_weight(i)|: a bound the DP checks before the exact figure.
  double cross_weight(int64_t i) const { return cross_weight_[i]; }

  int64_t full() const { return full_; }    // the ideal of all units
  int64_t empty() const { return empty_; }  // the empty ideal

 private:
  class Builder;
  friend class Builder;

  const PipelineModel* model_ = nullptr;
  int32_t words_ = 1;
  std::vector<uint64_t> bits_;
  std::vector<double> work_, cpu_, cross_weight_;
  std::vector<int64_t> bytes_;
  std::vector<int32_t> acc_bad_, cpu_bad_;
  std::vector<int64_t> cross_begin_;  // size() + 1
  std::vector<int32_t> cross_;        // hyperedges crossing each ideal
  std::vector<uint64_t> hedge_bits_;  // member bitset of every hyperedge (empty when too large to keep)
  int64_t full_ = 0, empty_ = 0;
};

}  // namespace placement
