// Conversion between the graph IR and placement.v1.Graph, the wire API's graph.
//
// The message lists operators and edges by name, like our JSON format; conversion to a Graph goes through
// GraphBuilder, so a request gets every check a file does, and errors name the operator or edge. Conversion
// back is exact: GraphFromProto(GraphToProto(g)) has g's GraphHash.
#pragma once

#include "absl/status/statusor.h"
#include "graph/graph.h"
#include "placement/v1/placement.pb.h"

namespace placement {

absl::StatusOr<Graph> GraphFromProto(const placement::v1::Graph& message);

// Operators in OpId order and edges in EdgeId order; an edge's bytes are always set, a tensor's transfer time
// only when it is measured.
placement::v1::Graph GraphToProto(const Graph& graph);

}  // namespace placement
