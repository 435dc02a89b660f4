// Text and numbers as they go into the chart's HTML and SVG.
//
// Operator, device and type names come from user files, so everything written between tags or inside an
// attribute goes through EscapeHtml. Internal to the chart library.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace placement::chart {

// Escapes & < > " ' as entities, so the result is safe both as element text and as a quoted attribute.
// Bytes that are not valid UTF-8 and control characters other than tab and newline become U+FFFD: an HTML
// parser would accept them, but an SVG or XML reader of the saved file would not.
std::string EscapeHtml(absl::string_view text);

// At most `max_chars` code points of `text`, the last one an ellipsis when it was cut. Not escaped.
std::string Ellipsize(absl::string_view text, int32_t max_chars);

// A coordinate in pixels with one decimal, trailing ".0" dropped: short and the same on every platform.
std::string Px(double pixels);

// CSS colours for the op types of one chart, in the order given. The types are ordered by a stable hash of
// their names (64-bit FNV-1a over the bytes, then mixed) and spread evenly over the hues, alternating two
// lightnesses, so that the types of a chart are as far apart as they can be and a graph always gets the same
// colours. Hues near red are left to the critical path's outline.
std::vector<std::string> TypeColours(const std::vector<std::string>& names);

// A time for people: "12.3 ms" when the unit is seconds ("s"), else a plain number in the input's unit.
std::string TimeText(double t, absl::string_view unit);

}  // namespace placement::chart
