#include "policy/parallel/transformer_search.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "graph/units.h"

namespace placement::parallel {
namespace {

using transformer::LayerRecompute;
using transformer::TransformerPlan;
using transformer::TransformerPlanResult;

std::vector<int64_t> Divisors(int64_t n, int64_t up_to) {
  std::vector<int64_t> out;
  for (int64_t d = 1; d <= std::min(n, up_to); ++d) {
    if (n % d == 0) out.push_back(d);
  }
  return out;
}

// Whether a is the better answer: faster, then lighter.
bool Better(const TransformerPlanResult& a, const TransformerPlanResult& b) {
  if (a.iteration_seconds != b.iteration_seconds) return a.iteration_seconds < b.iteration_seconds;
  return a.memory.total() < b.memory.total();
}

struct Tally {
  TransformerSearchResult* out;
  bool found = false;
  double least_memory = -1;
  TransformerPlan lightest;
};

void Consider(const TransformerSpec& spec, const ClusterShape& cluster, const transformer::TrainingRun& run,
              const TransformerPlan& plan, const TransformerSearchOptions& options, Tally& tally) {
  if (!transformer::AgreesOn(plan, options.fixed, options.fixed_keys)) return;
  absl::StatusOr<TransformerPlanResult> r = transformer::EvaluateTransformerPlan(spec, cluster, run, plan);
  if (!r.ok()) return;
  ++tally.out->evaluated;
  if (tally.least_memory < 0 || r->memory.total() < tally.least_memory) {
    tally.least_memory = r->memory.total(), tally.lightest = plan;
  }
  if (!r->fits) return;
  ++tally.out->fitting;
  if (!tally.found || Better(*r, tally.out->best)) tally.out->best = *std::move(r), tally.found = true;
}

// Every plan with these tp, pp and dp: interleaving, micro-batch size, ZeRO stage, recomputation, SP.
void ConsiderShape(const TransformerSpec& spec, const ClusterShape& cluster, const transformer::TrainingRun& run,
                   const TransformerSearchOptions& options, int64_t tp, int64_t pp, int64_t dp, Tally& tally) {
  const int64_t per_replica = run.global_batch / dp;
  for (int64_t vpp : Divisors(spec.layers / pp, pp > 1 ? 8 : 1)) {
    for (int64_t mbs : Divisors(per_replica, 32)) {
      for (int32_t zero = 0; zero <= (dp > 1 ? 3 : 0); ++zero) {
        for (LayerRecompute rc : {LayerRecompute::kNone, LayerRecompute::kSelective, LayerRecompute::kFull}) {
          // Flash attention keeps nothing seq x seq: selective recomputation would save nothing.
          if (rc == LayerRecompute::kSelective && options.fixed.flash_attention) continue;
          for (int sp = 0; sp <= (tp > 1 ? 1 : 0); ++sp) {
            TransformerPlan plan{.tp = tp, .pp = pp, .vpp = vpp, .dp = dp, .micro_batch = mbs, .zero = zero,
                                 .recompute = rc, .sequence_parallel = sp == 1,
                                 .flash_attention = options.fixed.flash_attention,
                                 .overlap_gradient_reduce = options.fixed.overlap_gradient_reduce};
            Consider(spec, cluster, run, plan, options, tally);
          }
        }
      }
    }
  }
}

absl::StatusOr<TransformerPlanResult> PlainDataParallel(const TransformerSpec& spec, const ClusterShape& cluster,
                                                        const transformer::TrainingRun& run,
                                                        const TransformerSearchOptions& options) {
  absl::StatusOr<TransformerPlanResult> best = absl::InvalidArgumentError(
      absl::StrCat("data parallelism over ", cluster.devices(), " GPUs needs a global batch that is a multiple of it"));
  for (int64_t mbs : Divisors(std::max<int64_t>(1, run.global_batch / cluster.devices()), 1 << 20)) {
    TransformerPlan plan{.dp = cluster.devices(), .micro_batch = mbs, .flash_attention = options.fixed.flash_attention,
                         .overlap_gradient_reduce = options.fixed.overlap_gradient_reduce};
    absl::StatusOr<TransformerPlanResult> r = transformer::EvaluateTransformerPlan(spec, cluster, run, plan);
    if (!r.ok()) continue;
    if (!best.ok() || (r->fits && (!best->fits || Better(*r, *best)))) best = std::move(r);
  }
  return best;
}

// The parts of an iteration by name, in IterationParts' order.
std::vector<std::pair<const char*, double>> PartsOf(const transformer::IterationParts& p) {
  return {{"forward compute", p.forward},          {"backward compute", p.backward},
          {"recomputation", p.recompute},          {"tensor-parallel collectives", p.tensor_parallel},
          {"pipeline sends", p.pipeline_send},     {"pipeline fill and drain", p.pipeline_bubble},
          {"exposed gradient reduction", p.data_parallel}, {"optimizer step", p.optimizer}};
}

// What the chosen plan gains over plain data parallelism, named by the parts of the iteration that differ most.
std::string Reason(const TransformerSearchResult& s) {
  const TransformerPlanResult& b = s.best;
  if (!s.data_parallel.ok()) {
    return absl::StrCat("plain data parallelism cannot run here (", s.data_parallel.status().message(), ")");
  }
  const TransformerPlanResult& d = *s.data_parallel;
  if (!d.fits) {
    return absl::StrFormat("plain data parallelism needs %s per GPU of %s; this plan holds %s",
                           FormatBytes(d.memory.total()), FormatBytes(d.memory_capacity), FormatBytes(b.memory.total()));
  }
  if (d.iteration_seconds <= b.iteration_seconds) {
    const bool same = b.plan.tp == 1 && b.plan.pp == 1 && b.plan.zero == 0;
    return same ? "plain data parallelism is the fastest plan that fits"
                : absl::StrCat("plain data parallelism would be faster (", FormatSeconds(d.iteration_seconds),
                               " an iteration) but is outside the plans asked for");
  }
  std::vector<std::pair<const char*, double>> gains = PartsOf(d.parts);
  const std::vector<std::pair<const char*, double>> ours = PartsOf(b.parts);
  for (size_t i = 0; i < gains.size(); ++i) gains[i].second -= ours[i].second;
  std::sort(gains.begin(), gains.end(), [](const auto& x, const auto& y) { return x.second > y.second; });
  std::string reason = absl::StrFormat("%.2fx faster than plain data parallelism (%s an iteration, mbs %d): it spends",
                                       d.iteration_seconds / b.iteration_seconds, FormatSeconds(d.iteration_seconds),
                                       d.plan.micro_batch);
  for (size_t i = 0; i < 2 && gains[i].second > 0; ++i) {
    absl::StrAppend(&reason, i == 0 ? " " : " and ", FormatSeconds(gains[i].second), " more on ", gains[i].first);
  }
  return reason;
}

}  // namespace

absl::StatusOr<TransformerSearchResult> SearchTransformerPlans(const TransformerSpec& spec, const ClusterShape& cluster,
                                                               const transformer::TrainingRun& run,
                                                               const TransformerSearchOptions& options,
                                                               const Budget& budget) {
  TransformerSearchResult result;
  Tally tally{.out = &result};
  const int64_t gpus = cluster.devices();
  for (int64_t tp : Divisors(cluster.per_host, cluster.per_host)) {
    if (options.tensor_only && tp != gpus) continue;
    for (int64_t pp : Divisors(spec.layers, spec.layers)) {
      if (gpus % (tp * pp) != 0 || (options.tensor_only && pp != 1)) continue;
      const int64_t dp = gpus / (tp * pp);
      if (run.global_batch % dp != 0) continue;
      if (budget.Expired()) {
        result.complete = false;
        break;
      }
      ConsiderShape(spec, cluster, run, options, tp, pp, dp, tally);
    }
  }
  if (!tally.found) {
    if (!result.complete) return budget.ExpiredStatus();
    if (result.evaluated == 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "no plan tiles ", gpus, " GPUs for this model: tensor parallelism inside a host (",
          cluster.per_host, " GPUs) must divide the ", spec.heads, " heads, pipeline stages the ", spec.layers,
          " layers, and data parallelism the global batch ", run.global_batch,
          options.tensor_only ? "; --parallelism tensor needs every GPU in one host" : ""));
    }
    return absl::FailedPreconditionError(absl::StrCat(
        "no plan fits ", FormatBytes(cluster.device.memory_bytes), " per GPU: the lightest (",
        transformer::TransformerPlanString(tally.lightest), ") needs ",
        FormatBytes(static_cast<int64_t>(tally.least_memory)),
        "; use more GPUs (--devices), a shorter --seq, or a smaller global --batch"));
  }
  result.data_parallel = PlainDataParallel(spec, cluster, run, options);
  result.reason = Reason(result);
  return result;
}

}  // namespace placement::parallel
