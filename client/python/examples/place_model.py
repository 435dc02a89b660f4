#!/usr/bin/python3
"""Place a model through a placement server, as a cluster scheduler would, and print where each operator runs.

    PYTHONPATH=build/client/python/generated:client/python \\
        /usr/bin/python3 client/python/examples/place_model.py tests/data/corpus/resnet50.onnx \\
        --server 127.0.0.1:50051 --devices 4xA100

A scheduler would take `answer.assignment` (operator -> device) and `answer.score` (predicted step time and
per-device memory) from the final message; repeats of the same request come from the server's cache.
"""

import argparse
import collections
import sys

import grpc

from placement_client import PlacementClient
from placement.v1 import placement_pb2 as pb


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("graph", help="ONNX model or JSON graph")
    parser.add_argument("--server", default="127.0.0.1:50051")
    parser.add_argument("--devices", default="4xA100", help="cluster shorthand, e.g. 4xA100 or 2x8xH100")
    parser.add_argument("--objective", default="step_time", choices=["step_time", "throughput", "latency"])
    parser.add_argument("--algorithm", default="auto")
    parser.add_argument("--budget-ms", type=int, default=2000)
    parser.add_argument("--training", action="store_true")
    args = parser.parse_args(argv)

    with PlacementClient(args.server, timeout=args.budget_ms / 1000 + 30) as client:
        request = client.place_request(args.graph, devices=args.devices, objective=args.objective,
                                       algorithm=args.algorithm, budget_ms=args.budget_ms, training=args.training)
        answer = None
        try:
            for progress in client.place_stream(request):
                if progress.kind == pb.PlaceProgress.KIND_RESULT:
                    answer = progress.answer
                else:
                    print(f"[{progress.elapsed_seconds:6.2f}s] {progress.message}", file=sys.stderr)
        except grpc.RpcError as e:
            print(f"placement failed: {e.code().name}: {e.details()}", file=sys.stderr)
            return 1
    if answer is None:
        print("the server sent no answer", file=sys.stderr)
        return 1

    score = answer.score
    print(f"algorithm   {answer.algorithm}{' (from the cache)' if answer.cache_hit else ''}")
    print(f"value       {score.value:.6g} {score.time_unit}  (lower bound {score.lower_bound:.6g}, ratio {score.ratio:.3f})")
    print(f"graph       {answer.graph_hash[:16]}, {answer.num_operators} operators on {answer.num_devices} devices")
    ops_on = collections.Counter(a.device for a in answer.assignment)
    for d in score.devices:
        print(f"  {d.device:<12} {ops_on[d.device]:6d} ops  busy {d.busy_seconds:.6g}  "
              f"peak memory {d.peak_memory_bytes / 2**30:.2f} GiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
