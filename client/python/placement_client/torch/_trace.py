"""torch.fx tracing that remembers, for every node, the module scope torch.onnx names it by.

The exporter names an operator after the module calls it ran in: "/layer1/layer1.0/relu_1/Relu" is the second call
of layer1.0.relu. The tracer keeps the same key for every fx node (the module being called, with "_k" for its
(k+1)-th call), so that nodes and the answer's module map meet. A module whose forward cannot be traced
(data-dependent control flow) is traced again as one leaf and reported.
"""

from __future__ import annotations

import contextlib
import dis
import inspect
import operator
import sys
from dataclasses import dataclass
from typing import Any, Dict, Iterator, List, Optional, Sequence, Set, Tuple

import torch
from torch.fx._symbolic_trace import Tracer
from torch.fx.graph_module import GraphModule
from torch.fx.node import Node, map_aggregate
from torch.fx.proxy import Proxy

SCOPE = "placement_scope"  # node.meta key: the exporter's scope key of the module call the node belongs to


class _UntraceableModule(Exception):
    def __init__(self, path: str, cause: Exception) -> None:
        super().__init__(f"{path}: {cause}")
        self.path = path
        self.cause = cause


class ScopeTracer(Tracer):
    """symbolic_trace with each node's module scope in node.meta[SCOPE]; `leaves` are traced as single calls."""

    def __init__(self, leaves: Set[str]) -> None:
        super().__init__()
        self.leaves = leaves
        self.scope: List[str] = []
        self.calls: Dict[str, int] = {}

    def is_leaf_module(self, m: torch.nn.Module, qualname: str) -> bool:
        # torch.fx keeps every torch.nn module whole; those made of other modules (nn.TransformerEncoder and its
        # layers, which answers split) are entered like the model's own, and kept whole only if that fails.
        if qualname in self.leaves:
            return True
        return super().is_leaf_module(m, qualname) and next(m.children(), None) is None

    def call_module(self, m: torch.nn.Module, forward: Any, args: Any, kwargs: Any) -> Any:
        path = self.path_of_module(m)
        call = self.calls.get(path, 0)
        self.calls[path] = call + 1
        self.scope.append(path if call == 0 else f"{path}_{call}")
        try:
            return super().call_module(m, forward, args, kwargs)
        except _UntraceableModule:
            raise
        except Exception as e:  # noqa: BLE001 - any failure inside a module's forward names that module
            if self.is_leaf_module(m, path) or path == "":
                raise
            raise _UntraceableModule(path, e) from e
        finally:
            self.scope.pop()

    def create_node(self, *args: Any, **kwargs: Any) -> Node:
        node: Node = super().create_node(*args, **kwargs)
        node.meta[SCOPE] = self.scope[-1] if self.scope else ""
        return node


CONCRETE = "placement_concrete"  # node.meta key of ConcreteShapeTracer: the node's value on the example inputs
_SHAPE_METHODS = ("size", "dim", "numel")


class ConcreteShapeTracer(ScopeTracer):
    """A ScopeTracer that also runs every node on the example inputs, so that a model's own sizes (`x.shape[1]`,
    `x.size(0)`, `x.dim()`) are plain Python numbers while tracing: code that builds tensors from them
    (`torch.full((n, n), ...)`, a causal mask) traces, specialized to the example's shapes, as torch.onnx.export
    does. Used when plain symbolic tracing fails in the model's own forward."""

    def __init__(self, leaves: Set[str], example_inputs: Sequence[Any]) -> None:
        super().__init__(leaves)
        self.example_inputs = list(example_inputs)
        self.placeholders = 0
        self.evaluating = False  # running a leaf module on values: its children's calls are not traced

    def call_module(self, m: torch.nn.Module, forward: Any, args: Any, kwargs: Any) -> Any:
        if self.evaluating:
            return forward(*args, **kwargs)
        return super().call_module(m, forward, args, kwargs)

    def getattr(self, attr: str, attr_val: Any, parameter_proxy_cache: Dict[str, Any]) -> Any:
        if self.evaluating:  # a parameter read while running a module on values is the parameter itself
            return attr_val
        return super().getattr(attr, attr_val, parameter_proxy_cache)

    def _value(self, arg: Any) -> Any:
        return map_aggregate(
            arg, lambda a: a.node.meta[CONCRETE] if isinstance(a, Proxy) else a)

    def _evaluate(self, kind: str, target: Any, args: Any, kwargs: Any) -> Any:
        args, kwargs = self._value(args), self._value(kwargs)
        if kind == "placeholder":
            self.placeholders += 1
            return self.example_inputs[self.placeholders - 1]
        self.evaluating, outer = True, self.evaluating
        try:
            if kind == "get_attr":
                value = self.root
                for atom in target.split("."):
                    value = getattr(value, atom)
                return value
            if kind == "call_function":
                return target(*args, **kwargs)
            if kind == "call_method":
                return getattr(args[0], target)(*args[1:], **kwargs)
            if kind == "call_module":
                return self.root.get_submodule(target)(*args, **kwargs)
            return None
        finally:
            self.evaluating = outer

    def create_proxy(self, kind: str, target: Any, args: Any, kwargs: Any, *rest: Any, **more: Any) -> Any:
        with torch.no_grad():
            value = self._evaluate(kind, target, args, kwargs)
        is_size = isinstance(self._value(args[0]) if args else None, torch.Size)
        if (kind == "call_method" and target in _SHAPE_METHODS) or (target is operator.getitem and is_size):
            return value  # a plain number (or torch.Size): the graph keeps no node for it
        proxy = super().create_proxy(kind, target, args, kwargs, *rest, **more)
        proxy.node.meta[CONCRETE] = value
        return proxy


def _unpacking_iter(self: Proxy) -> Iterator[Any]:
    """`a, b = proxy` (a shape, a chunk, an attention's (output, weights)): torch.fx before 2.0 finds the
    UNPACK_SEQUENCE by an instruction index that Python 3.11's inline caches shifted, and fails; this finds it by
    its offset."""
    frame = inspect.currentframe()
    caller = frame.f_back if frame is not None else None
    if caller is not None:
        for inst in dis.get_instructions(caller.f_code):
            if inst.offset == caller.f_lasti and inst.opname == "UNPACK_SEQUENCE":
                return iter([self[i] for i in range(inst.argval)])  # type: ignore[index]
    return iter(self.tracer.iter(self))


@contextlib.contextmanager
def _python311_unpacking() -> Iterator[None]:
    original = Proxy.__iter__
    Proxy.__iter__ = _unpacking_iter
    try:
        yield
    finally:
        Proxy.__iter__ = original


@dataclass
class Traced:
    module: GraphModule
    untraced: List[str]           # modules kept whole because tracing could not enter them
    specialized: bool = False     # traced with concrete sizes: valid for inputs of the example's shapes


def trace(model: torch.nn.Module, example_inputs: Sequence[Any] = (), max_retries: int = 64) -> Traced:
    """The model traced by torch.fx, symbolically where it can be, else (given example inputs) with the
    example's concrete sizes. RuntimeError names what could not be traced."""
    patch = _python311_unpacking() if sys.version_info >= (3, 11) and torch.__version__ < "2" else contextlib.nullcontext()
    with patch:
        try:
            symbolic: Optional[Traced] = _trace_with(lambda leaves: ScopeTracer(leaves), model, max_retries, False)
            failure: Optional[Exception] = None
        except Exception as e:  # noqa: BLE001 - the model's own forward: try the example's sizes
            symbolic, failure = None, e
        if symbolic is not None and (not symbolic.untraced or not example_inputs):
            return symbolic
        if not example_inputs:
            raise RuntimeError(f"torch.fx cannot trace {type(model).__name__}.forward ({failure}); give example "
                               "inputs to trace it with their sizes") from failure
        # Modules whose code computes with sizes trace with the example's: fewer of them are kept whole.
        try:
            concrete = _trace_with(lambda leaves: ConcreteShapeTracer(leaves, example_inputs), model, max_retries, True)
        except Exception as e:  # noqa: BLE001
            if symbolic is not None:
                return symbolic
            raise RuntimeError(f"torch.fx cannot trace {type(model).__name__}.forward: {failure}; with the "
                               f"example's sizes: {e}") from e
        return concrete if symbolic is None or len(concrete.untraced) < len(symbolic.untraced) else symbolic


def _trace_with(make: Any, model: torch.nn.Module, max_retries: int, specialized: bool) -> Traced:
    leaves: Set[str] = set()
    for _ in range(max_retries):
        tracer = make(leaves)
        try:
            graph = tracer.trace(model)
        except _UntraceableModule as e:
            leaves.add(e.path)
            continue
        module = GraphModule(tracer.root, graph, model.__class__.__name__)
        if specialized:  # the size computations that became numbers left their shape reads unused
            module.graph.eliminate_dead_code()
            module.recompile()
        return Traced(module, sorted(leaves), specialized)
    raise RuntimeError(f"could not trace even with {sorted(leaves)} kept whole")


def module_key(node: Node) -> str:
    """The scope key of a node: for a module call, the call itself; for anything else, the module it ran in."""
    scope: Optional[str] = node.meta.get(SCOPE)
    return scope if scope is not None else ""
