"""A small Python client for placement.v1.PlacementService.

The generated stubs (placement/v1/placement_pb2*.py) come from the build tree: put
build/client/python/generated and client/python on PYTHONPATH. Every Place, PlaceStream and Simulate call
carries the x-graph-hash metadata (lower-case hex SHA-256 of the graph payload bytes as sent), so that an L7
load balancer can send repeats of a graph to the replica whose cache holds its answer.
"""

import hashlib
import os

import grpc

from placement.v1 import placement_pb2 as pb
from placement.v1 import placement_pb2_grpc as pb_grpc

GRAPH_HASH_HEADER = "x-graph-hash"

_OBJECTIVES = {
    "step_time": pb.OBJECTIVE_STEP_TIME,
    "throughput": pb.OBJECTIVE_THROUGHPUT,
    "latency": pb.OBJECTIVE_LATENCY,
}
_MAX_MESSAGE_BYTES = 1 << 30


def graph_hash(payload):
    """The x-graph-hash value for a graph payload (bytes, or JSON text encoded as UTF-8)."""
    if isinstance(payload, str):
        payload = payload.encode("utf-8")
    return hashlib.sha256(payload).hexdigest()


def read_graph(path):
    """A graph file's bytes and whether they are text the server reads as graph_json (our JSON format, a
    Tarnawski graph, or a PipeDream profile, whose lines read "nodeN -- ...") rather than ONNX."""
    with open(path, "rb") as f:
        data = f.read()
    head = data.lstrip()
    return data, head[:1] == b"{" or (head.startswith(b"node") and b" -- " in head.split(b"\n", 1)[0])


def _set_graph(request, data, is_json):
    if is_json:
        request.graph_json = data.decode("utf-8")
    else:
        request.onnx = data


def _set_topology(request, devices, topology_json):
    if devices and topology_json:
        raise ValueError("give devices or topology_json, not both")
    if devices:
        request.topology.shorthand = devices
    elif topology_json:
        request.topology.json = topology_json


class PlacementClient:
    """One channel to a server; the methods return the response messages and raise grpc.RpcError on failure."""

    def __init__(self, address, timeout=60.0, channel=None, token=None, root_certificates=None,
                 certificate_chain=None, private_key=None):
        """TLS when root_certificates (PEM bytes of the CA) or a client certificate is given, mutual TLS with
        certificate_chain and private_key; token: the bearer token (default: $PLACEMENT_AUTH_TOKEN), sent with
        every call as "authorization: Bearer <token>"."""
        self.address = address
        self.timeout = timeout
        token = token if token is not None else os.environ.get("PLACEMENT_AUTH_TOKEN", "")
        self._auth = (("authorization", "Bearer " + token),) if token else ()
        options = [("grpc.max_receive_message_length", _MAX_MESSAGE_BYTES),
                   ("grpc.max_send_message_length", _MAX_MESSAGE_BYTES)]
        if channel is None and (root_certificates or certificate_chain):
            credentials = grpc.ssl_channel_credentials(root_certificates=root_certificates, private_key=private_key,
                                                       certificate_chain=certificate_chain)
            channel = grpc.secure_channel(address, credentials, options=options)
        self.channel = channel or grpc.insecure_channel(address, options=options)
        self.stub = pb_grpc.PlacementServiceStub(self.channel)

    def close(self):
        self.channel.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    @staticmethod
    def place_request(graph_path, devices=None, topology_json=None, objective="step_time", algorithm="auto",
                      budget_ms=0, training=False, batch_size=0, seed=0, skip_cache=False, dims=None,
                      costs_path=None, costs_kind="*", parallelism="operator", cost_model="default", schedule="1f1b",
                      global_batch=0):
        """A PlaceRequest for a graph file (ONNX, or JSON), sent as the file's bytes. `dims` maps a dimension's
        symbol, or "TENSOR:AXIS" for a size the data decides, to its value (ONNX only; docs/onnx.md).
        `costs_path` is a costs file or a profiler trace of measured times, `costs_kind` the device kind a trace
        was recorded on (docs/measured-costs.md). `parallelism` ("data", "pipeline", "hybrid"), `cost_model`
        ("pipedream"), `schedule` ("gpipe") and `global_batch` ask a throughput request for a plan of
        data-parallel stages (docs/parallel-plans.md); the answer lists its `stages`."""
        data, is_json = read_graph(graph_path)
        request = pb.PlaceRequest(objective=_OBJECTIVES[objective], algorithm=algorithm, budget_ms=budget_ms,
                                  seed=seed, skip_cache=skip_cache, parallelism=parallelism, cost_model=cost_model,
                                  schedule=schedule, global_batch=global_batch)
        _set_graph(request, data, is_json)
        _set_topology(request, devices, topology_json)
        request.options.training = training
        request.options.batch_size = batch_size
        request.options.dims.update(dims or {})
        if costs_path:
            with open(costs_path, encoding="utf-8") as f:
                request.options.costs = f.read()
            if costs_kind != "*":
                request.options.costs_kind = costs_kind
        return request

    @staticmethod
    def routing_metadata(request):
        """The x-graph-hash metadata for a PlaceRequest or SimulateRequest."""
        source = request.WhichOneof("graph_source")
        if source == "onnx":
            payload = request.onnx
        elif source == "graph_json":
            payload = request.graph_json
        else:  # a Graph message: its serialized bytes are what is sent
            payload = request.graph.SerializeToString(deterministic=True)
        return ((GRAPH_HASH_HEADER, graph_hash(payload)),)

    def _metadata(self, request=None):
        return self._auth + (self.routing_metadata(request) if request is not None else ())

    def place(self, request, timeout=None):
        return self.stub.Place(request, timeout=timeout or self.timeout, metadata=self._metadata(request))

    def place_stream(self, request, timeout=None):
        """Yields PlaceProgress messages; the last one (KIND_RESULT) holds the answer."""
        return self.stub.PlaceStream(request, timeout=timeout or self.timeout, metadata=self._metadata(request))

    def simulate(self, request, timeout=None):
        return self.stub.Simulate(request, timeout=timeout or self.timeout, metadata=self._metadata(request))

    def algorithms(self):
        return self.stub.ListAlgorithms(pb.ListAlgorithmsRequest(), timeout=self.timeout, metadata=self._metadata())

    def info(self):
        return self.stub.GetServerInfo(pb.GetServerInfoRequest(), timeout=self.timeout, metadata=self._metadata())
