// Checks every JSON reader of the project makes before it reads values: the text parses, and no object gives a
// key twice (a JSON object keeps one value per key, so a device kind measured twice would lose a figure without
// a word). One home for it, so that every format refuses the same things with the same words.
#pragma once

#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace placement {

// OK, or INVALID_ARGUMENT: "<what> is not valid JSON: <parser's message>" or "the key 'k' appears twice in one
// JSON object".
absl::Status CheckJsonText(absl::string_view text, absl::string_view what);

// A SAX handler that accepts everything and keeps the parse error: the base of a streaming pass over JSON text
// (nlohmann's parser with a callback costs time that grows faster than the file).
class JsonSaxBase : public nlohmann::json_sax<nlohmann::ordered_json> {
 public:
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return true; }
  bool key(string_t&) override { return true; }
  bool end_object() override { return true; }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
    error_ = e.what();
    return false;
  }
  const std::string& error() const { return error_; }

 private:
  std::string error_;
};

}  // namespace placement
