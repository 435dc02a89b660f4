from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor
DEVICE_TYPE_ACCELERATOR: DeviceType
DEVICE_TYPE_CPU: DeviceType
OBJECTIVE_LATENCY: Objective
OBJECTIVE_STEP_TIME: Objective
OBJECTIVE_THROUGHPUT: Objective

class AlgorithmInfo(_message.Message):
    __slots__ = ["description", "name", "objectives"]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    OBJECTIVES_FIELD_NUMBER: _ClassVar[int]
    description: str
    name: str
    objectives: _containers.RepeatedScalarFieldContainer[Objective]
    def __init__(self, name: _Optional[str] = ..., description: _Optional[str] = ..., objectives: _Optional[_Iterable[_Union[Objective, str]]] = ...) -> None: ...

class Assignment(_message.Message):
    __slots__ = ["device", "op"]
    DEVICE_FIELD_NUMBER: _ClassVar[int]
    OP_FIELD_NUMBER: _ClassVar[int]
    device: str
    op: str
    def __init__(self, op: _Optional[str] = ..., device: _Optional[str] = ...) -> None: ...

class CostSources(_message.Message):
    __slots__ = ["measured_flops_share", "measured_operators", "modelled_operators"]
    MEASURED_FLOPS_SHARE_FIELD_NUMBER: _ClassVar[int]
    MEASURED_OPERATORS_FIELD_NUMBER: _ClassVar[int]
    MODELLED_OPERATORS_FIELD_NUMBER: _ClassVar[int]
    measured_flops_share: float
    measured_operators: int
    modelled_operators: int
    def __init__(self, measured_operators: _Optional[int] = ..., modelled_operators: _Optional[int] = ..., measured_flops_share: _Optional[float] = ...) -> None: ...

class Device(_message.Message):
    __slots__ = ["host", "kind", "launch_overhead", "memory_bandwidth", "memory_bytes", "name", "peak_flops", "type"]
    HOST_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    LAUNCH_OVERHEAD_FIELD_NUMBER: _ClassVar[int]
    MEMORY_BANDWIDTH_FIELD_NUMBER: _ClassVar[int]
    MEMORY_BYTES_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    PEAK_FLOPS_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    host: int
    kind: str
    launch_overhead: float
    memory_bandwidth: float
    memory_bytes: int
    name: str
    peak_flops: float
    type: DeviceType
    def __init__(self, name: _Optional[str] = ..., kind: _Optional[str] = ..., type: _Optional[_Union[DeviceType, str]] = ..., peak_flops: _Optional[float] = ..., memory_bandwidth: _Optional[float] = ..., memory_bytes: _Optional[int] = ..., host: _Optional[int] = ..., launch_overhead: _Optional[float] = ...) -> None: ...

class DeviceScore(_message.Message):
    __slots__ = ["busy_seconds", "capacity_bytes", "device", "load_seconds", "out_of_memory", "peak_memory_bytes", "utilization"]
    BUSY_SECONDS_FIELD_NUMBER: _ClassVar[int]
    CAPACITY_BYTES_FIELD_NUMBER: _ClassVar[int]
    DEVICE_FIELD_NUMBER: _ClassVar[int]
    LOAD_SECONDS_FIELD_NUMBER: _ClassVar[int]
    OUT_OF_MEMORY_FIELD_NUMBER: _ClassVar[int]
    PEAK_MEMORY_BYTES_FIELD_NUMBER: _ClassVar[int]
    UTILIZATION_FIELD_NUMBER: _ClassVar[int]
    busy_seconds: float
    capacity_bytes: int
    device: str
    load_seconds: float
    out_of_memory: bool
    peak_memory_bytes: int
    utilization: float
    def __init__(self, device: _Optional[str] = ..., busy_seconds: _Optional[float] = ..., load_seconds: _Optional[float] = ..., peak_memory_bytes: _Optional[int] = ..., capacity_bytes: _Optional[int] = ..., out_of_memory: bool = ..., utilization: _Optional[float] = ...) -> None: ...

class Edge(_message.Message):
    __slots__ = ["bytes", "dst", "src", "src_output"]
    BYTES_FIELD_NUMBER: _ClassVar[int]
    DST_FIELD_NUMBER: _ClassVar[int]
    SRC_FIELD_NUMBER: _ClassVar[int]
    SRC_OUTPUT_FIELD_NUMBER: _ClassVar[int]
    bytes: int
    dst: str
    src: str
    src_output: int
    def __init__(self, src: _Optional[str] = ..., src_output: _Optional[int] = ..., dst: _Optional[str] = ..., bytes: _Optional[int] = ...) -> None: ...

class GetServerInfoRequest(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class GetServerInfoResponse(_message.Message):
    __slots__ = ["cache_capacity_bytes", "limits", "policy_device", "policy_version", "ready", "torch_version", "version"]
    CACHE_CAPACITY_BYTES_FIELD_NUMBER: _ClassVar[int]
    LIMITS_FIELD_NUMBER: _ClassVar[int]
    POLICY_DEVICE_FIELD_NUMBER: _ClassVar[int]
    POLICY_VERSION_FIELD_NUMBER: _ClassVar[int]
    READY_FIELD_NUMBER: _ClassVar[int]
    TORCH_VERSION_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    cache_capacity_bytes: int
    limits: ServerLimits
    policy_device: str
    policy_version: str
    ready: bool
    torch_version: str
    version: str
    def __init__(self, version: _Optional[str] = ..., policy_version: _Optional[str] = ..., policy_device: _Optional[str] = ..., torch_version: _Optional[str] = ..., limits: _Optional[_Union[ServerLimits, _Mapping]] = ..., ready: bool = ..., cache_capacity_bytes: _Optional[int] = ...) -> None: ...

class Graph(_message.Message):
    __slots__ = ["edges", "operators"]
    EDGES_FIELD_NUMBER: _ClassVar[int]
    OPERATORS_FIELD_NUMBER: _ClassVar[int]
    edges: _containers.RepeatedCompositeFieldContainer[Edge]
    operators: _containers.RepeatedCompositeFieldContainer[Operator]
    def __init__(self, operators: _Optional[_Iterable[_Union[Operator, _Mapping]]] = ..., edges: _Optional[_Iterable[_Union[Edge, _Mapping]]] = ...) -> None: ...

class GraphOptions(_message.Message):
    __slots__ = ["allow_unresolved_dims", "backward_multiplier", "batch_size", "costs", "costs_kind", "dims", "loop_iterations", "max_unrolled_nodes", "num_data_inputs", "optimizer", "sequence_length", "training"]
    class DimsEntry(_message.Message):
        __slots__ = ["key", "value"]
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    ALLOW_UNRESOLVED_DIMS_FIELD_NUMBER: _ClassVar[int]
    BACKWARD_MULTIPLIER_FIELD_NUMBER: _ClassVar[int]
    BATCH_SIZE_FIELD_NUMBER: _ClassVar[int]
    COSTS_FIELD_NUMBER: _ClassVar[int]
    COSTS_KIND_FIELD_NUMBER: _ClassVar[int]
    DIMS_FIELD_NUMBER: _ClassVar[int]
    LOOP_ITERATIONS_FIELD_NUMBER: _ClassVar[int]
    MAX_UNROLLED_NODES_FIELD_NUMBER: _ClassVar[int]
    NUM_DATA_INPUTS_FIELD_NUMBER: _ClassVar[int]
    OPTIMIZER_FIELD_NUMBER: _ClassVar[int]
    SEQUENCE_LENGTH_FIELD_NUMBER: _ClassVar[int]
    TRAINING_FIELD_NUMBER: _ClassVar[int]
    allow_unresolved_dims: bool
    backward_multiplier: float
    batch_size: int
    costs: str
    costs_kind: str
    dims: _containers.ScalarMap[str, int]
    loop_iterations: int
    max_unrolled_nodes: int
    num_data_inputs: int
    optimizer: str
    sequence_length: int
    training: bool
    def __init__(self, batch_size: _Optional[int] = ..., sequence_length: _Optional[int] = ..., training: bool = ..., optimizer: _Optional[str] = ..., backward_multiplier: _Optional[float] = ..., dims: _Optional[_Mapping[str, int]] = ..., allow_unresolved_dims: bool = ..., num_data_inputs: _Optional[int] = ..., loop_iterations: _Optional[int] = ..., max_unrolled_nodes: _Optional[int] = ..., costs: _Optional[str] = ..., costs_kind: _Optional[str] = ...) -> None: ...

class ListAlgorithmsRequest(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class ListAlgorithmsResponse(_message.Message):
    __slots__ = ["algorithms", "default_algorithm"]
    ALGORITHMS_FIELD_NUMBER: _ClassVar[int]
    DEFAULT_ALGORITHM_FIELD_NUMBER: _ClassVar[int]
    algorithms: _containers.RepeatedCompositeFieldContainer[AlgorithmInfo]
    default_algorithm: str
    def __init__(self, algorithms: _Optional[_Iterable[_Union[AlgorithmInfo, _Mapping]]] = ..., default_algorithm: _Optional[str] = ...) -> None: ...

class MeasuredTime(_message.Message):
    __slots__ = ["device_kind", "seconds"]
    DEVICE_KIND_FIELD_NUMBER: _ClassVar[int]
    SECONDS_FIELD_NUMBER: _ClassVar[int]
    device_kind: str
    seconds: float
    def __init__(self, device_kind: _Optional[str] = ..., seconds: _Optional[float] = ...) -> None: ...

class ModulePlacement(_message.Message):
    __slots__ = ["device", "module"]
    DEVICE_FIELD_NUMBER: _ClassVar[int]
    MODULE_FIELD_NUMBER: _ClassVar[int]
    device: str
    module: str
    def __init__(self, module: _Optional[str] = ..., device: _Optional[str] = ...) -> None: ...

class Operator(_message.Message):
    __slots__ = ["bytes_accessed", "colocation_group", "flops", "is_backward", "measured", "name", "op_type", "outputs", "param_bytes", "pinned_device", "temp_bytes"]
    BYTES_ACCESSED_FIELD_NUMBER: _ClassVar[int]
    COLOCATION_GROUP_FIELD_NUMBER: _ClassVar[int]
    FLOPS_FIELD_NUMBER: _ClassVar[int]
    IS_BACKWARD_FIELD_NUMBER: _ClassVar[int]
    MEASURED_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    OP_TYPE_FIELD_NUMBER: _ClassVar[int]
    OUTPUTS_FIELD_NUMBER: _ClassVar[int]
    PARAM_BYTES_FIELD_NUMBER: _ClassVar[int]
    PINNED_DEVICE_FIELD_NUMBER: _ClassVar[int]
    TEMP_BYTES_FIELD_NUMBER: _ClassVar[int]
    bytes_accessed: float
    colocation_group: str
    flops: float
    is_backward: bool
    measured: _containers.RepeatedCompositeFieldContainer[MeasuredTime]
    name: str
    op_type: str
    outputs: _containers.RepeatedCompositeFieldContainer[OutputTensor]
    param_bytes: int
    pinned_device: str
    temp_bytes: int
    def __init__(self, name: _Optional[str] = ..., op_type: _Optional[str] = ..., measured: _Optional[_Iterable[_Union[MeasuredTime, _Mapping]]] = ..., flops: _Optional[float] = ..., bytes_accessed: _Optional[float] = ..., param_bytes: _Optional[int] = ..., temp_bytes: _Optional[int] = ..., outputs: _Optional[_Iterable[_Union[OutputTensor, _Mapping]]] = ..., colocation_group: _Optional[str] = ..., pinned_device: _Optional[str] = ..., is_backward: bool = ...) -> None: ...

class OutputTensor(_message.Message):
    __slots__ = ["bytes", "transfer_seconds"]
    BYTES_FIELD_NUMBER: _ClassVar[int]
    TRANSFER_SECONDS_FIELD_NUMBER: _ClassVar[int]
    bytes: int
    transfer_seconds: float
    def __init__(self, bytes: _Optional[int] = ..., transfer_seconds: _Optional[float] = ...) -> None: ...

class PlaceProgress(_message.Message):
    __slots__ = ["answer", "elapsed_seconds", "kind", "message"]
    class Kind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = []
    ANSWER_FIELD_NUMBER: _ClassVar[int]
    ELAPSED_SECONDS_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    KIND_HEARTBEAT: PlaceProgress.Kind
    KIND_IMPROVED: PlaceProgress.Kind
    KIND_RESULT: PlaceProgress.Kind
    KIND_STARTED: PlaceProgress.Kind
    KIND_UNSPECIFIED: PlaceProgress.Kind
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    answer: PlaceResponse
    elapsed_seconds: float
    kind: PlaceProgress.Kind
    message: str
    def __init__(self, kind: _Optional[_Union[PlaceProgress.Kind, str]] = ..., elapsed_seconds: _Optional[float] = ..., message: _Optional[str] = ..., answer: _Optional[_Union[PlaceResponse, _Mapping]] = ...) -> None: ...

class PlaceRequest(_message.Message):
    __slots__ = ["algorithm", "budget_ms", "graph", "graph_json", "objective", "onnx", "options", "seed", "simulator", "skip_cache", "topology"]
    ALGORITHM_FIELD_NUMBER: _ClassVar[int]
    BUDGET_MS_FIELD_NUMBER: _ClassVar[int]
    GRAPH_FIELD_NUMBER: _ClassVar[int]
    GRAPH_JSON_FIELD_NUMBER: _ClassVar[int]
    OBJECTIVE_FIELD_NUMBER: _ClassVar[int]
    ONNX_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    SIMULATOR_FIELD_NUMBER: _ClassVar[int]
    SKIP_CACHE_FIELD_NUMBER: _ClassVar[int]
    TOPOLOGY_FIELD_NUMBER: _ClassVar[int]
    algorithm: str
    budget_ms: int
    graph: Graph
    graph_json: str
    objective: Objective
    onnx: bytes
    options: GraphOptions
    seed: int
    simulator: SimulatorOptions
    skip_cache: bool
    topology: Topology
    def __init__(self, graph: _Optional[_Union[Graph, _Mapping]] = ..., onnx: _Optional[bytes] = ..., graph_json: _Optional[str] = ..., topology: _Optional[_Union[Topology, _Mapping]] = ..., objective: _Optional[_Union[Objective, str]] = ..., algorithm: _Optional[str] = ..., budget_ms: _Optional[int] = ..., options: _Optional[_Union[GraphOptions, _Mapping]] = ..., seed: _Optional[int] = ..., simulator: _Optional[_Union[SimulatorOptions, _Mapping]] = ..., skip_cache: bool = ...) -> None: ...

class PlaceResponse(_message.Message):
    __slots__ = ["algorithm", "assignment", "best_bound", "cache_hit", "compute_seconds", "cost_sources", "graph_hash", "modules", "notes", "num_devices", "num_operators", "policy_version", "proven_optimal", "request_id", "score", "warnings"]
    ALGORITHM_FIELD_NUMBER: _ClassVar[int]
    ASSIGNMENT_FIELD_NUMBER: _ClassVar[int]
    BEST_BOUND_FIELD_NUMBER: _ClassVar[int]
    CACHE_HIT_FIELD_NUMBER: _ClassVar[int]
    COMPUTE_SECONDS_FIELD_NUMBER: _ClassVar[int]
    COST_SOURCES_FIELD_NUMBER: _ClassVar[int]
    GRAPH_HASH_FIELD_NUMBER: _ClassVar[int]
    MODULES_FIELD_NUMBER: _ClassVar[int]
    NOTES_FIELD_NUMBER: _ClassVar[int]
    NUM_DEVICES_FIELD_NUMBER: _ClassVar[int]
    NUM_OPERATORS_FIELD_NUMBER: _ClassVar[int]
    POLICY_VERSION_FIELD_NUMBER: _ClassVar[int]
    PROVEN_OPTIMAL_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    WARNINGS_FIELD_NUMBER: _ClassVar[int]
    algorithm: str
    assignment: _containers.RepeatedCompositeFieldContainer[Assignment]
    best_bound: float
    cache_hit: bool
    compute_seconds: float
    cost_sources: CostSources
    graph_hash: str
    modules: _containers.RepeatedCompositeFieldContainer[ModulePlacement]
    notes: _containers.RepeatedScalarFieldContainer[str]
    num_devices: int
    num_operators: int
    policy_version: str
    proven_optimal: bool
    request_id: str
    score: Score
    warnings: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, assignment: _Optional[_Iterable[_Union[Assignment, _Mapping]]] = ..., score: _Optional[_Union[Score, _Mapping]] = ..., algorithm: _Optional[str] = ..., graph_hash: _Optional[str] = ..., cache_hit: bool = ..., policy_version: _Optional[str] = ..., warnings: _Optional[_Iterable[str]] = ..., proven_optimal: bool = ..., best_bound: _Optional[float] = ..., notes: _Optional[_Iterable[str]] = ..., request_id: _Optional[str] = ..., num_operators: _Optional[int] = ..., num_devices: _Optional[int] = ..., compute_seconds: _Optional[float] = ..., cost_sources: _Optional[_Union[CostSources, _Mapping]] = ..., modules: _Optional[_Iterable[_Union[ModulePlacement, _Mapping]]] = ...) -> None: ...

class Score(_message.Message):
    __slots__ = ["critical_path", "devices", "fits_memory", "largest_unit", "lower_bound", "min_devices_for_memory", "objective", "ratio", "time_unit", "value", "work_per_device"]
    CRITICAL_PATH_FIELD_NUMBER: _ClassVar[int]
    DEVICES_FIELD_NUMBER: _ClassVar[int]
    FITS_MEMORY_FIELD_NUMBER: _ClassVar[int]
    LARGEST_UNIT_FIELD_NUMBER: _ClassVar[int]
    LOWER_BOUND_FIELD_NUMBER: _ClassVar[int]
    MIN_DEVICES_FOR_MEMORY_FIELD_NUMBER: _ClassVar[int]
    OBJECTIVE_FIELD_NUMBER: _ClassVar[int]
    RATIO_FIELD_NUMBER: _ClassVar[int]
    TIME_UNIT_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    WORK_PER_DEVICE_FIELD_NUMBER: _ClassVar[int]
    critical_path: float
    devices: _containers.RepeatedCompositeFieldContainer[DeviceScore]
    fits_memory: bool
    largest_unit: float
    lower_bound: float
    min_devices_for_memory: int
    objective: Objective
    ratio: float
    time_unit: str
    value: float
    work_per_device: float
    def __init__(self, objective: _Optional[_Union[Objective, str]] = ..., value: _Optional[float] = ..., lower_bound: _Optional[float] = ..., ratio: _Optional[float] = ..., fits_memory: bool = ..., devices: _Optional[_Iterable[_Union[DeviceScore, _Mapping]]] = ..., time_unit: _Optional[str] = ..., critical_path: _Optional[float] = ..., work_per_device: _Optional[float] = ..., largest_unit: _Optional[float] = ..., min_devices_for_memory: _Optional[int] = ...) -> None: ...

class ServerLimits(_message.Message):
    __slots__ = ["default_budget_ms", "max_budget_ms", "max_devices", "max_edges", "max_message_bytes", "max_operators", "max_queued_requests", "worker_threads"]
    DEFAULT_BUDGET_MS_FIELD_NUMBER: _ClassVar[int]
    MAX_BUDGET_MS_FIELD_NUMBER: _ClassVar[int]
    MAX_DEVICES_FIELD_NUMBER: _ClassVar[int]
    MAX_EDGES_FIELD_NUMBER: _ClassVar[int]
    MAX_MESSAGE_BYTES_FIELD_NUMBER: _ClassVar[int]
    MAX_OPERATORS_FIELD_NUMBER: _ClassVar[int]
    MAX_QUEUED_REQUESTS_FIELD_NUMBER: _ClassVar[int]
    WORKER_THREADS_FIELD_NUMBER: _ClassVar[int]
    default_budget_ms: int
    max_budget_ms: int
    max_devices: int
    max_edges: int
    max_message_bytes: int
    max_operators: int
    max_queued_requests: int
    worker_threads: int
    def __init__(self, max_message_bytes: _Optional[int] = ..., max_operators: _Optional[int] = ..., max_edges: _Optional[int] = ..., max_devices: _Optional[int] = ..., default_budget_ms: _Optional[int] = ..., max_budget_ms: _Optional[int] = ..., worker_threads: _Optional[int] = ..., max_queued_requests: _Optional[int] = ...) -> None: ...

class SimulateRequest(_message.Message):
    __slots__ = ["assignment", "graph", "graph_json", "objective", "onnx", "options", "placement_json", "simulator", "topology"]
    ASSIGNMENT_FIELD_NUMBER: _ClassVar[int]
    GRAPH_FIELD_NUMBER: _ClassVar[int]
    GRAPH_JSON_FIELD_NUMBER: _ClassVar[int]
    OBJECTIVE_FIELD_NUMBER: _ClassVar[int]
    ONNX_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    PLACEMENT_JSON_FIELD_NUMBER: _ClassVar[int]
    SIMULATOR_FIELD_NUMBER: _ClassVar[int]
    TOPOLOGY_FIELD_NUMBER: _ClassVar[int]
    assignment: _containers.RepeatedCompositeFieldContainer[Assignment]
    graph: Graph
    graph_json: str
    objective: Objective
    onnx: bytes
    options: GraphOptions
    placement_json: str
    simulator: SimulatorOptions
    topology: Topology
    def __init__(self, graph: _Optional[_Union[Graph, _Mapping]] = ..., onnx: _Optional[bytes] = ..., graph_json: _Optional[str] = ..., topology: _Optional[_Union[Topology, _Mapping]] = ..., objective: _Optional[_Union[Objective, str]] = ..., assignment: _Optional[_Iterable[_Union[Assignment, _Mapping]]] = ..., options: _Optional[_Union[GraphOptions, _Mapping]] = ..., simulator: _Optional[_Union[SimulatorOptions, _Mapping]] = ..., placement_json: _Optional[str] = ...) -> None: ...

class SimulateResponse(_message.Message):
    __slots__ = ["cost_sources", "graph_hash", "modules", "request_id", "score", "warnings"]
    COST_SOURCES_FIELD_NUMBER: _ClassVar[int]
    GRAPH_HASH_FIELD_NUMBER: _ClassVar[int]
    MODULES_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    WARNINGS_FIELD_NUMBER: _ClassVar[int]
    cost_sources: CostSources
    graph_hash: str
    modules: _containers.RepeatedCompositeFieldContainer[ModulePlacement]
    request_id: str
    score: Score
    warnings: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, score: _Optional[_Union[Score, _Mapping]] = ..., graph_hash: _Optional[str] = ..., warnings: _Optional[_Iterable[str]] = ..., request_id: _Optional[str] = ..., cost_sources: _Optional[_Union[CostSources, _Mapping]] = ..., modules: _Optional[_Iterable[_Union[ModulePlacement, _Mapping]]] = ...) -> None: ...

class SimulatorOptions(_message.Message):
    __slots__ = ["preset", "priority"]
    PRESET_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_FIELD_NUMBER: _ClassVar[int]
    preset: str
    priority: str
    def __init__(self, preset: _Optional[str] = ..., priority: _Optional[str] = ...) -> None: ...

class Topology(_message.Message):
    __slots__ = ["json", "shorthand"]
    JSON_FIELD_NUMBER: _ClassVar[int]
    SHORTHAND_FIELD_NUMBER: _ClassVar[int]
    json: str
    shorthand: str
    def __init__(self, shorthand: _Optional[str] = ..., json: _Optional[str] = ...) -> None: ...

class DeviceType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class Objective(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []
