#include "client/chart/html_text.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "graph/units.h"

namespace placement::chart {
namespace {

constexpr absl::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD in UTF-8

// Length of the valid UTF-8 sequence starting at text[i], or 0 when it is not one (overlong forms,
// surrogates and code points above U+10FFFF included).
size_t Utf8Length(absl::string_view text, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char b0 = byte(i);
  if (b0 < 0x80) return 1;
  size_t n = 0;
  uint32_t cp = 0;
  uint32_t min = 0;
  if ((b0 & 0xE0) == 0xC0) {
    n = 2, cp = b0 & 0x1F, min = 0x80;
  } else if ((b0 & 0xF0) == 0xE0) {
    n = 3, cp = b0 & 0x0F, min = 0x800;
  } else if ((b0 & 0xF8) == 0xF0) {
    n = 4, cp = b0 & 0x07, min = 0x10000;
  } else {
    return 0;
  }
  if (i + n > text.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i + k) & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return n;
}

// 64-bit FNV-1a, then MurmurHash3's fmix64: FNV alone leaves names that differ in their last letters close.
uint64_t StableHash(absl::string_view name) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (char c : name) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ULL;
  }
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ULL;
  h ^= h >> 33;
  return h;
}

}  // namespace

std::string EscapeHtml(absl::string_view text) {
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    const size_t n = Utf8Length(text, i);
    if (n == 0) {
      out.append(kReplacement.data(), kReplacement.size());
      ++i;
      continue;
    }
    if (n > 1) {
      out.append(text.data() + i, n);
      i += n;
      continue;
    }
    switch (c) {
      case '&':
        out.append("&amp;");
        break;
      case '<':
        out.append("&lt;");
        break;
      case '>':
        out.append("&gt;");
        break;
      case '"':
        out.append("&quot;");
        break;
      case '\'':
        out.append("&#39;");
        break;
      case '\t':
      case '\n':
        out.push_back(c);
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) {
          out.append(kReplacement.data(), kReplacement.size());
        } else {
          out.push_back(c);
        }
    }
    ++i;
  }
  return out;
}

std::string Ellipsize(absl::string_view text, int32_t max_chars) {
  if (max_chars <= 0) return "";
  // Byte offsets of code points; an invalid byte counts as one (EscapeHtml replaces it later).
  size_t i = 0;
  int32_t chars = 0;
  size_t cut = 0;
  while (i < text.size()) {
    if (chars == max_chars - 1) cut = i;
    if (chars == max_chars) return absl::StrCat(text.substr(0, cut), "\xE2\x80\xA6");  // U+2026
    const size_t n = Utf8Length(text, i);
    i += n == 0 ? 1 : n;
    ++chars;
  }
  return std::string(text);
}

std::string Px(double pixels) {
  const double rounded = std::round(pixels * 10) / 10;
  std::string s = absl::StrFormat("%.1f", rounded == 0 ? 0.0 : rounded);  // no "-0.0"
  if (s.size() > 2 && s.compare(s.size() - 2, 2, ".0") == 0) s.resize(s.size() - 2);
  return s;
}

std::vector<std::string> TypeColours(const std::vector<std::string>& names) {
  std::vector<std::pair<uint64_t, size_t>> order;  // (hash, index)
  for (size_t i = 0; i < names.size(); ++i) order.emplace_back(StableHash(names[i]), i);
  std::sort(order.begin(), order.end(), [&](const auto& a, const auto& b) {
    return a.first != b.first ? a.first < b.first : names[a.second] < names[b.second];
  });
  constexpr double kFirstHue = 25, kHueRange = 310;  // 25..335 degrees: no red
  std::vector<std::string> colours(names.size());
  for (size_t rank = 0; rank < order.size(); ++rank) {
    // One type alone keeps its hash's own hue; more share the range evenly.
    const double share = order.size() == 1 ? static_cast<double>(order[0].first % 1000) / 1000
                                           : static_cast<double>(rank) / static_cast<double>(order.size());
    const int hue = static_cast<int>(kFirstHue + kHueRange * share);
    colours[order[rank].second] = absl::StrFormat("hsl(%d,62%%,%d%%)", hue, rank % 2 == 0 ? 60 : 70);
  }
  return colours;
}

std::string TimeText(double t, absl::string_view unit) {
  if (unit == "s") return FormatSeconds(t);
  return absl::StrFormat("%.4g", t);
}

}  // namespace placement::chart
