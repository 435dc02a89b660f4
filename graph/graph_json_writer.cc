#include "graph/graph_json.h"

#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "graph/topology_json.h"

namespace placement {
namespace {

// ordered_json writes keys in the order they are set: the documented order.
using Json = nlohmann::ordered_json;

// Output tensors, measured times and figures are written only where they differ from the default, so a file
// holds what the graph says and nothing else.
Json OpToJson(const Graph& g, OpId op) {
  Json j;
  j["name"] = g.name(op);
  if (!g.op_type(op).empty()) j["op_type"] = g.op_type(op);
  if (!g.measured(op).empty()) {
    Json& measured = j["measured"] = Json::object();
    for (const MeasuredTime& m : g.measured(op)) measured[g.device_kinds()[m.kind]] = m.seconds;
  }
  if (g.flops(op) != 0) j["flops"] = g.flops(op);
  if (g.bytes_accessed(op) != 0) j["bytes_accessed"] = g.bytes_accessed(op);
  if (g.param_bytes(op) != 0) j["param_bytes"] = g.param_bytes(op);
  if (g.temp_bytes(op) != 0) j["temp_bytes"] = g.temp_bytes(op);
  if (g.data_bytes(op) != 0) j["data_bytes"] = g.data_bytes(op);
  if (g.shared_weights(op)) j["shared_weights"] = true;
  if (g.window(op) != 0) j["window"] = g.window(op);
  if (g.channels_last(op)) j["channels_last"] = true;
  for (auto [key, extra] :
       {std::pair{"extra_kernels", &g.extra_kernels(op)}, std::pair{"extra_kernels_back", &g.extra_kernels_back(op)}}) {
    if (extra->kernels > 0) j[key] = {{"kernels", extra->kernels}, {"bytes", static_cast<int64_t>(extra->bytes)}};
  }
  if (g.num_outputs(op) > 0) {
    Json& outputs = j["outputs"] = Json::array();
    for (int32_t k = 0; k < g.num_outputs(op); ++k) {
      const OutputTensor& t = g.tensor(g.first_output(op) + k);
      Json out;
      out["bytes"] = t.bytes;
      if (t.transfer_seconds >= 0) out["transfer_seconds"] = t.transfer_seconds;
      outputs.push_back(std::move(out));
    }
  }
  if (g.colocation_group(op) != kNone) j["colocation_group"] = g.colocation_groups()[g.colocation_group(op)];
  if (g.pinned(op) != kNone) j["pinned_device"] = g.pinned_devices()[g.pinned(op)];
  if (g.is_backward(op)) j["is_backward"] = true;
  return j;
}

std::string Dump(const Json& j) { return j.dump(-1, ' ', /*ensure_ascii=*/false, Json::error_handler_t::replace); }

// One top-level key per line and one operator or edge per line: a file a person can read and diff, where
// nlohmann's indentation would spread every edge over five lines.
std::string PrettyDump(const Json& root) {
  std::string out = "{\n";
  bool first_key = true;
  for (const auto& [key, value] : root.items()) {
    absl::StrAppend(&out, first_key ? "" : ",\n", "  ", Dump(Json(key)), ": ");
    first_key = false;
    if (!value.is_array() || value.empty()) {
      out += Dump(value);
      continue;
    }
    out += "[\n";
    for (size_t i = 0; i < value.size(); ++i) absl::StrAppend(&out, i ? ",\n" : "", "    ", Dump(value[i]));
    out += "\n  ]";
  }
  return out + "\n}\n";
}

}  // namespace

std::string GraphToJson(const Graph& graph, const GraphJsonOptions& options) {
  Json root;
  root["format"] = kGraphJsonFormat;
  if (!options.name.empty()) root["name"] = options.name;
  root["time_unit"] = options.time_unit;
  if (options.topology != nullptr) {
    root["topology"] = Json::parse(TopologyToJson(*options.topology), nullptr, /*allow_exceptions=*/false);
  }
  Json& ops = root["operators"] = Json::array();
  for (OpId op = 0; op < graph.num_ops(); ++op) ops.push_back(OpToJson(graph, op));
  Json& edges = root["edges"] = Json::array();
  for (EdgeId e = 0; e < graph.num_edges(); ++e) {
    const Edge& edge = graph.edge(e);
    Json j;
    j["src"] = graph.name(edge.src);
    if (edge.src_output != 0) j["src_output"] = edge.src_output;
    j["dst"] = graph.name(edge.dst);
    // Written only when it differs from the output's bytes, which is what a reader assumes when it is absent.
    if (edge.bytes != graph.tensor(graph.edge_tensor(e)).bytes) j["bytes"] = edge.bytes;
    edges.push_back(std::move(j));
  }
  return options.pretty ? PrettyDump(root) : Dump(root) + "\n";
}

std::string ProblemToJson(const Problem& problem, bool pretty) {
  GraphJsonOptions options;
  options.pretty = pretty;
  options.time_unit = problem.time_unit;
  if (problem.topology.has_value()) options.topology = &*problem.topology;
  return GraphToJson(problem.graph, options);
}

}  // namespace placement
