// Our own graph file format, "placement.graph/v1": a JSON document that carries everything a Graph holds,
// optionally with the cluster it is meant for. docs/graph-format.md is the user's reference.
//
// The format is meant to be both written by programs (GraphToJson, exact: every number survives the round
// trip, so the graph hash is unchanged) and by hand (figures may be strings with units, such as "4 MiB",
// "12us" or "2.5 GFLOP"). Everything here takes untrusted input: errors are InvalidArgument naming the JSON
// path (and the operator, where there is one), every GraphBuilder check applies, and no exception leaves this
// API.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/graph.h"
#include "graph/problem.h"
#include "graph/topology.h"

namespace placement {

// The value of the required top-level "format" key.
inline constexpr char kGraphJsonFormat[] = "placement.graph/v1";

// Parses a graph file. The topology is set when the file embeds one ("topology": a JSON topology as in
// docs/topology.md, or a shorthand string such as "2xV100"); time_unit is the file's ("s" when absent).
absl::StatusOr<Problem> ParseGraphJson(absl::string_view json_text);

struct GraphJsonOptions {
  bool pretty = false;                 // one line per top-level key, operator and edge; else one line
  std::string name;                    // written as "name" when not empty
  std::string time_unit = "s";         // written as "time_unit"
  const Topology* topology = nullptr;  // embedded (explicit form, exact) when set; must outlive the call
};

// Writes the graph: operators in OpId order, edges in EdgeId order, defaults left out. ParseGraphJson gives
// back a graph with the same operators, edges, figures and GraphHash. Strings that are not valid UTF-8 cannot
// be written in JSON; their bad bytes become U+FFFD.
std::string GraphToJson(const Graph& graph, const GraphJsonOptions& options = {});

// Same, for a Problem: its time unit and, when it has one, its topology.
std::string ProblemToJson(const Problem& problem, bool pretty = false);

// True when the text is a JSON object whose top-level "format" is kGraphJsonFormat, so loaders can pick this
// parser without being told. Reads the whole text but keeps only that one key.
bool LooksLikeGraphJson(absl::string_view json_text);

}  // namespace placement
