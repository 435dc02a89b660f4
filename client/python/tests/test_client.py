#!/usr/bin/python3
"""The installed placement_client against real placement_server processes on 127.0.0.1: placing a corpus model
(a repeat is a cache hit; every call carries x-graph-hash), Tarnawski et al.'s latency model, the placement-place
command (placectl's flags, its table and the JSON answer, --micro_batch and --optimizer in the answer, a
config.json's transformer plan, usage errors), health and readiness, retries on UNAVAILABLE, deadlines, a bad graph (INVALID_ARGUMENT), bearer tokens (refused over plaintext to another host,
required by a server that wants one) and TLS. Run by install_and_test.py with the interpreter of the environment
the package was installed into."""

import argparse
import hashlib
import json
import os
import queue
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

import grpc

import placement_client
from placement_client import InsecureTokenError, PlacementClient, graph_hash, pb, place_request, secure_client

ARGS = None


def fail(message):
    print(f"FAILED: {message}")
    sys.exit(1)


def check(condition, message):
    if not condition:
        fail(message)


class Server:
    """A placement_server on 127.0.0.1 (port 0 unless given), stopped with SIGTERM on exit."""

    def __init__(self, *flags, port=0):
        self.dir = tempfile.TemporaryDirectory()
        self.proc = subprocess.Popen(
            [os.path.abspath(ARGS.server_binary), f"--listen=127.0.0.1:{port}", "--metrics_listen=",
             f"--data_dir={os.path.join(self.dir.name, 'data')}", "--policy_device=none", "--threads=2", *flags],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.address = self._wait_listening()

    def _wait_listening(self):
        lines = queue.Queue()
        threading.Thread(target=lambda: [lines.put(l) for l in self.proc.stdout], daemon=True).start()
        deadline = time.time() + 30
        while time.time() < deadline:
            try:
                line = lines.get(timeout=0.5)
            except queue.Empty:
                if self.proc.poll() is not None:
                    fail(f"placement_server exited with {self.proc.returncode} before listening")
                continue
            if line.startswith("listening on "):
                return line.split()[-1]
        self.proc.kill()
        fail("placement_server did not say where it listens within 30 s")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.dir.cleanup()


class CallRecorder(grpc.UnaryUnaryClientInterceptor, grpc.UnaryStreamClientInterceptor):
    """Keeps the method and metadata of every call attempt."""

    def __init__(self):
        self.calls = []

    def intercept_unary_unary(self, continuation, details, request):
        self.calls.append((details.method, dict(details.metadata or ())))
        return continuation(details, request)

    def intercept_unary_stream(self, continuation, details, request):
        self.calls.append((details.method, dict(details.metadata or ())))
        return continuation(details, request)


def model(name="resnet50.onnx"):
    return os.path.join(ARGS.source, "tests", "data", "corpus", name)


def test_place_cache_and_routing_header(address):
    recorder = CallRecorder()
    channel = grpc.intercept_channel(grpc.insecure_channel(address), recorder)
    with PlacementClient(address, timeout=60, channel=channel) as client:
        client.wait_until_ready(timeout=30)
        check(client.health() == "SERVING" and client.health("") == "SERVING", "health is not SERVING")
        request = place_request(model(), devices="2xA100", algorithm="m_topo", budget_ms=2000)
        first = client.place_answer(request)
        repeat = client.place(request)
        check(repeat.cache_hit and not first.cache_hit, "a repeated request was not a cache hit")
        check(len(repeat.assignment) == repeat.num_operators > 0, "the answer does not place every operator")
        with open(model(), "rb") as f:
            expected = hashlib.sha256(f.read()).hexdigest()
        check(graph_hash(request.onnx) == expected, "graph_hash differs from SHA-256 of the file")
        for method in ("/Place", "/PlaceStream"):
            sent = [m for name, m in recorder.calls if name.endswith(method)]
            check(sent and sent[-1].get("x-graph-hash") == expected, f"{method} did not carry x-graph-hash")
        sized = client.place(place_request(model(), devices="2xA100", algorithm="m_topo", budget_ms=2000,
                                           batch_size=2, dims={"batch": 2}))
        check(not sized.cache_hit and sized.graph_hash != repeat.graph_hash, "another batch size hit the cache")
        plan = place_request(model(), devices="4xA100", objective="throughput", training=True, batch_size=2,
                             parallelism="data", global_batch=4, budget_ms=5000)
        whole = client.place(plan)
        plan.sharding, plan.recompute = "zero2", "full"
        split = client.place(plan)
        check(whole.sharding == "none" and split.sharding == "zero2" and split.recompute == "full",
              "the plan's answer does not say what it splits and recomputes")
        held = [d.peak_memory_bytes for d in whole.score.devices]
        check(all(s.peak_memory_bytes < h for s, h in zip(split.score.devices, held)),
              "sharding and recomputation did not lower each device's memory")


def test_measured_costs_and_bad_graph(address):
    with PlacementClient(address, timeout=60) as client:
        traced = os.path.join(ARGS.source, "tests", "data", "torch_trace")
        measured = client.place(place_request(
            os.path.join(traced, "resnet18_b1.onnx"), devices="1xCPU", algorithm="single_device",
            costs_path=os.path.join(traced, "resnet18_b1_cpu1.trace.json"), costs_kind="cpu"))
        check(measured.cost_sources.measured_operators == 49 and measured.cost_sources.modelled_operators == 16,
              f"the profiler trace did not measure every operator: {measured.cost_sources}")
        tiny = os.path.join(ARGS.source, "examples", "graphs", "tiny_pipeline.json")
        latency = client.place(place_request(tiny, objective="latency", cost_model="tarnawski", budget_ms=2000))
        check(latency.algorithm.startswith("auto:") and 0 < latency.score.value <= 17.6 + 1e-9,
              f"Tarnawski's latency of the tiny pipeline: {latency.algorithm} {latency.score.value}")
        profile = os.path.join(ARGS.source, "examples", "graphs", "convnet_pipedream.txt")
        plan = client.place(place_request(profile, devices="2x4xV100", objective="throughput", training=True,
                                          parallelism="hybrid", budget_ms=10000))
        check(len(plan.stages) > 0 and all(len(s.devices) > 0 and len(s.operators) > 0 for s in plan.stages),
              f"a hybrid plan came back without its stages: {plan.stages}")
        staged = client.place(place_request(os.path.join(traced, "resnet18_b1.onnx"), devices="4xV100",
                                            objective="throughput", training=True, parallelism="pipeline"))
        check(len(staged.stages) >= 2 and all(s.modules for s in staged.stages)
              and staged.stages[0].modules[0] == "conv1" and staged.stages[-1].modules[-1] == "fc",
              f"the stages of a PyTorch export are not named by module: {[list(s.modules) for s in staged.stages]}")
        bad = pb.PlaceRequest(graph_json='{"format": "placement.graph/v1", "operators": [{"name": 3}]}')
        bad.topology.shorthand = "2xA100"
        try:
            client.place(bad)
            fail("a bad graph was accepted")
        except grpc.RpcError as e:
            check(e.code() == grpc.StatusCode.INVALID_ARGUMENT, f"a bad graph gave {e.code()}: {e.details()}")


def place_command(*args, timeout=90):
    return subprocess.run([os.path.join(ARGS.scripts, "placement-place"), *args], capture_output=True, text=True,
                          timeout=timeout)


def test_command(address):
    run = place_command(model(), "--server", address, "--devices", "2xA100", "--algorithm", "m_topo")
    check(run.returncode == 0, f"placement-place failed ({run.returncode}): {run.stderr}")
    check("algorithm    m_topo" in run.stdout and "gpu0" in run.stdout, f"unexpected output:\n{run.stdout}")
    value = next(line for line in run.stdout.splitlines() if line.startswith("value"))
    check(value.split()[-1] in ("ns", "us", "ms", "s") and "MiB" in run.stdout,
          f"times and memory are not written with units:\n{run.stdout}")
    missing = place_command("/nonexistent.onnx", "--server", address, timeout=30)
    check(missing.returncode == 3 and "/nonexistent.onnx" in missing.stderr,
          f"a missing file gave {missing.returncode}: {missing.stderr}")


def test_command_plan_options(address):
    """placectl's plan flags and spellings: the answer states its global batch, as JSON and as a table."""
    plan = [model(), "--server", address, "--devices", "4xA100", "--training", "--batch", "2", "--objective",
            "throughput", "--parallelism", "data", "--global_batch", "4", "--deadline", "20s"]
    run = place_command(*plan, "--output", "json")
    check(run.returncode == 0, f"placement-place --output json failed ({run.returncode}): {run.stderr}")
    answer = json.loads(run.stdout)
    check(int(answer["global_batch"]) == 4 and int(answer["micro_batch_size"]) == 2
          and answer["samples_per_second"] > 0 and len(answer["stages"]) > 0,
          f"the JSON answer does not state the plan's batch: {sorted(answer)}")
    table = place_command(*plan[:-2], "--global-batch", "4", "--budget-ms", "20000")
    check(table.returncode == 0 and "global batch 8 samples (4 micro-batches of 2)" in table.stdout
          and "samples/s)" in table.stdout and "from the server's cache" in table.stdout,
          f"the table does not state the plan (or the same request missed the cache):\n{table.stdout}{table.stderr}")
    topology = os.path.join(ARGS.source, "examples", "topology", "ring_4xv100.json")
    ring = place_command(model(), "--server", address, "--topology", topology, "--algorithm", "m_topo",
                         "--seed", "7", "--dim", "batch=2", "--precision", "amp_bf16")
    check(ring.returncode == 0 and "objective    step_time" in ring.stdout,
          f"--topology FILE failed ({ring.returncode}): {ring.stderr}")


def test_command_training_step_and_config(address):
    """--micro_batch and --optimizer reach the server; a config.json is answered with a transformer's plan."""
    step = [model(), "--server", address, "--devices", "8xH100", "--training", "--batch", "32", "--micro_batch", "8",
            "--output", "json"]
    held = {}
    for optimizer in ("sgd", "adam"):
        run = place_command(*step, "--optimizer", optimizer)
        check(run.returncode == 0, f"placement-place --optimizer {optimizer} failed ({run.returncode}): {run.stderr}")
        answer = json.loads(run.stdout)
        check(int(answer["micro_batch_size"]) == 8 and int(answer["global_batch"]) == 4,
              f"--micro_batch 8 of --batch 32 gave {answer.get('global_batch')} x {answer.get('micro_batch_size')}")
        held[optimizer] = sum(int(d.get("memory", {}).get("optimizer_bytes", 0)) for d in answer["score"]["devices"])
    check(held["sgd"] == 0 < held["adam"], f"optimizer state held by sgd and adam: {held}")
    refused = place_command(*step[:-4], "--micro_batch", "5", timeout=30)
    check(refused.returncode == 3 and "micro_batch_size 5 does not divide" in refused.stderr,
          f"--micro_batch 5 of --batch 32 gave {refused.returncode}: {refused.stderr}")

    config = os.path.join(ARGS.source, "bench", "megatron", "configs", "gpt-1.7b.json")
    plan = [config, "--server", address, "--devices", "2x8xA100", "--training", "--batch", "64", "--plan", "pp=2"]
    run = place_command(*plan, "--output", "json")
    check(run.returncode == 0, f"placement-place of a config.json failed ({run.returncode}): {run.stderr}")
    transformer = json.loads(run.stdout)["transformer"]
    check(int(transformer["pp"]) == 2 and transformer["plan"].startswith("tp="), f"the plan: {transformer}")
    table = place_command(*plan)
    check(table.returncode == 0 and f"plan        {transformer['plan']}" in table.stdout
          and "from the server's cache" in table.stdout, f"the plan's table:\n{table.stdout}{table.stderr}")


def test_command_refusals(address):
    """Bad values are usage errors (2) naming the flag; a request the server refuses is bad input (3)."""
    for flags, named in ((["--deadline", "2x"], "--deadline"), (["--deadline", "0s"], "--deadline"),
                         (["--batch", "0"], "--batch"), (["--dim", "batch"], "--dim"),
                         (["--schedule", "pipe"], "--schedule"), (["--output", "yaml"], "--output"),
                         (["--devices", "2xA100", "--topology", "t.json"], "--topology")):
        run = place_command(model(), "--server", address, *flags, timeout=30)
        check(run.returncode == 2 and named in run.stderr,
              f"{' '.join(flags)} gave {run.returncode}, not a usage error naming {named}: {run.stderr}")
    refused = place_command(model(), "--server", address, "--devices", "3xNOPE", timeout=30)
    check(refused.returncode == 3 and "INVALID_ARGUMENT" in refused.stderr,
          f"an unknown device preset gave {refused.returncode}: {refused.stderr}")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_retries_and_deadlines():
    port = free_port()
    recorder = CallRecorder()
    address = f"127.0.0.1:{port}"
    channel = grpc.intercept_channel(grpc.insecure_channel(address), recorder)
    with PlacementClient(address, timeout=10, retries=2, retry_backoff=0.01, channel=channel) as client:
        try:
            client.info()
            fail("a call to a closed port succeeded")
        except grpc.RpcError as e:
            check(e.code() == grpc.StatusCode.UNAVAILABLE, f"a closed port gave {e.code()}")
        check(len(recorder.calls) == 3, f"UNAVAILABLE was tried {len(recorder.calls)} times, not 1 + 2 retries")
    # A server that comes up while the client retries: the call succeeds.
    port = free_port()
    with PlacementClient(f"127.0.0.1:{port}", timeout=60, retries=40, retry_backoff=0.05) as client:
        result = {}
        caller = threading.Thread(target=lambda: result.update(info=client.info()))
        caller.start()
        time.sleep(0.3)
        with Server(port=port):
            caller.join(timeout=60)
        check("info" in result, "the call made before the server started did not succeed once it listened")
    # The deadline goes to the server, which stops its search in time to answer within it; a deadline too short
    # for any answer is DEADLINE_EXCEEDED, not retried.
    with Server() as server, PlacementClient(server.address, timeout=60) as client:
        client.wait_until_ready(timeout=30)
        request = place_request(model("inception_v3.onnx"), devices="8xA100", budget_ms=20000, training=True)
        start = time.monotonic()
        try:
            client.place(request, timeout=2.0)
        except grpc.RpcError as e:
            check(e.code() == grpc.StatusCode.DEADLINE_EXCEEDED, f"a 2 s deadline gave {e.code()}")
        check(time.monotonic() - start < 15, "a 20 s search ignored the call's 2 s deadline")
        try:
            client.place(request, timeout=0.001)
            fail("a 1 ms deadline was met")
        except grpc.RpcError as e:
            check(e.code() == grpc.StatusCode.DEADLINE_EXCEEDED, f"a 1 ms deadline gave {e.code()}")


def test_tokens():
    try:
        PlacementClient("192.0.2.1:50051", token="secret")
        fail("a token over plaintext to another host was accepted")
    except InsecureTokenError as e:
        check("192.0.2.1:50051" in str(e) and "secret" not in str(e), f"unclear refusal: {e}")
    PlacementClient("192.0.2.1:50051", token="secret", allow_insecure_token=True).close()
    with tempfile.TemporaryDirectory() as tmp:
        token_file = os.path.join(tmp, "token")
        with open(os.open(token_file, os.O_WRONLY | os.O_CREAT, 0o600), "w") as f:
            f.write("python-client-token-77aa\n")
        with Server(f"--auth_token_file={token_file}") as server:
            request = place_request(model(), devices="2xA100", algorithm="m_topo", budget_ms=2000)
            with PlacementClient(server.address, timeout=30, token="") as anonymous:
                anonymous.wait_until_ready(timeout=30)  # health needs no token
                try:
                    anonymous.place(request)
                    fail("a call without the token was answered")
                except grpc.RpcError as e:
                    check(e.code() == grpc.StatusCode.UNAUTHENTICATED, f"no token gave {e.code()}")
            with PlacementClient(server.address, timeout=30, token="python-client-token-77aa") as client:
                check(len(client.place(request).assignment) > 0, "the call with the token got no placement")


def test_policies():
    """Named learned policies and ReloadPolicy: the real weights, a corrupt file refused, an unknown name."""
    shipped = os.path.join(ARGS.source, "models", "placement_policy.pt")
    with tempfile.TemporaryDirectory() as tmp:
        token_file = os.path.join(tmp, "token")
        with open(os.open(token_file, os.O_WRONLY | os.O_CREAT, 0o600), "w") as f:
            f.write("python-admin-token-31\n")
        with Server("--policy_device=cpu", f"--policy=second={shipped}", f"--auth_token_file={token_file}") as server:
            with PlacementClient(server.address, timeout=60, token="python-admin-token-31") as client:
                client.wait_until_ready(timeout=30)
                names = [p.name for p in client.info().policies]
                check(names == ["default", "second"], f"served policies {names}")
                request = place_request(model(), devices="2xA100", algorithm="policy", policy="second")
                answer = client.place(request)
                check("/learned-gnn-3+" in answer.policy_version, f"policy version {answer.policy_version}")
                with open(shipped, "rb") as f:
                    reloaded = client.reload_policy("second", weights=f.read())
                check(list(reloaded.reloaded) == ["second"], f"reloaded {list(reloaded.reloaded)}")
                try:
                    client.reload_policy("", weights=b"not weights")
                    fail("corrupt weights were accepted")
                except grpc.RpcError as e:
                    check(e.code() == grpc.StatusCode.DATA_LOSS, f"corrupt weights gave {e.code()}")
                request.policy = "nonesuch"
                try:
                    client.place(request)
                    fail("an unknown policy was answered")
                except grpc.RpcError as e:
                    check(e.code() == grpc.StatusCode.INVALID_ARGUMENT and "second" in e.details(), f"{e.details()}")


def make_certificates(d):
    with open(os.path.join(d, "server.ext"), "w") as f:
        f.write("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
    ec = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes"
    script = (f"openssl req -x509 {ec} -keyout ca.key -out ca.pem -days 2 -subj /CN=placement-test-ca && "
              f"openssl req {ec} -keyout server.key -out server.csr -subj /CN=localhost && "
              "openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem -days 2 "
              "-extfile server.ext")
    result = subprocess.run(script, shell=True, cwd=d, capture_output=True, text=True)
    check(result.returncode == 0, f"openssl failed: {result.stderr}")
    for name in ("server.key", "ca.key"):
        os.chmod(os.path.join(d, name), 0o600)


def test_tls():
    with tempfile.TemporaryDirectory() as d:
        make_certificates(d)
        with Server(f"--tls_cert={d}/server.pem", f"--tls_key={d}/server.key") as server:
            with secure_client(server.address, f"{d}/ca.pem", timeout=30, token="over-tls") as client:
                client.wait_until_ready(timeout=30)
                check(len(client.algorithms().algorithms) > 0, "no algorithms over TLS")
            with PlacementClient(server.address, timeout=3, retries=0) as plaintext:
                try:
                    plaintext.info()
                    fail("a plaintext client reached a TLS-only server")
                except grpc.RpcError as e:
                    check(e.code() == grpc.StatusCode.UNAVAILABLE, f"plaintext to TLS gave {e.code()}")


def main():
    global ARGS
    parser = argparse.ArgumentParser()
    parser.add_argument("--server-binary", required=True)
    parser.add_argument("--source", required=True)
    parser.add_argument("--scripts", required=True, help="the environment's bin/ folder")
    ARGS = parser.parse_args()
    check(os.path.dirname(placement_client.__file__).find("site-packages") >= 0,
          f"placement_client was not imported from the installed package: {placement_client.__file__}")
    with Server() as server:
        test_place_cache_and_routing_header(server.address)
        test_measured_costs_and_bad_graph(server.address)
        test_command(server.address)
        test_command_plan_options(server.address)
        test_command_training_step_and_config(server.address)
        test_command_refusals(server.address)
    test_retries_and_deadlines()
    test_tokens()
    test_policies()
    test_tls()
    print("PASSED")
    return 0


if __name__ == "__main__":
    sys.exit(main())
