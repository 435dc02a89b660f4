"""The split model as a pipeline: one process per part (a stage), each pinned to its own cores, micro-batches
flowing through them over torch.distributed (gloo on CPU), fill-drain: every stage runs micro-batch i as soon as
its inputs for i have arrived, so stage k works on i while stage k+1 works on i-1."""

from __future__ import annotations

import os
import socket
import sys
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.multiprocessing.spawn import spawn
from torch.fx.graph_module import GraphModule
from torch.fx.node import Node

from placement_client.torch._answer import AnswerMismatch, module_devices
from placement_client.torch._split import SplitModule, split


@dataclass
class PipelineRun:
    """What pipeline() measured: seconds per micro-batch in the steady state (the slope between runs of
    `micro_batches` and twice as many, so the pipeline's fill and drain cancel out), the seconds of each timed run,
    and the outputs of the last run's micro-batches (as the unsplit model would give them)."""
    seconds_per_micro_batch: float
    run_seconds: List[Tuple[int, float]] = field(default_factory=list)  # (micro-batches, seconds)
    outputs: List[Any] = field(default_factory=list)
    stages: List[str] = field(default_factory=list)  # the answer's device of each stage


@dataclass
class _Transfer:
    value: str      # the top-level node whose value moves
    source: int     # its stage
    destination: int
    shape: Tuple[int, ...]
    dtype: torch.dtype


def _owner(split_graph: GraphModule) -> Dict[str, Optional[int]]:
    """The stage that computes each top-level value (None: the model's inputs and attributes, which every
    stage has)."""
    owner: Dict[str, Optional[int]] = {}
    for node in split_graph.graph.nodes:
        if node.op == "call_module" and node.target.startswith("submod_"):
            owner[node.name] = int(node.target[len("submod_"):])
        elif node.op == "call_function":  # a getitem of a stage's tuple of outputs
            owner[node.name] = next((owner[a.name] for a in node.all_input_nodes if owner.get(a.name) is not None),
                                    None)
        else:
            owner[node.name] = None
    return owner


def _transfers(module: SplitModule) -> List[_Transfer]:
    """Every tensor one stage hands another, in one order all stages agree on (by destination, then argument)."""
    owner = _owner(module.split)
    out: List[_Transfer] = []
    for node in module.split.graph.nodes:
        if node.op != "call_module" or not node.target.startswith("submod_"):
            continue
        destination = int(node.target[len("submod_"):])
        for arg in dict.fromkeys(node.all_input_nodes):
            source = owner.get(arg.name)
            if source is None or source == destination:
                continue
            meta = arg.meta.get("tensor_meta")
            if not hasattr(meta, "shape"):
                raise AnswerMismatch(f"stage {source} hands stage {destination} '{arg.name}', which is not a tensor: "
                                     "pipeline() moves tensors between processes")
            out.append(_Transfer(arg.name, source, destination, tuple(meta.shape), meta.dtype))
    return out


class _Stage:
    """One stage's side of the pipeline: what it receives, runs and sends for each micro-batch."""

    def __init__(self, module: SplitModule, rank: int, inputs: Sequence[Any]) -> None:
        self.graph = module.split
        self.rank = rank
        self.inputs = list(inputs)
        self.owner = _owner(self.graph)
        transfers = _transfers(module)
        self.incoming = [t for t in transfers if t.destination == rank]
        self.outgoing = [t for t in transfers if t.source == rank]
        self.pending: List[Any] = []  # isend handles of this run

    def micro_batch(self) -> Dict[str, Any]:
        """Runs this stage on one micro-batch: receives its inputs, runs its part, sends what later stages need."""
        env: Dict[str, Any] = {}
        for t in self.incoming:
            buffer = torch.empty(t.shape, dtype=t.dtype)
            dist.recv(buffer, src=t.source)
            env[t.value] = buffer
        placeholder = 0
        for node in self.graph.graph.nodes:
            if node.op == "placeholder":
                env[node.name] = self.inputs[placeholder]
                placeholder += 1
            elif node.op == "get_attr":
                env[node.name] = self._attribute(node.target)
            elif node.op in ("call_module", "call_function") and self.owner.get(node.name) == self.rank:
                args = torch.fx.node.map_arg(node.args, lambda a: env[a.name])
                call = getattr(self.graph, node.target) if node.op == "call_module" else node.target
                env[node.name] = call(*args)
        for t in self.outgoing:
            self.pending.append(dist.isend(env[t.value].contiguous(), dst=t.destination))
        return env

    def _attribute(self, target: str) -> Any:
        value: Any = self.graph
        for atom in target.split("."):
            value = getattr(value, atom)
        return value

    def run(self, micro_batches: int) -> List[Dict[str, Any]]:
        envs = [self.micro_batch() for _ in range(micro_batches)]
        for handle in self.pending:
            handle.wait()
        self.pending.clear()
        return envs

    def owned_outputs(self, env: Dict[str, Any]) -> Dict[int, Any]:
        """This stage's leaves of the model's output, by their position among all the output's leaves."""
        out: Dict[int, Any] = {}
        for i, node in enumerate(_output_leaves(self.graph)):
            if self.owner.get(node.name) == self.rank:
                out[i] = env[node.name]
        return out


def _output_leaves(graph: GraphModule) -> List[Node]:
    leaves: List[Node] = []
    for node in graph.graph.nodes:
        if node.op == "output":
            torch.fx.node.map_arg(node.args[0], lambda a: leaves.append(a))
    return leaves


# glibc's malloc returns every large block to the system when it is freed (a tensor above its mmap threshold), so
# that each micro-batch's activations fault in fresh zeroed pages again: half of a MobileNet's time on one core.
# Stages keep freed memory for the next micro-batch instead, as a GPU's caching allocator does: no trimming of the
# heap, and no mmap at all (the threshold cannot be raised past 32 MiB, and every tensor above it, an AlexNet's
# 151 MB weight gradient or Adam's temporaries of its size, would cost 0.46 s per GB of page faults each step on one
# core: half of AlexNet's training step at batch 1). A value the user set in the environment wins.
ALLOCATOR_ENVIRONMENT = {"MALLOC_MMAP_THRESHOLD_": str(32 << 20), "MALLOC_TRIM_THRESHOLD_": str(1 << 40),
                         "MALLOC_MMAP_MAX_": "0"}


@contextmanager
def _stage_environment() -> Iterator[None]:
    """The environment spawned stages start with (glibc reads these at a process's start)."""
    added = [k for k in ALLOCATOR_ENVIRONMENT if k not in os.environ]
    os.environ.update({k: ALLOCATOR_ENVIRONMENT[k] for k in added})
    try:
        yield
    finally:
        for k in added:
            del os.environ[k]


def rerun_with_allocator_environment() -> None:
    """Starts this Python program again with ALLOCATOR_ENVIRONMENT where the environment lacks it (glibc reads it
    only at a process's start), so that a script profiles or times a model as pipeline() runs it."""
    missing = {k: v for k, v in ALLOCATOR_ENVIRONMENT.items() if k not in os.environ}
    if missing:
        sys.stdout.flush()
        os.execve(sys.executable, [sys.executable] + sys.orig_argv[1:], {**os.environ, **missing})


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _stage_process(rank: int, world: int, port: int, saved: str, pairs: List[Tuple[str, str]], micro_batches: int,
                   repeats: int, threads: int, cores: Optional[List[Sequence[int]]], results: Any) -> None:
    if cores:
        os.sched_setaffinity(0, cores[rank])
    torch.set_num_threads(threads)
    # The model and inputs come through a file: tensors passed to spawned processes go through shared memory
    # handles, which a container's small /dev/shm or its seccomp profile may refuse.
    state = torch.load(saved)
    model, inputs = state["model"], state["inputs"]
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world)
    try:
        module = split(model.eval(), pairs, inputs)
        if len(module.parts) != world:
            raise AnswerMismatch(f"the answer makes {len(module.parts)} stages of the model, not {world}")
        stage = _Stage(module, rank, inputs)
        timings: List[Tuple[int, float]] = []
        with torch.no_grad():
            stage.run(micro_batches)  # warm-up: allocations, kernels, connections
            for count in (micro_batches, 2 * micro_batches) * repeats:
                dist.barrier()  # type: ignore[no-untyped-call]
                start = time.perf_counter()
                envs = stage.run(count)
                dist.barrier()  # type: ignore[no-untyped-call]
                timings.append((count, time.perf_counter() - start))
        results.put((rank, timings, [_shareable(stage.owned_outputs(env)) for env in envs], module.part_devices))
    except Exception as e:  # noqa: BLE001 - reported to the caller, who raises it
        results.put((rank, e, None, None))
        raise
    finally:
        dist.destroy_process_group()


def _shareable(values: Dict[int, Any]) -> Dict[int, Any]:
    """Tensors as plain lists of bytes for the result queue (no shared memory between processes)."""
    return {k: (v.numpy().tobytes(), v.dtype, tuple(v.shape)) if isinstance(v, torch.Tensor) else v
            for k, v in values.items()}


def _tensor(value: Any) -> Any:
    if isinstance(value, tuple) and len(value) == 3 and isinstance(value[0], bytes):
        data, dtype, shape = value
        return torch.frombuffer(bytearray(data), dtype=dtype).reshape(shape)
    return value


def pipeline(model: torch.nn.Module, answer: Any, inputs: Sequence[Any], *, micro_batches: int = 8,
             repeats: int = 3, threads: int = 1, cores: Optional[Mapping[str, Sequence[int]]] = None) -> PipelineRun:
    """Runs `model` (in eval mode, no gradients) as a pipeline of one process per stage of the answer's split, on
    `inputs` (one micro-batch, sent `micro_batches` times per run), and measures it: `repeats` runs each of
    `micro_batches` and of twice as many. `cores` maps each of the answer's devices to the CPUs its stages are
    pinned to ({"gpu0": [0], "gpu1": [1]}); `threads` is each stage's torch.set_num_threads. The stages start with
    ALLOCATOR_ENVIRONMENT where the caller's environment does not set those variables."""
    pairs = module_devices(answer)
    probe = split(model.eval(), pairs, inputs)  # checks the answer here, before any process starts
    world = len(probe.parts)
    if world < 2:
        raise AnswerMismatch(f"the answer runs the model as {world} stage: nothing to pipeline")
    stage_cores: Optional[List[Sequence[int]]] = None
    if cores is not None:
        missing = sorted(set(probe.part_devices) - set(cores))
        if missing:
            raise AnswerMismatch(f"cores= does not say where the answer's {missing} run")
        stage_cores = [cores[d] for d in probe.part_devices]
    context = mp.get_context("spawn")
    results = context.SimpleQueue()
    with tempfile.TemporaryDirectory(prefix="placement_pipeline_") as tmp:
        saved = os.path.join(tmp, "model.pt")
        torch.save({"model": model, "inputs": list(inputs)}, saved)
        with _stage_environment():
            processes = spawn(_stage_process, nprocs=world, join=False,  # type: ignore[no-untyped-call]
                              args=(world, _free_port(), saved, pairs, micro_batches, repeats, threads, stage_cores,
                                    results))
        reports = [results.get() for _ in range(world)]  # before joining: a full pipe would block the stages
        while not processes.join():
            pass
    for rank, timings, _, _ in reports:
        if isinstance(timings, Exception):
            raise timings
    return _summarize(sorted(reports, key=lambda r: int(r[0])), micro_batches)


def _summarize(reports: List[Any], micro_batches: int) -> PipelineRun:
    timings: List[Tuple[int, float]] = reports[0][1]
    short = min(t for m, t in timings if m == micro_batches)
    long = min(t for m, t in timings if m == 2 * micro_batches)
    outputs: List[Dict[int, Any]] = [dict() for _ in reports[0][2]]
    for _, _, owned, _ in reports:
        for i, values in enumerate(owned):
            outputs[i].update(values)
    merged = [tuple(_tensor(o[k]) for k in sorted(o)) for o in outputs]
    return PipelineRun((long - short) / micro_batches, timings,
                       [m[0] if len(m) == 1 else m for m in merged], reports[0][3])
