// Reading values out of JSON the project's formats share (the graph format, topologies): paths in messages, known
// keys, figures with units and byte counts. One home, so that every format refuses the same things (negative,
// infinite, misspelt) with the same words. The text itself is checked first by CheckJsonText (json_text.h).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "graph/units.h"

namespace placement::json {

using Keys = std::initializer_list<absl::string_view>;
using UnitParser = absl::StatusOr<double> (*)(absl::string_view);

// INVALID_ARGUMENT "<path>: <message>" (the message alone at the top level).
inline absl::Status Err(absl::string_view path, absl::string_view message) {
  return absl::InvalidArgumentError(path.empty() ? std::string(message) : absl::StrCat(path, ": ", message));
}
inline std::string Child(absl::string_view path, absl::string_view key) {
  return path.empty() ? std::string(key) : absl::StrCat(path, ".", key);
}
inline std::string Index(absl::string_view path, size_t i) { return absl::StrCat(path, "[", i, "]"); }

template <typename Json>
const Json* Find(const Json& object, const char* key) {
  auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

// An object whose keys are all known: a misspelt optional key would otherwise be ignored and its default used
// without a word, the hardest kind of mistake to see in a prediction. `top` names the document at the top level
// ("the graph", "the topology").
template <typename Json>
absl::Status CheckObject(const Json& j, absl::string_view path, Keys known, absl::string_view top) {
  if (!j.is_object()) return Err(path, absl::StrCat("expected an object, got ", j.type_name()));
  for (const auto& [key, value] : j.items()) {
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      return absl::InvalidArgumentError(absl::StrCat("unknown key '", key, "' in ", path.empty() ? top : path,
                                                     " (known keys: ", absl::StrJoin(known, ", "), ")"));
    }
  }
  return absl::OkStatus();
}

template <typename Json>
absl::StatusOr<std::string> String(const Json& j, absl::string_view path) {
  if (!j.is_string()) return Err(path, absl::StrCat("expected a string, got ", j.type_name()));
  return j.template get<std::string>();
}

// An optional true or false: `*out` is left as it is where the key is absent.
template <typename Json>
absl::Status OptionalBool(const Json& object, absl::string_view path, const char* key, bool* out) {
  const Json* v = Find(object, key);
  if (v == nullptr) return absl::OkStatus();
  if (!v->is_boolean()) return Err(Child(path, key), absl::StrCat("expected true or false, got ", v->dump()));
  *out = v->template get<bool>();
  return absl::OkStatus();
}

// A finite, non-negative figure: a number in SI base units, or (with `parse`) a string with units.
template <typename Json>
absl::StatusOr<double> Figure(const Json& j, absl::string_view path, UnitParser parse) {
  double v = 0;
  if (j.is_number()) {
    v = j.template get<double>();
  } else if (j.is_string() && parse != nullptr) {
    absl::StatusOr<double> parsed = parse(j.template get_ref<const std::string&>());
    if (!parsed.ok()) return Err(path, parsed.status().message());
    v = *parsed;
  } else {
    return Err(path,
               absl::StrCat("expected a number", parse ? " or a string with units" : "", ", got ", j.type_name()));
  }
  if (!std::isfinite(v)) return Err(path, "must be finite");
  if (v < 0) return Err(path, absl::StrCat("must not be negative (got ", j.dump(), ")"));
  return v;
}

// A byte count: whole JSON numbers taken exactly (a double cannot hold every int64), else a figure with units;
// at most 2^62.
template <typename Json>
absl::StatusOr<int64_t> ByteCount(const Json& j, absl::string_view path) {
  if (j.is_number_unsigned()) {
    if (j.template get<uint64_t>() > (uint64_t{1} << 62))
      return Err(path, absl::StrCat("is too large (", j.dump(), ")"));
    return j.template get<int64_t>();
  }
  if (j.is_number_integer() && j.template get<int64_t>() < 0) {
    return Err(path, absl::StrCat("must not be negative (got ", j.dump(), ")"));
  }
  absl::StatusOr<double> v = Figure(j, path, ParseBytes);
  if (!v.ok()) return v.status();
  if (*v > 0x1p62) return Err(path, absl::StrCat("is too large (", j.dump(), ")"));
  return static_cast<int64_t>(std::llround(*v));
}

}  // namespace placement::json
