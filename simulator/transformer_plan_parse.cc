// The plan's text form: "tp=8,pp=8,vpp=3,dp=1,mbs=1,zero=1,recompute=selective,sp=1".
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "simulator/transformer_plan.h"

namespace placement::transformer {
namespace {

constexpr char kKnownKeys[] = "tp, pp, vpp, dp, mbs, zero, recompute, sp, flash, overlap";

absl::StatusOr<int64_t> Count(absl::string_view key, absl::string_view value, int64_t low, int64_t high) {
  int64_t n = 0;
  if (!absl::SimpleAtoi(value, &n) || n < low || n > high) {
    return absl::InvalidArgumentError(
        absl::StrCat(key, "=", value, " is not a whole number from ", low, " to ", high));
  }
  return n;
}

absl::StatusOr<bool> Switch(absl::string_view key, absl::string_view value) {
  if (value == "1" || value == "true" || value == "on") return true;
  if (value == "0" || value == "false" || value == "off") return false;
  return absl::InvalidArgumentError(absl::StrCat(key, "=", value, " must be 0 or 1"));
}

absl::StatusOr<LayerRecompute> RecomputeOf(absl::string_view value) {
  if (value == "none") return LayerRecompute::kNone;
  if (value == "selective") return LayerRecompute::kSelective;
  if (value == "full") return LayerRecompute::kFull;
  return absl::InvalidArgumentError(
      absl::StrCat("recompute=", value, " is not one of none, selective, full"));
}

absl::Status SetKey(absl::string_view key, absl::string_view value, TransformerPlan& plan) {
  constexpr int64_t kMany = 1'000'000;
  absl::StatusOr<int64_t> n = int64_t{0};
  absl::StatusOr<bool> on = false;
  if (key == "tp") n = Count(key, value, 1, kMany), plan.tp = n.value_or(0);
  else if (key == "pp") n = Count(key, value, 1, kMany), plan.pp = n.value_or(0);
  else if (key == "vpp") n = Count(key, value, 1, 1024), plan.vpp = n.value_or(0);
  else if (key == "dp") n = Count(key, value, 1, kMany), plan.dp = n.value_or(0);
  else if (key == "mbs") n = Count(key, value, 1, kMany), plan.micro_batch = n.value_or(0);
  else if (key == "zero") n = Count(key, value, 0, 3), plan.zero = static_cast<int32_t>(n.value_or(0));
  else if (key == "sp") on = Switch(key, value), plan.sequence_parallel = on.value_or(false);
  else if (key == "flash") on = Switch(key, value), plan.flash_attention = on.value_or(false);
  else if (key == "overlap") on = Switch(key, value), plan.overlap_gradient_reduce = on.value_or(false);
  else if (key == "recompute") {
    absl::StatusOr<LayerRecompute> r = RecomputeOf(value);
    if (!r.ok()) return r.status();
    plan.recompute = *r;
  } else {
    return absl::InvalidArgumentError(absl::StrCat("unknown key '", key, "' (known keys: ", kKnownKeys, ")"));
  }
  if (!n.ok()) return n.status();
  return on.status();
}

}  // namespace

absl::string_view LayerRecomputeName(LayerRecompute r) {
  switch (r) {
    case LayerRecompute::kSelective:
      return "selective";
    case LayerRecompute::kFull:
      return "full";
    default:
      return "none";
  }
}

absl::StatusOr<TransformerPlan> ParseTransformerPlan(absl::string_view text, std::vector<std::string>* keys) {
  TransformerPlan plan;
  std::vector<std::string> seen;
  for (absl::string_view item : absl::StrSplit(text, ',', absl::SkipWhitespace())) {
    item = absl::StripAsciiWhitespace(item);
    const size_t eq = item.find('=');
    if (eq == absl::string_view::npos) {
      return absl::InvalidArgumentError(absl::StrCat("'", item, "' is not KEY=VALUE (known keys: ", kKnownKeys, ")"));
    }
    const absl::string_view key = absl::StripAsciiWhitespace(item.substr(0, eq));
    for (const std::string& k : seen) {
      if (k == key) return absl::InvalidArgumentError(absl::StrCat("'", key, "' is given twice"));
    }
    seen.emplace_back(key);
    if (absl::Status s = SetKey(key, absl::StripAsciiWhitespace(item.substr(eq + 1)), plan); !s.ok()) return s;
  }
  if (seen.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("empty; expected e.g. tp=8,pp=2,dp=4,mbs=1 (known keys: ",
                                                   kKnownKeys, ")"));
  }
  if (keys != nullptr) *keys = seen;
  return plan;
}

bool AgreesOn(const TransformerPlan& plan, const TransformerPlan& fixed, const std::vector<std::string>& keys) {
  for (const std::string& key : keys) {
    const bool same = key == "tp"          ? plan.tp == fixed.tp
                      : key == "pp"        ? plan.pp == fixed.pp
                      : key == "vpp"       ? plan.vpp == fixed.vpp
                      : key == "dp"        ? plan.dp == fixed.dp
                      : key == "mbs"       ? plan.micro_batch == fixed.micro_batch
                      : key == "zero"      ? plan.zero == fixed.zero
                      : key == "recompute" ? plan.recompute == fixed.recompute
                      : key == "sp"        ? plan.sequence_parallel == fixed.sequence_parallel
                      : key == "flash"     ? plan.flash_attention == fixed.flash_attention
                      : key == "overlap"   ? plan.overlap_gradient_reduce == fixed.overlap_gradient_reduce
                                           : true;
    if (!same) return false;
  }
  return true;
}

std::string TransformerPlanString(const TransformerPlan& p) {
  return absl::StrCat("tp=", p.tp, ",pp=", p.pp, ",vpp=", p.vpp, ",dp=", p.dp, ",mbs=", p.micro_batch,
                      ",zero=", p.zero, ",recompute=", LayerRecomputeName(p.recompute),
                      ",sp=", p.sequence_parallel ? 1 : 0, ",flash=", p.flash_attention ? 1 : 0,
                      ",overlap=", p.overlap_gradient_reduce ? 1 : 0);
}

}  // namespace placement::transformer
