"""Building requests from files: the graph bytes as sent, the cluster, the options, and the x-graph-hash value."""

from __future__ import annotations

import hashlib
import json
from typing import Mapping, Optional, Tuple, Union

from placement_client.proto import placement_pb2 as pb

GRAPH_HASH_HEADER = "x-graph-hash"

OBJECTIVES = {
    "step_time": pb.OBJECTIVE_STEP_TIME,
    "throughput": pb.OBJECTIVE_THROUGHPUT,
    "latency": pb.OBJECTIVE_LATENCY,
}

GraphRequest = Union[pb.PlaceRequest, pb.SimulateRequest]

# The top-level keys a Hugging Face config.json is told by when it names no model_type (graph/transformer_spec.h).
_CONFIG_LAYER_KEYS = ("n_layer", "num_hidden_layers", "num_layers")
_CONFIG_WIDTH_KEYS = ("n_embd", "hidden_size", "d_model")


def graph_hash(payload: Union[bytes, str]) -> str:
    """The x-graph-hash value for a graph payload (bytes, or JSON text encoded as UTF-8): lower-case hex SHA-256."""
    if isinstance(payload, str):
        payload = payload.encode("utf-8")
    return hashlib.sha256(payload).hexdigest()


def read_graph(path: str) -> Tuple[bytes, bool]:
    """A graph file's bytes and whether they go as text (graph_json: our JSON format, a Tarnawski graph, a
    PipeDream profile) rather than as ONNX bytes. An ONNX model starts with its ir_version field (0x08); any other
    file that is UTF-8 is text, and the server tells its format; anything else goes as bytes, and the server
    refuses it naming what it is not."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:1] == b"\x08":
        return data, False
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return data, False
    return data, True


def is_hf_config_text(data: bytes) -> bool:
    """Whether a file's bytes are a Hugging Face config.json, by placectl's rule (client/graph_loader.h
    IsHfConfigText): a JSON object of no graph format the server reads (placement.graph/v1 names its "format", a
    Tarnawski graph has nodes, edges and maxFPGAs) that has model_type, or a layer count and a width."""
    try:
        doc = json.loads(data)
    except ValueError:  # not UTF-8 or not JSON: ONNX bytes, a PipeDream profile
        return False
    if not isinstance(doc, dict) or doc.get("format") == "placement.graph/v1":
        return False
    if all(key in doc for key in ("nodes", "edges", "maxFPGAs")):
        return False
    return "model_type" in doc or (any(k in doc for k in _CONFIG_LAYER_KEYS)
                                   and any(k in doc for k in _CONFIG_WIDTH_KEYS))


def objective_value(name: str) -> pb.Objective:
    try:
        return OBJECTIVES[name]
    except KeyError:
        raise ValueError(f"objective '{name}' is not one of {', '.join(OBJECTIVES)}") from None


def set_graph(request: GraphRequest, data: bytes, is_json: bool) -> None:
    if is_json:
        request.graph_json = data.decode("utf-8")
    else:
        request.onnx = data


def set_topology(request: GraphRequest, devices: Optional[str], topology_json: Optional[str]) -> None:
    if devices and topology_json:
        raise ValueError("give devices or topology_json, not both")
    if devices:
        request.topology.shorthand = devices
    elif topology_json:
        request.topology.json = topology_json


def set_options(options: pb.GraphOptions, training: bool, batch_size: int, dims: Optional[Mapping[str, int]],
                costs_path: Optional[str], costs_kind: str, *, sequence_length: int = 0, precision: str = "",
                optimizer: str = "adam", backward_multiplier: float = 2.0, runtime: str = "eager") -> None:
    """The graph's options. The optimizer and the backward multiplier describe a training step: sent with
    `training` only, as placectl sends them; "eager", the default runtime, is left unset (as placectl does, so that
    the cache keys of requests without it stay the same)."""
    options.training = training
    options.batch_size = batch_size
    options.sequence_length = sequence_length
    options.precision = precision
    options.dims.update(dict(dims or {}))
    if training:
        options.optimizer = optimizer
        options.backward_multiplier = backward_multiplier
    if runtime != "eager":
        options.runtime = runtime
    if costs_path:
        with open(costs_path, encoding="utf-8") as f:
            options.costs = f.read()
        if costs_kind != "*":
            options.costs_kind = costs_kind


def set_onnx_options(options: pb.GraphOptions, *, allow_unresolved_dims: bool = False,
                     num_data_inputs: Optional[int] = None, loop_iterations: int = 0,
                     max_unrolled_nodes: int = 0) -> None:
    """How an ONNX model is read (docs/onnx.md): a dimension nothing resolves counted as 1; how many graph inputs
    without an initializer are data (None: the importer decides); the iterations assumed for a Loop the data
    bounds (0: 8); how far a Loop or Scan is unrolled (0: 20000 operators)."""
    options.allow_unresolved_dims = allow_unresolved_dims
    if num_data_inputs is not None:
        options.num_data_inputs = num_data_inputs
    options.loop_iterations = loop_iterations
    options.max_unrolled_nodes = max_unrolled_nodes


def routing_metadata(request: GraphRequest) -> Tuple[Tuple[str, str], ...]:
    """The x-graph-hash metadata for a PlaceRequest or SimulateRequest: the hash of the graph payload as sent."""
    source = request.WhichOneof("graph_source")
    payload: Union[bytes, str]
    if source == "onnx":
        payload = request.onnx
    elif source == "graph_json":
        payload = request.graph_json
    elif source == "hf_config":
        payload = request.hf_config
    else:  # a Graph message: its serialized bytes are what is sent
        payload = request.graph.SerializeToString(deterministic=True)
    return ((GRAPH_HASH_HEADER, graph_hash(payload)),)


def place_request(graph_path: str, *, devices: Optional[str] = None, topology_json: Optional[str] = None,
                  objective: str = "step_time", algorithm: str = "auto", budget_ms: int = 0, training: bool = False,
                  batch_size: int = 0, seed: int = 0, skip_cache: bool = False,
                  dims: Optional[Mapping[str, int]] = None, costs_path: Optional[str] = None,
                  costs_kind: str = "*", cost_model: str = "", parallelism: str = "", schedule: str = "",
                  global_batch: int = 0, policy: str = "", sharding: str = "", recompute: str = "",
                  sequence_length: int = 0, precision: str = "", micro_batch_size: int = 0,
                  transformer_plan: str = "", optimizer: str = "adam", backward_multiplier: float = 2.0,
                  runtime: str = "eager", allow_unresolved_dims: bool = False,
                  num_data_inputs: Optional[int] = None, loop_iterations: int = 0,
                  max_unrolled_nodes: int = 0) -> pb.PlaceRequest:
    """A PlaceRequest for a graph file (ONNX, JSON or a PipeDream profile), sent as the file's bytes; a Hugging
    Face config.json (is_hf_config_text) goes as hf_config, answered with a transformer's training plan
    (answer.transformer; `batch_size` is then the global batch in sequences, `transformer_plan` the plan keys held
    fixed, e.g. "tp=2,pp=4"). `dims` maps a
    dimension's symbol, or "TENSOR:AXIS" for a size the data decides, to its value (ONNX only). `costs_path` is a
    costs file or a profiler trace of measured times, `costs_kind` the device kind a trace was recorded on.
    `cost_model` "tarnawski" (with objective "latency") scores with Tarnawski et al.'s latency model
    (docs/tarnawski-latency.md), "pipedream" PipeDream's planner's formulas for plans; "" is our own.
    `parallelism` ("data", "pipeline", "hybrid"), `schedule` ("gpipe") and `global_batch` ask a throughput request
    for a parallel plan, whose stages the answer lists (docs/parallel-plans.md); for a training step's plan,
    `sharding` ("zero1", "zero2", "zero3" or "fsdp", with a global batch) says what its replicas split and
    `recompute` ("full") what its backward recomputes. `policy` names one of the
    server's learned policies ("" its default; `info().policies` lists them). `sequence_length` binds an ONNX
    model's dimensions named like a sequence (0: 128); `precision` ("amp_bf16", "amp_fp16", "bf16", "fp16"; ""
    for fp32) sets the bytes of its tensors, weights and optimizer state (docs/memory.md). `micro_batch_size`
    splits the global batch `batch_size` of a training step's default plan (parallelism "auto", or left to the
    server) into micro-batches of that many samples (0: the batch over the accelerators). `optimizer` ("sgd",
    "momentum", "adam") and `backward_multiplier` describe a training step, `runtime` ("eager", "graphs") how it
    issues its operators; the ONNX options are set_onnx_options's."""
    data, is_json = read_graph(graph_path)
    request = pb.PlaceRequest(objective=objective_value(objective), algorithm=algorithm, budget_ms=budget_ms,
                              seed=seed, skip_cache=skip_cache, cost_model=cost_model, parallelism=parallelism,
                              schedule=schedule, global_batch=global_batch, policy=policy, sharding=sharding,
                              recompute=recompute, micro_batch_size=micro_batch_size,
                              transformer_plan=transformer_plan)
    if is_json and is_hf_config_text(data):
        request.hf_config = data.decode("utf-8")
    else:
        set_graph(request, data, is_json)
    set_topology(request, devices, topology_json)
    set_options(request.options, training, batch_size, dims, costs_path, costs_kind, sequence_length=sequence_length,
                precision=precision, optimizer=optimizer, backward_multiplier=backward_multiplier, runtime=runtime)
    set_onnx_options(request.options, allow_unresolved_dims=allow_unresolved_dims, num_data_inputs=num_data_inputs,
                     loop_iterations=loop_iterations, max_unrolled_nodes=max_unrolled_nodes)
    return request


def simulate_request(graph_path: str, placement_json: str, *, devices: Optional[str] = None,
                     topology_json: Optional[str] = None, objective: str = "step_time", training: bool = False,
                     batch_size: int = 0, dims: Optional[Mapping[str, int]] = None,
                     costs_path: Optional[str] = None, costs_kind: str = "*") -> pb.SimulateRequest:
    """A SimulateRequest scoring `placement_json` ({"assignment": {op: device}}, or what a Place answer's JSON
    holds) for a graph file."""
    data, is_json = read_graph(graph_path)
    request = pb.SimulateRequest(objective=objective_value(objective), placement_json=placement_json)
    set_graph(request, data, is_json)
    set_topology(request, devices, topology_json)
    set_options(request.options, training, batch_size, dims, costs_path, costs_kind)
    return request
