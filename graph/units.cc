#include "graph/units.h"

#include <charconv>
#include <cmath>
#include <optional>
#include <system_error>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"

namespace placement {
namespace {

// A unit as a power of ten times a power of two: "GiB" is 2^30, "Gb/s" 10^9 x 2^-3, "us" 10^-6. Applying the
// power of ten to the decimal text rather than multiplying doubles makes "5us" exactly the double 5e-6 and
// "3.35TB/s" exactly 3.35e12, so figures typed with units equal the same figures typed as numbers.
struct Scale {
  int pow10 = 0;
  int pow2 = 0;
  bool bits = false;
};

struct NumberAndUnit {
  absl::string_view number;  // the decimal text, e.g. "2.5" or "1e-6"
  absl::string_view unit;    // trimmed; empty for a bare number
};

absl::Status Bad(absl::string_view what, absl::string_view text, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat("cannot read ", what, " '", text, "': ", why));
}

// Splits "2.5 ms" into "2.5" and "ms". std::from_chars does not skip whitespace, accept '+' or read hex, so
// "0x10" and " +5" fail here instead of meaning something surprising.
absl::StatusOr<NumberAndUnit> SplitNumber(absl::string_view what, absl::string_view text) {
  const absl::string_view trimmed = absl::StripAsciiWhitespace(text);
  if (trimmed.empty()) return Bad(what, text, "it is empty");
  const char* begin = trimmed.data();
  const char* end = begin + trimmed.size();
  double value = 0;
  auto [ptr, ec] = std::from_chars(begin, end, value);
  if (ec == std::errc::result_out_of_range) return Bad(what, text, "the number is out of range");
  if (ec != std::errc()) return Bad(what, text, "it does not start with a number");
  if (!std::isfinite(value)) return Bad(what, text, "it is not a finite number");
  if (value < 0) return Bad(what, text, "it is negative");
  return NumberAndUnit{absl::string_view(begin, static_cast<size_t>(ptr - begin)),
                       absl::StripAsciiWhitespace(absl::string_view(ptr, static_cast<size_t>(end - ptr)))};
}

// number x 10^pow10 x 2^pow2, with the power of ten folded into the decimal exponent before conversion.
absl::StatusOr<double> Scaled(absl::string_view what, absl::string_view text, absl::string_view number, Scale scale) {
  absl::string_view mantissa = number;
  int exponent = 0;
  if (const size_t e = number.find_first_of("eE"); e != absl::string_view::npos) {
    mantissa = number.substr(0, e);
    absl::string_view exp_text = number.substr(e + 1);
    absl::ConsumePrefix(&exp_text, "+");
    auto [ptr, ec] = std::from_chars(exp_text.data(), exp_text.data() + exp_text.size(), exponent);
    if (ec != std::errc() || ptr != exp_text.data() + exp_text.size())
      return Bad(what, text, "the number is out of range");
  }
  const std::string decimal = absl::StrCat(mantissa, "e", int64_t{exponent} + scale.pow10);
  double v = 0;
  auto [ptr, ec] = std::from_chars(decimal.data(), decimal.data() + decimal.size(), v);
  if (ec == std::errc::result_out_of_range) return Bad(what, text, "the value is out of range");
  if (ec != std::errc() || ptr != decimal.data() + decimal.size())
    return Bad(what, text, "it does not start with a number");
  v = std::ldexp(std::fabs(v), scale.pow2);  // fabs: "-0" is 0, not a negative zero that prints as "-0"
  if (!std::isfinite(v)) return Bad(what, text, "the value is out of range");
  return v;
}

// A byte or bit count unit with an optional prefix: "B", "GB", "GiB", "Gb", "kbit", "bytes". Binary prefixes
// are tried first so that "Mi" is not read as "M" + "iB".
std::optional<Scale> DataUnit(absl::string_view unit) {
  Scale scale;
  static constexpr struct {
    absl::string_view prefix;
    int pow10, pow2;
  } kPrefixes[] = {{"Ki", 0, 10}, {"ki", 0, 10}, {"Mi", 0, 20}, {"Gi", 0, 30}, {"Ti", 0, 40}, {"Pi", 0, 50},
                   {"k", 3, 0},   {"K", 3, 0},   {"M", 6, 0},   {"G", 9, 0},   {"T", 12, 0},  {"P", 15, 0}};
  for (const auto& p : kPrefixes) {
    if (unit.size() > p.prefix.size() && absl::StartsWith(unit, p.prefix)) {
      scale.pow10 = p.pow10;
      scale.pow2 = p.pow2;
      unit.remove_prefix(p.prefix.size());
      break;
    }
  }
  if (unit == "B" || unit == "byte" || unit == "bytes") return scale;
  if (unit == "b" || unit == "bit" || unit == "bits") {
    scale.pow2 -= 3;
    scale.bits = true;
    return scale;
  }
  return std::nullopt;
}

// The power of ten of one unit in seconds.
std::optional<int> TimeUnit(absl::string_view unit) {
  if (unit == "s" || unit == "sec" || unit == "secs" || unit == "second" || unit == "seconds") return 0;
  if (unit == "ms") return -3;
  // ASCII "us", MICRO SIGN (U+00B5) and GREEK SMALL LETTER MU (U+03BC): people paste all three.
  if (unit == "us" || unit == "\xC2\xB5s" || unit == "\xCE\xBCs") return -6;
  if (unit == "ns") return -9;
  return std::nullopt;
}

// Three significant figures without trailing zeros: 74.506 -> "74.5", 450.0 -> "450", 2.0 -> "2".
std::string ThreeFigures(double v) {
  // One literal per call: clang checks absl::StrFormat's format at compile time and refuses a computed one.
  std::string s = v >= 100  ? absl::StrFormat("%.0f", v)
                  : v >= 10 ? absl::StrFormat("%.1f", v)
                            : absl::StrFormat("%.2f", v);
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  return s;
}

// Picks the largest prefix that keeps the figure at least 1, moving up once more when rounding to three
// figures would print "1000".
std::string FormatUp(double v, double base, std::initializer_list<absl::string_view> units) {
  if (!std::isfinite(v)) return absl::StrCat(v, " ", *units.begin());
  const std::string sign = v < 0 ? "-" : "";
  v = std::fabs(v);
  size_t i = 0;
  while (v >= base && i + 1 < units.size()) {
    v /= base;
    ++i;
  }
  if (v >= base - 0.5 && i + 1 < units.size()) {
    v /= base;
    ++i;
  }
  return absl::StrCat(sign, ThreeFigures(v), " ", units.begin()[i]);
}

}  // namespace

absl::StatusOr<double> ParseBytes(absl::string_view text) {
  constexpr absl::string_view kWhat = "a byte size";
  absl::StatusOr<NumberAndUnit> n = SplitNumber(kWhat, text);
  if (!n.ok()) return n.status();
  std::optional<Scale> scale = n->unit.empty() ? Scale{} : DataUnit(n->unit);
  if (!scale) {
    return Bad(kWhat, text,
               absl::StrCat("unknown unit '", n->unit, "' (expected B, kB, MB, GB, TB, KiB, MiB, GiB or TiB)"));
  }
  if (scale->bits) return Bad(kWhat, text, "'b' means bits; sizes are in bytes, written 'B'");
  return Scaled(kWhat, text, n->number, *scale);
}

absl::StatusOr<double> ParseBandwidth(absl::string_view text) {
  constexpr absl::string_view kWhat = "a bandwidth";
  absl::StatusOr<NumberAndUnit> n = SplitNumber(kWhat, text);
  if (!n.ok()) return n.status();
  if (n->unit.empty()) return Scaled(kWhat, text, n->number, Scale{});
  absl::string_view data = n->unit, time = "s";
  if (const size_t slash = n->unit.find('/'); slash != absl::string_view::npos) {
    data = absl::StripAsciiWhitespace(n->unit.substr(0, slash));
    time = absl::StripAsciiWhitespace(n->unit.substr(slash + 1));
  } else if (!absl::ConsumeSuffix(&data, "ps")) {  // "Gbps", "MBps"
    data = "";
  }
  std::optional<Scale> scale = DataUnit(data);
  std::optional<int> per = TimeUnit(time);
  if (!scale || !per) {
    return Bad(kWhat, text,
               absl::StrCat("unknown unit '", n->unit, "' (expected e.g. GB/s, GiB/s, Gb/s (bits), Gbps, B/us)"));
  }
  scale->pow10 -= *per;
  return Scaled(kWhat, text, n->number, *scale);
}

absl::StatusOr<double> ParseSeconds(absl::string_view text) {
  constexpr absl::string_view kWhat = "a time";
  absl::StatusOr<NumberAndUnit> n = SplitNumber(kWhat, text);
  if (!n.ok()) return n.status();
  std::optional<int> pow10 = n->unit.empty() ? 0 : TimeUnit(n->unit);
  if (!pow10) return Bad(kWhat, text, absl::StrCat("unknown unit '", n->unit, "' (expected s, ms, us or ns)"));
  return Scaled(kWhat, text, n->number, Scale{.pow10 = *pow10});
}

absl::StatusOr<double> ParseFlops(absl::string_view text) {
  constexpr absl::string_view kWhat = "a FLOP/s figure";
  absl::StatusOr<NumberAndUnit> n = SplitNumber(kWhat, text);
  if (!n.ok()) return n.status();
  const std::string unit = absl::AsciiStrToLower(n->unit);
  absl::string_view prefix = unit;
  std::optional<int> pow10;
  if (unit.empty()) {
    pow10 = 0;
  } else if (absl::ConsumeSuffix(&prefix, "flop/s") || absl::ConsumeSuffix(&prefix, "flops")) {
    static constexpr absl::string_view kPrefixes = "kmgtpe";  // 10^3 .. 10^18
    if (prefix.empty()) {
      pow10 = 0;
    } else if (prefix.size() == 1 && kPrefixes.find(prefix[0]) != absl::string_view::npos) {
      pow10 = 3 * (1 + static_cast<int>(kPrefixes.find(prefix[0])));
    }
  }
  if (!pow10) {
    return Bad(kWhat, text, absl::StrCat("unknown unit '", n->unit, "' (expected e.g. TFLOPS, TFLOP/s, GFLOPS)"));
  }
  return Scaled(kWhat, text, n->number, Scale{.pow10 = *pow10});
}

std::string FormatBytes(double bytes) { return FormatUp(bytes, 1024, {"B", "KiB", "MiB", "GiB", "TiB", "PiB"}); }

std::string FormatBandwidth(double bytes_per_second) {
  return FormatUp(bytes_per_second, 1000, {"B/s", "kB/s", "MB/s", "GB/s", "TB/s", "PB/s"});
}

std::string FormatFlops(double flops) {
  return FormatUp(flops, 1000, {"FLOP/s", "kFLOP/s", "MFLOP/s", "GFLOP/s", "TFLOP/s", "PFLOP/s", "EFLOP/s"});
}

std::string FormatSeconds(double seconds) {
  static constexpr absl::string_view kUnits[] = {"s", "ms", "us", "ns"};
  if (!std::isfinite(seconds)) return absl::StrCat(seconds, " s");
  const std::string sign = seconds < 0 ? "-" : "";
  double v = std::fabs(seconds);
  size_t i = 0;
  if (v > 0) {
    while (v < 1 && i + 1 < std::size(kUnits)) {
      v *= 1000;
      ++i;
    }
    if (v >= 999.5 && i > 0) {
      v /= 1000;
      --i;
    }
  }
  return absl::StrCat(sign, ThreeFigures(v), " ", kUnits[i]);
}

}  // namespace placement
