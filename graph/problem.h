// A placement problem as an importer hands it over: the graph and, where the input carries one, its cluster.
#pragma once

#include <optional>
#include <string>

#include "graph/graph.h"
#include "graph/topology.h"

namespace placement {

struct Problem {
  Graph graph;
  std::optional<Topology> topology;  // set by formats that describe their own devices (Tarnawski)
  // Unit of every time in the graph. Our own inputs are in seconds; profiled inputs keep the unit they were
  // published in so that their figures compare directly ("input").
  std::string time_unit = "s";
};

}  // namespace placement
