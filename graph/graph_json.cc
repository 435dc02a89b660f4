#include "graph/graph_json.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/json_read.h"
#include "graph/json_text.h"
#include "graph/status_macros.h"
#include "graph/topology_json.h"
#include "graph/units.h"

namespace placement {
namespace {

// ordered_json keeps keys in the order they were written, so a written file reads in the documented order and
// measured times keep their order through a round trip.
using Json = nlohmann::ordered_json;
using json::Keys;
using json::UnitParser;

constexpr Keys kTopKeys = {"format", "name", "description", "time_unit", "topology", "operators", "edges"};
constexpr Keys kOpKeys = {"name",           "op_type",          "measured",      "flops",
                          "bytes_accessed", "param_bytes",      "temp_bytes",    "window",
                          "outputs",        "colocation_group", "pinned_device", "is_backward",
                          "channels_last",  "extra_kernels",    "extra_kernels_back", "data_bytes",
                          "shared_weights"};
constexpr Keys kExtraKernelKeys = {"kernels", "bytes"};
constexpr Keys kOutputKeys = {"bytes", "transfer_seconds"};
constexpr Keys kEdgeKeys = {"src", "src_output", "dst", "bytes"};

using json::Child;
using json::Err;
using json::Figure;
using json::Find;
using json::String;

absl::Status CheckObject(const Json& j, absl::string_view path, Keys known) {
  return json::CheckObject(j, path, known, "the graph");
}
absl::StatusOr<int64_t> Bytes(const Json& j, absl::string_view path) { return json::ByteCount(j, path); }

// FLOP counts. units.h reads FLOP per second; a count is written "2.5 GFLOP", so the rate spellings are
// accepted too and mean the same count.
absl::StatusOr<double> ParseFlopCount(absl::string_view text) {
  if (absl::EndsWithIgnoreCase(text, "flop")) return ParseFlops(absl::StrCat(text, "s"));
  return ParseFlops(text);
}

// Times in the file's unit. A string with units is converted, which needs the unit to be one units.h knows.
class TimeReader {
 public:
  explicit TimeReader(absl::string_view unit) : unit_(unit) {
    if (unit == "s") scale_ = 1;
    if (unit == "ms") scale_ = 1e3;
    if (unit == "us") scale_ = 1e6;
    if (unit == "ns") scale_ = 1e9;
  }
  absl::StatusOr<double> Read(const Json& j, absl::string_view path) const {
    if (j.is_string() && scale_ == 0) {
      return Err(path, absl::StrCat("a time with units needs time_unit s, ms, us or ns (the file's is '", unit_,
                                    "'); write a number in the file's unit"));
    }
    absl::StatusOr<double> v = Figure(j, path, ParseSeconds);
    if (!v.ok() || !j.is_string()) return v;
    return *v * scale_;
  }

 private:
  std::string unit_;
  double scale_ = 0;
};

absl::StatusOr<OutputTensor> ReadOutput(const Json& j, absl::string_view path, const TimeReader& time) {
  OutputTensor out;
  if (!j.is_object()) {  // a bare figure is the bytes: "outputs": ["4 MiB"]
    absl::StatusOr<int64_t> bytes = Bytes(j, path);
    if (!bytes.ok()) return bytes.status();
    out.bytes = *bytes;
    return out;
  }
  RETURN_IF_ERROR(CheckObject(j, path, kOutputKeys));
  const Json* bytes = Find(j, "bytes");
  if (bytes == nullptr) return Err(path, "'bytes' is required");
  absl::StatusOr<int64_t> b = Bytes(*bytes, Child(path, "bytes"));
  if (!b.ok()) return b.status();
  out.bytes = *b;
  if (const Json* t = Find(j, "transfer_seconds")) {
    absl::StatusOr<double> seconds = time.Read(*t, Child(path, "transfer_seconds"));
    if (!seconds.ok()) return seconds.status();
    out.transfer_seconds = *seconds;
  }
  return out;
}

// {"kernels": 3, "bytes": "1.5 MiB"}: OpSpec::extra_kernels.
absl::StatusOr<ExtraKernels> ReadExtraKernels(const Json& j, absl::string_view path) {
  RETURN_IF_ERROR(CheckObject(j, path, kExtraKernelKeys));
  ExtraKernels extra;
  const Json* kernels = Find(j, "kernels");
  if (kernels == nullptr || !kernels->is_number_integer() || kernels->get<int64_t>() < 0 ||
      kernels->get<int64_t>() > std::numeric_limits<int32_t>::max()) {
    return Err(Child(path, "kernels"), "expected a non-negative count of kernels");
  }
  extra.kernels = kernels->get<int32_t>();
  if (const Json* bytes = Find(j, "bytes")) {
    absl::StatusOr<int64_t> b = Bytes(*bytes, Child(path, "bytes"));
    if (!b.ok()) return b.status();
    extra.bytes = static_cast<double>(*b);
  }
  return extra;
}

absl::StatusOr<OpSpec> ReadOp(const Json& j, const std::string& index_path, const TimeReader& time) {
  if (!j.is_object()) return Err(index_path, absl::StrCat("expected an object, got ", j.type_name()));
  const Json* name = Find(j, "name");
  if (name == nullptr) return Err(index_path, "'name' is required");
  OpSpec op;
  absl::StatusOr<std::string> n = String(*name, Child(index_path, "name"));
  if (!n.ok()) return n.status();
  if (n->empty()) return Err(Child(index_path, "name"), "must not be empty");
  op.name = *std::move(n);
  // From here on the path names the operator too, which is what a person searches the file for.
  const std::string path = absl::StrCat(index_path, " ('", op.name, "')");
  RETURN_IF_ERROR(CheckObject(j, path, kOpKeys));
  for (auto [key, out] : {std::pair{"op_type", &op.op_type}, std::pair{"colocation_group", &op.colocation_group},
                          std::pair{"pinned_device", &op.pinned_device}}) {
    if (const Json* v = Find(j, key)) {
      absl::StatusOr<std::string> s = String(*v, Child(path, key));
      if (!s.ok()) return s.status();
      *out = *std::move(s);
    }
  }
  if (const Json* m = Find(j, "measured")) {
    const std::string mpath = Child(path, "measured");
    if (!m->is_object()) {
      return Err(mpath, absl::StrCat("expected an object {device kind: time}, got ", m->type_name()));
    }
    for (const auto& [kind, value] : m->items()) {
      if (kind.empty()) return Err(mpath, "a device kind is empty");
      absl::StatusOr<double> seconds = time.Read(value, Child(mpath, kind));
      if (!seconds.ok()) return seconds.status();
      op.measured_seconds.emplace_back(kind, *seconds);
    }
  }
  for (auto [key, parse, out] : {std::tuple{"flops", &ParseFlopCount, &op.flops},
                                 std::tuple{"bytes_accessed", &ParseBytes, &op.bytes_accessed}}) {
    if (const Json* v = Find(j, key)) {
      absl::StatusOr<double> f = Figure(*v, Child(path, key), parse);
      if (!f.ok()) return f.status();
      *out = *f;
    }
  }
  for (auto [key, out] : {std::pair{"param_bytes", &op.param_bytes}, std::pair{"temp_bytes", &op.temp_bytes},
                          std::pair{"data_bytes", &op.data_bytes}}) {
    if (const Json* v = Find(j, key)) {
      absl::StatusOr<int64_t> b = Bytes(*v, Child(path, key));
      if (!b.ok()) return b.status();
      *out = *b;
    }
  }
  if (const Json* v = Find(j, "window")) {
    if (!v->is_number_integer() || v->get<int64_t>() < 0 || v->get<int64_t>() > std::numeric_limits<int32_t>::max()) {
      return Err(Child(path, "window"), absl::StrCat("expected a kernel window (9 for 3x3), got ", v->dump()));
    }
    op.window = v->get<int32_t>();
  }
  if (const Json* outs = Find(j, "outputs")) {
    const std::string opath = Child(path, "outputs");
    if (!outs->is_array()) return Err(opath, absl::StrCat("expected a list, got ", outs->type_name()));
    for (size_t k = 0; k < outs->size(); ++k) {
      absl::StatusOr<OutputTensor> t = ReadOutput((*outs)[k], absl::StrCat(opath, "[", k, "]"), time);
      if (!t.ok()) return t.status();
      op.outputs.push_back(*t);
    }
  }
  RETURN_IF_ERROR(json::OptionalBool(j, path, "is_backward", &op.is_backward));
  RETURN_IF_ERROR(json::OptionalBool(j, path, "channels_last", &op.channels_last));
  RETURN_IF_ERROR(json::OptionalBool(j, path, "shared_weights", &op.shared_weights));
  for (auto [key, out] :
       {std::pair{"extra_kernels", &op.extra_kernels}, std::pair{"extra_kernels_back", &op.extra_kernels_back}}) {
    if (const Json* v = Find(j, key)) {
      absl::StatusOr<ExtraKernels> c = ReadExtraKernels(*v, Child(path, key));
      if (!c.ok()) return c.status();
      *out = *c;
    }
  }
  return op;
}

absl::Status ReadEdge(const Json& j, const std::string& path, GraphBuilder& builder) {
  RETURN_IF_ERROR(CheckObject(j, path, kEdgeKeys));
  std::string ends[2];
  for (int i = 0; i < 2; ++i) {
    const char* key = i == 0 ? "src" : "dst";
    const Json* v = Find(j, key);
    if (v == nullptr) return Err(path, absl::StrCat("'", key, "' is required"));
    absl::StatusOr<std::string> s = String(*v, Child(path, key));
    if (!s.ok()) return s.status();
    if (s->empty()) return Err(Child(path, key), "must not be empty");
    ends[i] = *std::move(s);
  }
  int32_t src_output = 0;
  if (const Json* v = Find(j, "src_output")) {
    if (!v->is_number_integer() || v->get<int64_t>() < 0 || v->get<int64_t>() > std::numeric_limits<int32_t>::max()) {
      return Err(Child(path, "src_output"), absl::StrCat("expected an output index (0, 1, ...), got ", v->dump()));
    }
    src_output = v->get<int32_t>();
  }
  int64_t bytes = -1;  // the bytes of the output, resolved by the builder
  if (const Json* v = Find(j, "bytes")) {
    absl::StatusOr<int64_t> b = Bytes(*v, Child(path, "bytes"));
    if (!b.ok()) return b.status();
    bytes = *b;
  }
  builder.AddEdge(ends[0], src_output, ends[1], bytes);
  return absl::OkStatus();
}

absl::StatusOr<Problem> ReadProblem(const Json& root) {
  RETURN_IF_ERROR(CheckObject(root, "", kTopKeys));
  const Json* format = Find(root, "format");
  if (format == nullptr || *format != kGraphJsonFormat) {
    return absl::InvalidArgumentError(absl::StrCat("format: expected \"", kGraphJsonFormat, "\", got ",
                                                   format == nullptr ? "no 'format' key" : format->dump()));
  }
  for (const char* key : {"name", "description"}) {
    if (const Json* v = Find(root, key); v != nullptr && !v->is_string()) {
      return Err(key, absl::StrCat("expected a string, got ", v->type_name()));
    }
  }
  Problem problem;
  if (const Json* unit = Find(root, "time_unit")) {
    if (!unit->is_string() || unit->get_ref<const std::string&>().empty()) {
      return Err("time_unit", absl::StrCat("expected a non-empty string, got ", unit->dump()));
    }
    problem.time_unit = unit->get<std::string>();
  }
  if (const Json* topology = Find(root, "topology")) {
    if (!topology->is_string() && !topology->is_object()) {
      return Err("topology", absl::StrCat("expected an object or a shorthand string, got ", topology->type_name()));
    }
    absl::StatusOr<Topology> t = topology->is_string() ? ParseTopologyShorthand(topology->get_ref<const std::string&>())
                                                       : ParseTopologyJson(topology->dump());
    if (!t.ok()) return absl::InvalidArgumentError(absl::StrCat("topology: ", t.status().message()));
    problem.topology = *std::move(t);
  }

  const TimeReader time(problem.time_unit);
  GraphBuilder builder;
  const Json* ops = Find(root, "operators");
  if (ops == nullptr || !ops->is_array() || ops->empty()) {
    return Err("operators", "expected a non-empty list of operators");
  }
  for (size_t i = 0; i < ops->size(); ++i) {
    absl::StatusOr<OpSpec> op = ReadOp((*ops)[i], absl::StrCat("operators[", i, "]"), time);
    if (!op.ok()) return op.status();
    builder.AddOp(*std::move(op));
  }
  if (const Json* edges = Find(root, "edges")) {
    if (!edges->is_array()) return Err("edges", absl::StrCat("expected a list, got ", edges->type_name()));
    for (size_t i = 0; i < edges->size(); ++i) {
      RETURN_IF_ERROR(ReadEdge((*edges)[i], absl::StrCat("edges[", i, "]"), builder));
    }
  }
  absl::StatusOr<Graph> graph = std::move(builder).Build();
  if (!graph.ok()) return graph.status();
  problem.graph = *std::move(graph);
  return problem;
}

// Reads the top-level "format" and stops there, so probing a large file costs a scan up to that key.
class FormatProbe : public JsonSaxBase {
 public:
  bool start_object(std::size_t) override {
    at_format_ = false;
    return ++depth_ > 0;
  }
  bool end_object() override { return --depth_ > 0; }
  bool start_array(std::size_t) override {
    at_format_ = false;
    ++depth_;
    return depth_ > 1;  // an array at the top is not a graph file
  }
  bool end_array() override { return --depth_ > 0; }
  bool null() override { return Other(); }
  bool boolean(bool) override { return Other(); }
  bool number_integer(number_integer_t) override { return Other(); }
  bool number_unsigned(number_unsigned_t) override { return Other(); }
  bool number_float(number_float_t, const string_t&) override { return Other(); }
  bool key(string_t& key) override {
    at_format_ = depth_ == 1 && key == "format";
    return true;
  }
  bool string(string_t& value) override {
    if (!at_format_) return true;
    format_ = value;
    return false;
  }
  const std::string& format() const { return format_; }

 private:
  bool Other() {
    at_format_ = false;
    return true;
  }
  int depth_ = 0;
  bool at_format_ = false;
  std::string format_;
};

}  // namespace

absl::StatusOr<Problem> ParseGraphJson(absl::string_view json_text) {
  try {
    RETURN_IF_ERROR(CheckJsonText(json_text, "the graph"));
    return ReadProblem(Json::parse(json_text.begin(), json_text.end()));
  } catch (const Json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("the graph is not valid JSON: ", e.what()));
  } catch (const std::exception& e) {  // std::bad_alloc and the like: still never past this edge
    return absl::InvalidArgumentError(absl::StrCat("cannot read the graph: ", e.what()));
  }
}

bool LooksLikeGraphJson(absl::string_view json_text) {
  FormatProbe probe;
  try {
    Json::sax_parse(json_text.begin(), json_text.end(), &probe);
  } catch (const std::exception&) {
    return false;
  }
  return probe.format() == kGraphJsonFormat;
}

}  // namespace placement
