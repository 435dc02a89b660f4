"""Client of the placement service (placement.v1): where each operator of a DNN graph should run, and how fast.

    from placement_client import PlacementClient, place_request

    with PlacementClient("127.0.0.1:50051") as client:
        client.wait_until_ready()
        answer = client.place(place_request("model.onnx", devices="4xA100"))
        print(answer.score.value, [(a.op, a.device) for a in answer.assignment][:5])

Every Place, PlaceStream and Simulate call carries the x-graph-hash metadata (lower-case hex SHA-256 of the graph
payload as sent), so that an L7 load balancer can send repeats of a graph to the replica whose cache holds its
answer. The messages are in placement_client.pb (generated from placement/v1/placement.proto when the package is
built).
"""

from placement_client.client import InsecureTokenError, PlacementClient, READINESS_SERVICE, is_loopback, secure_client
from placement_client.proto import placement_pb2 as pb
from placement_client.requests import (GRAPH_HASH_HEADER, OBJECTIVES, graph_hash, is_hf_config_text, place_request,
                                       read_graph, routing_metadata, simulate_request)

__version__ = "0.1.0"

__all__ = [
    "GRAPH_HASH_HEADER", "InsecureTokenError", "OBJECTIVES", "PlacementClient", "READINESS_SERVICE", "graph_hash",
    "is_hf_config_text", "is_loopback", "pb", "place_request", "read_graph", "routing_metadata", "secure_client", "simulate_request",
]
