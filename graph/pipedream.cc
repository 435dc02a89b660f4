#include "graph/pipedream.h"

#include <cmath>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "graph/cost_model.h"

namespace placement {
namespace {

struct Layer {
  std::string name;
  std::string type;
  double forward_seconds = 0;
  double backward_seconds = 0;
  int64_t activation_bytes = 0;
  int64_t parameter_bytes = 0;
};

absl::Status LineError(int line, const std::string& why) {
  return absl::InvalidArgumentError(absl::StrCat("line ", line, ": ", why));
}

// "Conv2d(384, 256, ...)" -> "Conv2d"; "__getitem__" stays.
std::string TypeOf(absl::string_view description) {
  description = absl::StripAsciiWhitespace(description);
  const size_t paren = description.find('(');
  std::string type(absl::StripAsciiWhitespace(description.substr(0, paren)));
  return type.empty() ? "Layer" : type;
}

absl::StatusOr<Layer> ParseLayer(absl::string_view line, int number) {
  std::vector<absl::string_view> parts = absl::StrSplit(line, " -- ");
  if (parts.size() < 3) return LineError(number, "expected 'nodeN -- Description -- figures'");
  Layer layer;
  layer.name = std::string(absl::StripAsciiWhitespace(parts.front()));
  std::vector<absl::string_view> middle(parts.begin() + 1, parts.end() - 1);
  layer.type = TypeOf(absl::StrJoin(middle, " -- "));
  std::map<std::string, double> figures;
  // A figure is a number, or a list "[a; b; c]" for a layer with several outputs (GNMT's LSTMs), which
  // PipeDream adds up.
  for (absl::string_view item : absl::StrSplit(parts.back(), ',', absl::SkipWhitespace())) {
    std::vector<absl::string_view> kv = absl::StrSplit(item, '=');
    absl::string_view list = kv.size() == 2 ? absl::StripAsciiWhitespace(kv[1]) : absl::string_view();
    const bool bracketed = absl::ConsumePrefix(&list, "[") && absl::ConsumeSuffix(&list, "]");
    double total = 0;
    bool valid = kv.size() == 2 && !list.empty();
    for (absl::string_view v : absl::StrSplit(list, bracketed ? ';' : '\0')) {
      double value = 0;
      valid = valid && absl::SimpleAtod(absl::StripAsciiWhitespace(v), &value) && std::isfinite(value) && value >= 0;
      total += value;
    }
    if (!valid) {
      return LineError(number, absl::StrCat("'", absl::StripAsciiWhitespace(item),
                                            "' is not key=value with a finite, non-negative value (or a [list])"));
    }
    figures[std::string(absl::StripAsciiWhitespace(kv[0]))] = total;
  }
  for (const char* key : {"forward_compute_time", "backward_compute_time", "activation_size", "parameter_size"}) {
    if (figures.count(key) == 0) return LineError(number, absl::StrCat("'", key, "' is missing"));
  }
  if (figures["activation_size"] > 9.0e18 || figures["parameter_size"] > 9.0e18) {
    return LineError(number, "a size is too large");
  }
  layer.forward_seconds = figures["forward_compute_time"] / 1000;  // PipeDream profiles in milliseconds
  layer.backward_seconds = figures["backward_compute_time"] / 1000;
  layer.activation_bytes = static_cast<int64_t>(figures["activation_size"]);
  layer.parameter_bytes = static_cast<int64_t>(figures["parameter_size"]);
  return layer;
}

OpSpec ForwardSpec(const Layer& layer) {
  OpSpec op;
  op.name = layer.name;
  op.op_type = layer.type;
  op.measured_seconds.emplace_back(kAnyDeviceKind, layer.forward_seconds);
  op.param_bytes = layer.parameter_bytes;
  op.outputs.push_back(OutputTensor{.bytes = layer.activation_bytes});
  return op;
}

// The training step: forward operators, then a backward operator per layer (colocated with it, where its
// weights and stashed activation are) whose output is the gradient its producers' backward operators read.
absl::StatusOr<Graph> Build(const std::vector<Layer>& layers, const std::vector<std::pair<int, int>>& edges,
                            bool training) {
  GraphBuilder builder;
  for (const Layer& layer : layers) {
    OpSpec op = ForwardSpec(layer);
    if (training) op.colocation_group = layer.name;
    builder.AddOp(std::move(op));
  }
  for (const auto& [src, dst] : edges) builder.AddEdge(src, 0, dst);
  if (!training) return std::move(builder).Build();
  const int n = static_cast<int>(layers.size());
  for (const Layer& layer : layers) {
    OpSpec grad;
    grad.name = absl::StrCat(layer.name, "/grad");
    grad.op_type = absl::StrCat(layer.type, "Grad");
    grad.measured_seconds.emplace_back(kAnyDeviceKind, layer.backward_seconds);
    grad.colocation_group = layer.name;
    grad.is_backward = true;
    grad.outputs.push_back(OutputTensor{.bytes = layer.activation_bytes});  // the gradient of its input
    builder.AddOp(std::move(grad));
  }
  for (int i = 0; i < n; ++i) builder.AddEdge(i, 0, n + i);  // the stashed activation, on the same device
  for (const auto& [src, dst] : edges) builder.AddEdge(n + dst, 0, n + src, layers[src].activation_bytes);
  return std::move(builder).Build();
}

}  // namespace

bool LooksLikePipeDreamProfile(absl::string_view text) {
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (line.empty()) continue;
    return absl::StartsWith(line, "node") && line.find(" -- ") != absl::string_view::npos &&
           line.find("forward_compute_time=") != absl::string_view::npos;
  }
  return false;
}

absl::StatusOr<Problem> ParsePipeDreamProfile(absl::string_view text, bool training) {
  std::vector<Layer> layers;
  std::map<std::string, int> index;
  if (!LooksLikePipeDreamProfile(text)) {
    return absl::InvalidArgumentError(
        "not a PipeDream profile: the first line is not 'nodeN -- Description -- "
        "forward_compute_time=...'");
  }
  std::vector<std::pair<int, int>> edges;
  std::vector<std::pair<std::pair<std::string, std::string>, int>> named_edges;  // resolved once every layer is in
  int number = 0;
  for (absl::string_view raw : absl::StrSplit(text, '\n')) {
    ++number;
    const absl::string_view line = absl::StripAsciiWhitespace(raw);
    if (line.empty()) continue;
    if (!raw.empty() && raw[0] == '\t') {  // an edge
      std::vector<absl::string_view> ends = absl::StrSplit(line, " -- ");
      if (ends.size() != 2) return LineError(number, "expected an edge '\\tnodeA -- nodeB'");
      named_edges.push_back(
          {{std::string(absl::StripAsciiWhitespace(ends[0])), std::string(absl::StripAsciiWhitespace(ends[1]))},
           number});
      continue;
    }
    absl::StatusOr<Layer> layer = ParseLayer(line, number);
    if (!layer.ok()) return layer.status();
    if (!index.emplace(layer->name, static_cast<int>(layers.size())).second) {
      return LineError(number, absl::StrCat("layer '", layer->name, "' is listed twice"));
    }
    layers.push_back(*std::move(layer));
  }
  std::vector<bool> has_input(layers.size(), false), has_output(layers.size(), false);
  for (const auto& [ends, line] : named_edges) {
    auto src = index.find(ends.first), dst = index.find(ends.second);
    if (src == index.end() || dst == index.end()) {
      return LineError(line, absl::StrCat("the edge names a layer not listed ('",
                                          src == index.end() ? ends.first : ends.second, "')"));
    }
    edges.emplace_back(src->second, dst->second);
    has_input[dst->second] = true;
    has_output[src->second] = true;
  }
  // Input layers (sources named "Input...") time loading the data, not the model, and "__getitem__" layers that
  // feed nothing select an output nobody reads: PipeDream's planner leaves both out, and so does the graph.
  std::vector<int> kept(layers.size(), -1);
  std::vector<Layer> model;
  for (size_t i = 0; i < layers.size(); ++i) {
    const bool input = !has_input[i] && absl::StartsWith(layers[i].type, "Input");
    const bool unread = !has_output[i] && absl::StartsWith(layers[i].type, "__getitem__");
    if (!input && !unread) {
      kept[i] = static_cast<int>(model.size());
      model.push_back(layers[i]);
    }
  }
  std::vector<std::pair<int, int>> model_edges;
  for (const auto& [src, dst] : edges) {
    if (kept[src] >= 0 && kept[dst] >= 0) model_edges.emplace_back(kept[src], kept[dst]);
  }
  if (model.empty()) return absl::InvalidArgumentError("the profile lists no layer but its inputs");
  layers = std::move(model);
  edges = std::move(model_edges);
  absl::StatusOr<Graph> graph = Build(layers, edges, training);
  if (!graph.ok()) return graph.status();
  Problem problem;
  problem.graph = *std::move(graph);
  return problem;
}

}  // namespace placement
