"""placement-place: place a model through a placement server, as a cluster scheduler would, and print where
each operator runs.

    placement-place model.onnx --server 127.0.0.1:50051 --devices 4xA100 [--algorithm auto] [--training]

A scheduler takes `answer.assignment` (operator -> device) and `answer.score` (predicted step time and per-device
memory) from the final message; repeats of the same request come from the server's cache.
"""

from __future__ import annotations

import argparse
import collections
import sys
from typing import List, Optional

import grpc

from placement_client.client import PlacementClient
from placement_client.proto import placement_pb2 as pb
from placement_client.requests import OBJECTIVES, place_request


def _print_answer(answer: pb.PlaceResponse) -> None:
    score = answer.score
    print(f"algorithm   {answer.algorithm}{' (from the cache)' if answer.cache_hit else ''}")
    print(f"value       {score.value:.6g} {score.time_unit}  (lower bound {score.lower_bound:.6g}, "
          f"ratio {score.ratio:.3f})")
    print(f"graph       {answer.graph_hash[:16]}, {answer.num_operators} operators on {answer.num_devices} devices")
    ops_on = collections.Counter(a.device for a in answer.assignment)
    for d in score.devices:
        print(f"  {d.device:<12} {ops_on[d.device]:6d} ops  busy {d.busy_seconds:.6g}  "
              f"peak memory {d.peak_memory_bytes / 2**30:.2f} GiB")


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="placement-place", description=(__doc__ or "").splitlines()[0])
    parser.add_argument("graph", help="ONNX model, JSON graph or PipeDream profile")
    parser.add_argument("--server", default="127.0.0.1:50051")
    parser.add_argument("--devices", default="4xA100", help="cluster shorthand, e.g. 4xA100 or 2x8xH100")
    parser.add_argument("--objective", default="step_time", choices=sorted(OBJECTIVES))
    parser.add_argument("--algorithm", default="auto")
    parser.add_argument("--budget-ms", type=int, default=2000)
    parser.add_argument("--training", action="store_true")
    parser.add_argument("--tls-ca", help="PEM file of the CA that signed the server's certificate (TLS)")
    args = parser.parse_args(argv)

    ca = None
    if args.tls_ca:
        with open(args.tls_ca, "rb") as f:
            ca = f.read()
    try:
        request = place_request(args.graph, devices=args.devices, objective=args.objective,
                                algorithm=args.algorithm, budget_ms=args.budget_ms, training=args.training)
        with PlacementClient(args.server, timeout=args.budget_ms / 1000 + 30, root_certificates=ca) as client:
            answer = client.place_answer(
                request, on_progress=lambda p: print(f"[{p.elapsed_seconds:6.2f}s] {p.message}", file=sys.stderr))
    except (OSError, ValueError) as e:
        print(f"placement-place: {e}", file=sys.stderr)
        return 3
    except grpc.RpcError as e:
        print(f"placement failed: {e.code().name}: {e.details()}", file=sys.stderr)
        return 5 if e.code() == grpc.StatusCode.UNAVAILABLE else 1
    _print_answer(answer)
    return 0


if __name__ == "__main__":
    sys.exit(main())
