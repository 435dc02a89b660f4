#!/usr/bin/python3
"""The Python client against a real placement_server on 127.0.0.1 (port picked by the kernel): the example
places a corpus model, a repeat is a cache hit, every call carries x-graph-hash, a bad graph is
INVALID_ARGUMENT, and a server that wants a bearer token refuses a call without it and answers one with it. Prints "SKIPPED: ..." and exits 0 when python3-grpcio or python3-protobuf is missing."""

import argparse
import hashlib
import os
import queue
import signal
import subprocess
import sys
import tempfile
import threading
import time


def fail(message):
    print(f"FAILED: {message}")
    sys.exit(1)


def check(condition, message):
    if not condition:
        fail(message)


def start_server(binary, data_dir, *flags):
    proc = subprocess.Popen([binary, "--listen=127.0.0.1:0", "--metrics_listen=", f"--data_dir={data_dir}",
                             "--policy_device=none", "--threads=2", *flags],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    lines = queue.Queue()
    threading.Thread(target=lambda: [lines.put(l) for l in proc.stdout], daemon=True).start()
    deadline = time.time() + 30
    while time.time() < deadline:
        try:
            line = lines.get(timeout=0.5)
        except queue.Empty:
            if proc.poll() is not None:
                fail(f"placement_server exited with {proc.returncode} before listening")
            continue
        if line.startswith("listening on "):
            return proc, line.split()[-1]
    proc.kill()
    fail("placement_server did not say where it listens within 30 s")


def stop_server(proc):
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()


class HeaderRecorder:
    """A client interceptor that keeps the metadata of every call."""

    def __init__(self, grpc):
        recorder = self

        class Interceptor(grpc.UnaryUnaryClientInterceptor, grpc.UnaryStreamClientInterceptor):
            def intercept_unary_unary(self, continuation, details, request):
                recorder.calls.append((details.method, dict(details.metadata or ())))
                return continuation(details, request)

            def intercept_unary_stream(self, continuation, details, request):
                recorder.calls.append((details.method, dict(details.metadata or ())))
                return continuation(details, request)

        self.calls = []
        self.interceptor = Interceptor()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--server-binary", required=True)
    parser.add_argument("--stubs", required=True)
    parser.add_argument("--source", required=True)
    args = parser.parse_args()
    try:
        import grpc  # noqa: F401
        import google.protobuf  # noqa: F401
    except ImportError as e:
        print(f"SKIPPED: {e} (scripts/deps.sh installs python3-grpcio and python3-protobuf)")
        return 0
    sys.dont_write_bytecode = True  # no __pycache__ in the source tree
    package_dir = os.path.join(args.source, "client", "python")
    sys.path[:0] = [args.stubs, package_dir]
    from placement_client import PlacementClient, graph_hash
    from placement.v1 import placement_pb2 as pb

    model = os.path.join(args.source, "tests", "data", "corpus", "resnet50.onnx")
    with tempfile.TemporaryDirectory() as data_dir:
        proc, address = start_server(args.server_binary, data_dir)
        try:
            recorder = HeaderRecorder(grpc)
            channel = grpc.intercept_channel(grpc.insecure_channel(address), recorder.interceptor)
            client = PlacementClient(address, timeout=60, channel=channel)
            deadline = time.time() + 30
            while not client.info().ready:
                check(time.time() < deadline, "the server did not turn ready within 30 s")
                time.sleep(0.1)

            env = dict(os.environ, PYTHONPATH=os.pathsep.join([args.stubs, package_dir]), PYTHONDONTWRITEBYTECODE="1")
            example = subprocess.run(
                [sys.executable, os.path.join(package_dir, "examples", "place_model.py"), model, "--server", address,
                 "--devices", "2xA100", "--algorithm", "m_topo", "--budget-ms", "2000"],
                capture_output=True, text=True, env=env, timeout=90)
            check(example.returncode == 0, f"the example failed ({example.returncode}): {example.stderr}")
            check("algorithm   m_topo" in example.stdout, f"unexpected example output:\n{example.stdout}")
            check("gpu" in example.stdout.lower() or "a100" in example.stdout.lower(),
                  f"no device rows in the example's output:\n{example.stdout}")

            request = client.place_request(model, devices="2xA100", algorithm="m_topo", budget_ms=2000)
            repeat = client.place(request)
            check(repeat.cache_hit, "the example's request repeated was not a cache hit")
            check(len(repeat.assignment) == repeat.num_operators > 0, "the answer does not place every operator")

            with open(model, "rb") as f:
                expected = hashlib.sha256(f.read()).hexdigest()
            check(graph_hash(request.onnx) == expected, "graph_hash differs from SHA-256 of the file")
            place_calls = [m for method, m in recorder.calls if method.endswith("/Place")]
            check(place_calls and place_calls[-1].get("x-graph-hash") == expected,
                  f"Place did not carry x-graph-hash={expected}: {recorder.calls}")

            sized = client.place(client.place_request(model, devices="2xA100", algorithm="m_topo", budget_ms=2000,
                                                       batch_size=2, dims={"unused_symbol": 3}))
            check(not sized.cache_hit and sized.graph_hash != repeat.graph_hash,
                  "another batch size and dims were answered from the cache")

            traced = os.path.join(args.source, "tests", "data", "torch_trace")
            measured = client.place(client.place_request(
                os.path.join(traced, "resnet18_b1.onnx"), devices="1xCPU", algorithm="single_device",
                costs_path=os.path.join(traced, "resnet18_b1_cpu1.trace.json"), costs_kind="cpu"))
            check(measured.cost_sources.measured_operators == 49 and measured.cost_sources.modelled_operators == 16,
                  f"the profiler trace did not measure every operator: {measured.cost_sources}")

            profile = os.path.join(args.source, "examples", "graphs", "convnet_pipedream.txt")
            plan = client.place(client.place_request(profile, devices="2x4xV100", objective="throughput", training=True,
                                                     parallelism="hybrid", budget_ms=10000))
            check(len(plan.stages) > 0 and all(len(s.devices) > 0 and len(s.operators) > 0 for s in plan.stages),
                  f"a hybrid plan came back without its stages: {plan.stages}")

            bad = pb.PlaceRequest(graph_json='{"format": "placement.graph/v1", "operators": [{"name": 3}]}')
            bad.topology.shorthand = "2xA100"
            try:
                client.place(bad)
                fail("a bad graph was accepted")
            except grpc.RpcError as e:
                check(e.code() == grpc.StatusCode.INVALID_ARGUMENT, f"a bad graph gave {e.code()}: {e.details()}")
            client.close()
        finally:
            stop_server(proc)

    # A server that wants a bearer token: refused without it, answered with it.
    with tempfile.TemporaryDirectory() as data_dir:
        token_file = os.path.join(data_dir, "token")
        with open(os.open(token_file, os.O_WRONLY | os.O_CREAT, 0o600), "w") as f:
            f.write("python-client-token-77aa\n")
        proc, address = start_server(args.server_binary, os.path.join(data_dir, "data"),
                                     f"--auth_token_file={token_file}")
        try:
            request = PlacementClient.place_request(model, devices="2xA100", algorithm="m_topo", budget_ms=2000)
            with PlacementClient(address, timeout=30, token="") as anonymous:
                try:
                    anonymous.place(request)
                    fail("a call without the token was answered")
                except grpc.RpcError as e:
                    check(e.code() == grpc.StatusCode.UNAUTHENTICATED, f"no token gave {e.code()}: {e.details()}")
            with PlacementClient(address, timeout=30, token="python-client-token-77aa") as client:
                check(len(client.place(request).assignment) > 0, "the call with the token got no placement")
        finally:
            stop_server(proc)
    print("PASSED")
    return 0


if __name__ == "__main__":
    sys.exit(main())
