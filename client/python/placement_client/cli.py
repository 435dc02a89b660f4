"""placement-place: place a model through a placement server, as a cluster scheduler would, and print where
each operator runs.

    placement-place model.onnx --server 127.0.0.1:50051 --devices 4xA100 [--algorithm auto] [--deadline 10s]
    placement-place model.onnx --devices 4xA100 --training --batch 8 --objective throughput \\
        --parallelism data --global_batch 4 --output json

    placement-place config.json --devices 2x8xA100 --training --batch 512 --plan pp=4 --output json

The flags are those of `placectl submit`, with its spellings (--global_batch; --global-batch works too), its
defaults and its table: times and memory with units, a plan's global batch, step time and samples per second; a
Hugging Face config.json's training plan (tp, pp, dp, ZeRO, recomputation) and its iteration. Two differences:
--chart is not taken (placectl submit --chart draws the answer's schedule; this client has no chart renderer), and
without --devices or --topology the cluster is 4xA100 rather than the devices the graph file describes.
--output json prints the PlaceResponse with the proto's field names. A scheduler takes `assignment` (operator ->
device) and `score` (predicted time and per-device memory); repeats of the same request come from the server's
cache. Exit codes as placectl's: 0 ok, 1 internal error, 2 usage, 3 bad input (a file, or a request the server
refuses), 4 infeasible (memory, deadline, a server limit), 5 server unavailable, 6 refused (token or certificate).
"""

from __future__ import annotations

import argparse
import math
import sys
from typing import Any, Dict, List, Optional, Tuple

import grpc

from placement_client.answer_report import answer_json, answer_table
from placement_client.client import InsecureTokenError, PlacementClient
from placement_client.credentials import read_pem, read_token_file
from placement_client.proto import placement_pb2 as pb
from placement_client.requests import OBJECTIVES, place_request
from placement_client.units import format_seconds, parse_duration

DEFAULT_DEVICES = "4xA100"  # when neither --devices nor --topology is given
# Beyond the placer's deadline, what a call may spend on sending, decoding a large model and the answer's way back.
CALL_ALLOWANCE_SECONDS = 30.0
PRECISIONS = ("fp32", "tf32", "amp_bf16", "amp_fp16", "bf16", "fp16")
# As placectl's --parallelism takes them (client/flag_values.cc): "" leaves the choice to the server.
PARALLELISMS = ("auto", "operator", "data", "pipeline", "hybrid", "tensor")

# placectl's exit code for each way a call can fail (client/exit_codes.h); any other is 1.
EXIT_CODES = {
    grpc.StatusCode.INVALID_ARGUMENT: 3, grpc.StatusCode.NOT_FOUND: 3, grpc.StatusCode.DATA_LOSS: 3,
    grpc.StatusCode.OUT_OF_RANGE: 3, grpc.StatusCode.FAILED_PRECONDITION: 4, grpc.StatusCode.RESOURCE_EXHAUSTED: 4,
    grpc.StatusCode.DEADLINE_EXCEEDED: 4, grpc.StatusCode.UNAVAILABLE: 5, grpc.StatusCode.UNAUTHENTICATED: 6,
    grpc.StatusCode.PERMISSION_DENIED: 6,
}


def _positive_count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text} is not a positive count")
    return value


def _count(text: str) -> int:
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"{text} is not a count (0 or more)")
    return int(text)


def _data_inputs(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -2
    if value < -1:
        raise argparse.ArgumentTypeError(f"{text} is not a count (-1: decide)")
    return value


def _multiple(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not (value >= 0 and math.isfinite(value)):
        raise argparse.ArgumentTypeError(f"{text} is not a multiple of 0 or more")
    return value


def _dim(text: str) -> Tuple[str, int]:
    name, _, value = text.rpartition("=")
    if not name or not value.isdigit():
        raise argparse.ArgumentTypeError(f"'{text}' is not NAME=VALUE with a non-negative integer VALUE (NAME: a "
                                         "dimension's symbol, or TENSOR:AXIS)")
    return name, int(value)


def _deadline(text: str) -> float:
    try:
        seconds = parse_duration(text)
    except ValueError:
        seconds = 0.0
    if seconds <= 0:
        raise argparse.ArgumentTypeError(f"'{text}' is not a positive duration such as 500ms, 2s or 1m")
    return seconds


def _budget_ms(text: str) -> float:
    return _positive_count(text) / 1000.0


def _flag(group: Any, name: str, **kwargs: Any) -> None:
    """--name as placectl spells it (underscores), and the same with dashes where that differs."""
    dashed = name.replace("_", "-")
    spellings = [f"--{name}"] + ([f"--{dashed}"] if dashed != name else [])
    kwargs.setdefault("dest", name)
    group.add_argument(*spellings, **kwargs)


def _add_graph_flags(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("the graph")
    g.add_argument("graph", help="ONNX model, JSON graph, Tarnawski graph, PipeDream profile or a Hugging Face "
                   "config.json (answered with a transformer's training plan)")
    _flag(g, "training", action="store_true", help="place one training step: backward, gradients, optimizer")
    _flag(g, "batch", type=_positive_count, default=0, metavar="N",
          help="ONNX: batch size bound to the batch dimension (default 1); a config.json: the global batch in "
          "sequences; the default plan of a training step: the global batch in samples")
    _flag(g, "seq", type=_positive_count, default=0, metavar="N",
          help="ONNX: length bound to dimensions named like a sequence (default 128)")
    _flag(g, "dim", type=_dim, action="append", default=[], metavar="NAME=VALUE",
          help="ONNX, repeatable: a dimension's symbol, or TENSOR:AXIS for a size the data decides")
    _flag(g, "precision", type=str.lower, choices=PRECISIONS, default="fp32",
          help="what tensors, weights and optimizer state hold (docs/memory.md)")
    _flag(g, "optimizer", type=str.lower, choices=("sgd", "momentum", "adam"), default="adam",
          help="training: the optimizer, whose state is in memory (default adam)")
    _flag(g, "backward_multiplier", type=_multiple, default=2.0, metavar="X",
          help="training: backward work as a multiple of the forward work (default 2.0)")
    _flag(g, "runtime", type=str.lower, choices=("eager", "graphs"), default="eager",
          help="how the step issues its operators: eager (one by one from the host) or graphs (CUDA graphs or a "
          "compiled step)")
    _flag(g, "costs", metavar="FILE", help="measured per-operator times, or a PyTorch profiler trace")
    _flag(g, "costs_kind", default="*", metavar="KIND", help="the device kind a --costs trace was recorded on")
    _add_onnx_flags(parser)


def _add_onnx_flags(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("reading an ONNX model (docs/onnx.md)")
    _flag(g, "allow_unresolved_dims", action="store_true",
          help="count a dimension nothing resolves as 1, with a warning")
    _flag(g, "num_data_inputs", type=_data_inputs, default=-1, metavar="N",
          help="graph inputs without an initializer that are data (-1: decide)")
    _flag(g, "loop_iterations", type=_count, default=0, metavar="N",
          help="iterations assumed for a Loop the data bounds (0: the default, 8)")
    _flag(g, "max_unrolled_nodes", type=_count, default=0, metavar="N",
          help="a Loop or Scan unrolling past this stays one operator (0: 20000)")


def _add_placing_flags(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("the placement")
    cluster = g.add_mutually_exclusive_group()
    _flag(cluster, "devices", metavar="SPEC", help=f"cluster shorthand, e.g. 4xA100 or 2x8xH100 ({DEFAULT_DEVICES} "
          "when neither --devices nor --topology is given)")
    _flag(cluster, "topology", metavar="FILE", help="cluster description file (JSON, docs/topology.md)")
    _flag(g, "objective", type=str.lower, choices=sorted(OBJECTIVES), default="step_time")
    _flag(g, "algorithm", default="auto", help="a placer the server lists, or auto")
    _flag(g, "cost_model", type=str.lower, choices=("default", "tarnawski", "pipedream"), default="default")
    time = g.add_mutually_exclusive_group()
    _flag(time, "deadline", type=_deadline, default=_deadline("10s"), metavar="DURATION",
          help="time the placer may take, e.g. 500ms, 2s, 1m (default 10s)")
    _flag(time, "budget_ms", type=_budget_ms, dest="deadline", default=argparse.SUPPRESS, metavar="MS",
          help="the deadline in milliseconds")
    _flag(g, "seed", type=_count, default=1, help="for randomized placers (default 1)")
    _flag(g, "skip_cache", action="store_true", help="compute afresh even when the server has the answer cached")
    _flag(g, "policy", default="", metavar="NAME", help="one of the server's learned policies (default: its own)")


def _add_plan_flags(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("plans (docs/parallel-plans.md, docs/transformer_plans.md)")
    _flag(g, "parallelism", type=str.lower, choices=PARALLELISMS, default="",
          help="auto (the default for a training step of an ONNX model on several accelerators: data, pipeline, "
          "hybrid plans and operator placement compared at the global batch --batch) | operator (the default "
          "otherwise) | data | pipeline | hybrid (stages of operators, each data-parallel on a group of devices); "
          "a config.json: auto (tensor, pipeline and data parallelism searched together) | tensor (every GPU one "
          "tensor-parallel group)")
    _flag(g, "schedule", type=str.lower, choices=("1f1b", "gpipe"), default="1f1b",
          help="the micro-batch schedule (gpipe needs --global_batch)")
    _flag(g, "global_batch", type=_count, default=0, metavar="N",
          help="micro-batches (runs of the graph) per optimizer step; 0: none")
    _flag(g, "micro_batch", type=_positive_count, default=0, metavar="N",
          help="the default plan of a training step: samples per micro-batch, a divisor of --batch (default: --batch "
          "over the accelerators)")
    _flag(g, "sharding", type=str.lower, choices=("none", "zero1", "zero2", "zero3", "fsdp"), default="none",
          help="what each stage's replicas split (a training step with a global batch)")
    _flag(g, "recompute", type=str.lower, choices=("none", "full"), default="none",
          help="what the backward recomputes (a training step)")
    _flag(g, "plan", default="", metavar="KEYS",
          help="a config.json: the plan keys the server's search holds fixed, e.g. tp=2,pp=4 (keys tp, pp, vpp, dp, "
          "mbs, zero, recompute, sp, flash, overlap)")


def _add_security_flags(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("security")
    _flag(g, "tls", action="store_true", help="use TLS (on by itself when --tls_ca or --tls_cert is given)")
    _flag(g, "tls_ca", metavar="FILE", help="PEM CA that signed the server's certificate (default: the system's roots)")
    _flag(g, "tls_cert", metavar="FILE", help="PEM client certificate, for mutual TLS (with --tls_key)")
    _flag(g, "tls_key", metavar="FILE", help="PEM key of --tls_cert")
    _flag(g, "tls_server_name", default="", metavar="NAME",
          help="the name the server's certificate must carry (default: the host of --server)")
    _flag(g, "token_file", metavar="FILE", help="file holding the bearer token (default: $PLACEMENT_AUTH_TOKEN)")


def _add_output_flags(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("the server and the answer")
    _flag(g, "server", default="127.0.0.1:50051", metavar="HOST:PORT")
    _flag(g, "output", type=str.lower, choices=("table", "json"), default="table")
    _flag(g, "progress", action="store_true", help="progress on stderr (always on when stderr is a terminal)")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="placement-place", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    for add in (_add_graph_flags, _add_placing_flags, _add_plan_flags, _add_security_flags, _add_output_flags):
        add(p)
    return p


class UsageError(ValueError):
    """Flags that do not go together: reported as argparse reports a bad flag (exit 2)."""


def request_from(args: argparse.Namespace) -> pb.PlaceRequest:
    """The PlaceRequest the flags ask for, as placectl submit makes it. Raises OSError for a file it cannot read,
    UsageError for flags a config.json (or another graph) cannot take."""
    topology_json = None
    if args.topology:
        with open(args.topology, encoding="utf-8") as f:
            topology_json = f.read()
    request = place_request(
        args.graph, devices=None if topology_json else args.devices or DEFAULT_DEVICES, topology_json=topology_json,
        objective=args.objective, algorithm=args.algorithm, budget_ms=max(1, round(args.deadline * 1000)),
        training=args.training, batch_size=args.batch, sequence_length=args.seq, dims=dict(args.dim),
        precision="" if args.precision == "fp32" else args.precision, costs_path=args.costs,
        costs_kind=args.costs_kind, seed=args.seed, skip_cache=args.skip_cache, cost_model=args.cost_model,
        parallelism=args.parallelism, schedule=args.schedule, global_batch=args.global_batch, policy=args.policy,
        sharding=args.sharding, recompute=args.recompute, micro_batch_size=args.micro_batch,
        transformer_plan=args.plan, optimizer=args.optimizer, backward_multiplier=args.backward_multiplier,
        runtime=args.runtime, allow_unresolved_dims=args.allow_unresolved_dims,
        num_data_inputs=None if args.num_data_inputs < 0 else args.num_data_inputs,
        loop_iterations=args.loop_iterations, max_unrolled_nodes=args.max_unrolled_nodes)
    _check_transformer(request, args)
    return request


def _check_transformer(request: pb.PlaceRequest, args: argparse.Namespace) -> None:
    """What placectl submit asks of a config.json before sending it (client/submit_transformer.h)."""
    if request.WhichOneof("graph_source") != "hf_config":
        if args.plan:
            raise UsageError(f"--plan describes a transformer's layers; {args.graph} is not a Hugging Face config.json")
        return
    if not args.training:
        raise UsageError("a config.json is planned as a training step on the server: add --training")
    if args.batch <= 0:
        raise UsageError("a transformer plan needs --batch: the global batch in sequences per iteration "
                         "(e.g. --batch 512)")


def client_options(args: argparse.Namespace) -> Dict[str, Any]:
    """PlacementClient's TLS and token arguments from the security flags. Raises ValueError naming a file that
    cannot be read or is not what its flag needs."""
    if bool(args.tls_cert) != bool(args.tls_key):
        raise ValueError("a client certificate and its key go together: give both --tls_cert and --tls_key, or "
                         "neither")
    options: Dict[str, Any] = {
        "tls": args.tls,
        "root_certificates": read_pem("--tls_ca", args.tls_ca) if args.tls_ca else None,
        "certificate_chain": read_pem("--tls_cert", args.tls_cert) if args.tls_cert else None,
        "private_key": read_pem("--tls_key", args.tls_key) if args.tls_key else None,
        "server_name": args.tls_server_name or None,
    }
    if args.token_file:
        options["token"] = read_token_file(args.token_file)
    return options


class ProgressLine:
    """PlaceStream's progress on stderr as placectl shows it: the phase, the elapsed time and the best answer so
    far; one line rewritten in place on a terminal, a line per message otherwise."""

    def __init__(self, overwrite: bool) -> None:
        self.overwrite, self.shown, self.phase, self.best = overwrite, False, "", ""

    def show(self, p: pb.PlaceProgress) -> None:
        # An improvement's own message repeats what the "best" part says; the line keeps the phase it came in.
        if p.kind == pb.PlaceProgress.KIND_IMPROVED:
            s = p.answer.score
            value = format_seconds(s.value) if s.time_unit == "s" else f"{s.value:.4g} {s.time_unit}"
            self.best = f" | best {value} ({p.answer.algorithm})"
        else:
            self.phase = p.message
        line = f"[{p.elapsed_seconds:6.1f}s] {self.phase}{self.best}"
        sys.stderr.write(f"\r\033[K{line}" if self.overwrite else f"{line}\n")
        sys.stderr.flush()
        self.shown = True

    def close(self) -> None:
        if self.overwrite and self.shown:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()


def _place(args: argparse.Namespace, request: pb.PlaceRequest, security: Dict[str, Any]) -> pb.PlaceResponse:
    terminal = sys.stderr.isatty()
    progress = ProgressLine(overwrite=terminal) if args.progress or terminal else None
    try:
        with PlacementClient(args.server, timeout=args.deadline + CALL_ALLOWANCE_SECONDS, **security) as client:
            return client.place_answer(request, on_progress=progress.show if progress else None)
    finally:
        if progress:
            progress.close()


def main(argv: Optional[List[str]] = None) -> int:
    flags = parser()
    args = flags.parse_args(argv)
    try:
        request = request_from(args)
        security = client_options(args)
    except UsageError as e:
        flags.error(str(e))
    except (OSError, ValueError) as e:
        print(f"placement-place: {e}", file=sys.stderr)
        return 3
    try:
        answer = _place(args, request, security)
    except InsecureTokenError:
        print(f"placement-place: refusing to send the bearer token to {args.server} over plaintext: give --tls (or "
              "--tls_ca) for TLS, or reach the server over loopback", file=sys.stderr)
        return 3
    except grpc.RpcError as e:
        print(f"placement failed: {e.code().name}: {e.details()}", file=sys.stderr)
        return EXIT_CODES.get(e.code(), 1)
    except RuntimeError as e:  # the stream ended without an answer
        print(f"placement failed: {e}", file=sys.stderr)
        return 1
    sys.stdout.write(answer_json(answer) if args.output == "json" else answer_table(answer))
    return 0


if __name__ == "__main__":
    sys.exit(main())
