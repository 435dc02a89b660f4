"""A PyTorch model split by a placement answer: which device runs each fx node, the parts torch's split_module
makes of them, and a module that runs the parts in dependency order."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

import torch
from torch.fx.graph_module import GraphModule
from torch.fx.node import Node
from torch.fx.passes.shape_prop import ShapeProp
from torch.fx.passes.split_module import split_module

from placement_client.torch._answer import AnswerMismatch, ModuleMap, module_devices, segments
from placement_client.torch._trace import module_key, trace

# Modules the exporter folds into their neighbour or drops in eval mode: no operator carries their name, so they
# run where the operator they feed or follow runs.
FOLDED_TYPES = (torch.nn.modules.batchnorm._BatchNorm, torch.nn.Dropout, torch.nn.Identity)


@dataclass
class Crossing:
    """A tensor that one part (None: the model's input) hands to a later part."""
    name: str
    source: Optional[int]
    destination: int
    shape: Optional[Tuple[int, ...]] = None
    bytes: int = 0


def _node_devices(gm: GraphModule, placed: ModuleMap) -> Dict[Node, str]:
    """The device of every computing node: its module's entry (or its nearest listed ancestor's); for a module
    kept whole that the answer splits, where the answer runs its first part; for a module the exporter folded away
    (a BatchNorm in a module the answer divides), the device of the node it reads from, else of its first user.
    The operations in the own scope of a module the answer divides (a residual Add, the class token a ViT prepends,
    the token it reads out at the end) run on the module's entry where one of their operands is, else with their
    operands: the entry names where most of the module's own FLOPs run, and a cheap operation sent there alone
    would carry tensors back and forth between devices."""
    device: Dict[Node, str] = {}
    follow: List[Node] = []
    preferred: Dict[Node, str] = {}
    for node in gm.graph.nodes:
        if node.op in ("placeholder", "get_attr", "output"):
            continue
        path = module_key(node)
        folded = node.op == "call_module" and isinstance(gm.get_submodule(node.target), FOLDED_TYPES)
        key = placed.covering(path)
        if key is not None and node.op != "call_module" and placed.is_divided_here(key, path):
            follow.append(node)  # an operation of a module the answer divides: it runs with its operands,
            preferred[node] = placed.device[key]  # on the module's own device where an operand is there
            continue
        if key is not None and (not folded or placed.is_exact_or_undivided(key, path)):
            whole = placed.first_within(path) if node.op == "call_module" else None
            device[node] = placed.device[key] if whole is None else whole
            if whole is not None and placed.splits(path):
                warnings.warn(f"torch.fx cannot trace into '{path}': it is kept whole on {whole}, though the "
                              "answer splits it", stacklevel=3)
            continue
        if key is None and node.op == "call_module" and not folded:
            raise AnswerMismatch(f"the answer leaves module '{path}' unplaced (neither it nor a module around it "
                                 "has an entry in the answer's module map): is the answer for this model?")
        follow.append(node)
    _follow_neighbours(follow, device, placed, preferred)
    return device


def _follow_neighbours(nodes: List[Node], device: Dict[Node, str], placed: ModuleMap,
                       preferred: Dict[Node, str]) -> None:
    """Nodes no entry places (folded modules, size computations, a divided module's own operations) run where what
    they read runs (on their `preferred` device when one of their operands is there, else where the first is),
    else where their first placed user runs."""
    pending = []
    for node in nodes:
        sources = [device[a] for a in node.all_input_nodes if a in device]
        if sources:
            device[node] = preferred[node] if preferred.get(node) in sources else sources[0]
        else:
            pending.append(node)
    for node in reversed(pending):
        users = [u for u in node.users if u in device]
        device[node] = device[users[0]] if users else next(iter(placed.device.values()))


def _check_answer_modules(gm: GraphModule, pairs: Sequence[Tuple[str, str]]) -> None:
    """Every module the answer places is one the model calls: a traced call (or one of its callees), or a module
    inside one that was traced as a whole."""
    keys = {segments(module_key(n)) for n in gm.graph.nodes}
    whole = {segments(module_key(n)) for n in gm.graph.nodes if n.op == "call_module"}
    for module, _ in pairs:
        wanted = segments(module)
        if any(k[:len(wanted)] == wanted for k in keys):
            continue
        if any(wanted[:len(k)] == k for k in whole) and _has_submodule(gm, module):
            continue
        raise AnswerMismatch(f"the answer places module '{module}', which the model does not have (or never calls)")


def _has_submodule(gm: GraphModule, path: str) -> bool:
    """Whether `path`, or the module whose later call it names ("relu_1": relu), is a submodule."""
    for candidate in (path, path.rsplit("_", 1)[0]):
        try:
            gm.get_submodule(candidate)
            return True
        except AttributeError:
            pass
    return False


def _partitions(gm: GraphModule, device: Dict[Node, str]) -> Tuple[Dict[Node, int], List[str]]:
    """Part of every node and device of every part. A node joins the newest part of its device when everything it
    reads comes from parts no newer than that one; otherwise it opens a new part. Parts are numbered in an order
    where every tensor flows forward, so torch's split_module finds no cycle."""
    part: Dict[Node, int] = {}
    part_device: List[str] = []
    newest: Dict[str, int] = {}
    for node in gm.graph.nodes:
        if node not in device:
            continue
        reads = max((part[a] for a in node.all_input_nodes if a in part), default=-1)
        candidate = newest.get(device[node])
        if candidate is None or candidate < reads:
            candidate = len(part_device)
            part_device.append(device[node])
            newest[device[node]] = candidate
        part[node] = candidate
    return part, part_device


def _to_device(value: Any, device: torch.device) -> Any:
    if isinstance(value, torch.Tensor):
        return value.to(device)
    if isinstance(value, (tuple, list)):
        return type(value)(_to_device(v, device) for v in value)
    if isinstance(value, dict):
        return {k: _to_device(v, device) for k, v in value.items()}
    return value


class OnDevice(torch.nn.Module):
    """A part that runs on a torch device: its inputs are moved there first (the transfers of the placement)."""

    def __init__(self, part: torch.nn.Module, device: torch.device) -> None:
        super().__init__()
        self.part = part.to(device)
        self.device = device

    def forward(self, *args: Any) -> Any:
        return self.part(*_to_device(args, self.device))


class SplitModule(torch.nn.Module):
    """The model as parts that run one after another, each on the device the answer gave it.

    parts: (answer's device name, submodule) per part, in the order they run; crossings: the tensors that move
    from one part (or the input) to a later one; untraced: modules kept whole because tracing could not enter
    them. Calling it gives the original model's outputs."""

    def __init__(self, split: GraphModule, part_device: List[str], crossings: List[Crossing],
                 untraced: List[str]) -> None:
        super().__init__()
        self.split = split
        self.part_names = [f"submod_{i}" for i in range(len(part_device))]
        self.part_devices = part_device
        self.crossings = crossings
        self.untraced = untraced
        self.specialized = False  # traced with the example inputs' sizes (see trace())

    @property
    def parts(self) -> List[Tuple[str, torch.nn.Module]]:
        return [(d, getattr(self.split, name)) for d, name in zip(self.part_devices, self.part_names)]

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self.split(*args, **kwargs)

    def place(self, devices: Mapping[str, Any]) -> "SplitModule":
        """Moves every part to devices[its answer device] (a torch.device or a name like "cuda:1"): parameters
        go there once, and each part's inputs move there on every call. Returns self."""
        unknown = sorted(set(devices) - set(self.part_devices))
        if unknown:
            raise AnswerMismatch(f"devices= names {unknown}, which the answer does not use (it uses "
                                 f"{sorted(set(self.part_devices))})")
        missing = sorted(set(self.part_devices) - set(devices))
        if missing:
            raise AnswerMismatch(f"devices= does not say where the answer's {missing} are")
        _check_shared_parameters(self.parts, devices)
        for name, device in zip(self.part_names, self.part_devices):
            setattr(self.split, name, OnDevice(getattr(self.split, name), torch.device(devices[device])))
        return self


def _check_shared_parameters(parts: List[Tuple[str, torch.nn.Module]], devices: Mapping[str, Any]) -> None:
    """A parameter used by parts on two torch devices cannot live on both."""
    where: Dict[int, Tuple[str, torch.device]] = {}
    for device_name, module in parts:
        target = torch.device(devices[device_name])
        for name, p in module.named_parameters():
            seen = where.setdefault(id(p), (name, target))
            if seen[1] != target:
                raise AnswerMismatch(f"parameter '{name}' is used on {seen[1]} and on {target}: the answer "
                                     "splits a module that is called more than once")


def _crossings(split: GraphModule, part_count: int) -> List[Crossing]:
    """Which values the split's top-level graph passes between parts, with shapes when ShapeProp ran."""
    producer: Dict[str, Optional[int]] = {}
    out: List[Crossing] = []
    for node in split.graph.nodes:
        if node.op == "placeholder":
            producer[node.name] = None
        elif node.op == "call_module" and node.target.startswith("submod_"):
            index = int(node.target[len("submod_"):])
            for arg in node.all_input_nodes:
                meta = arg.meta.get("tensor_meta")
                shape = tuple(meta.shape) if hasattr(meta, "shape") else None
                size = int(torch.Size(shape).numel()) * _itemsize(meta) if shape is not None else 0
                out.append(Crossing(arg.name, producer.get(arg.name), index, shape, size))
            producer[node.name] = index
        elif node.op == "call_function":  # getitem of a part's tuple of outputs
            producer[node.name] = next((producer.get(a.name) for a in node.all_input_nodes), None)
    return out


def _itemsize(meta: Any) -> int:
    dtype = getattr(meta, "dtype", torch.float32)
    return torch.empty((), dtype=dtype).element_size()


def split(model: torch.nn.Module, answer: Any, example_inputs: Sequence[Any] = (),
          devices: Optional[Mapping[str, Any]] = None) -> SplitModule:
    """Splits `model` by the answer's module map (a PlaceResponse, placectl's JSON, or {module: device}): traces it
    with torch.fx, gives every node its module's device, and cuts it into parts with torch's split_module.
    example_inputs (optional) give the crossing tensors their shapes. Parts stay where the model is unless
    `devices` maps the answer's device names to torch devices (see SplitModule.place)."""
    pairs = module_devices(answer)
    traced = trace(model, example_inputs)
    gm, untraced = traced.module, traced.untraced
    if traced.specialized:
        warnings.warn(f"{type(model).__name__}.forward computes with its inputs' sizes: the split is traced with the "
                      "example inputs' sizes and runs inputs of those shapes", stacklevel=2)
    _check_answer_modules(gm, pairs)
    device = _node_devices(gm, ModuleMap(pairs))
    part, part_device = _partitions(gm, device)
    result = split_module(gm, model, lambda node: part[node], keep_original_order=True)
    if example_inputs:
        with torch.no_grad():
            ShapeProp(result).propagate(*example_inputs)
    module = SplitModule(result, part_device, _crossings(result, len(part_device)), untraced)
    module.specialized = traced.specialized
    return module.place(devices) if devices is not None else module
