#!/usr/bin/python3
"""A placement run for real: two-stage pipelines on this machine's two cores, measured against the prediction.

    /usr/bin/python3 bench/pipeline/pipeline_fidelity.py --placectl build/client/placectl [--models resnet18,...]
        [--batch 8] [--micro-batches 8] [--out DIR]

The cluster is this host's two cores as two devices: `placectl calibrate --threads 1` measures one core, and the
link between the two is measured here (a gloo ping-pong between two processes pinned to the two cores, fitted to
latency + bytes / bandwidth). For each model: scripts/profile_model.py records its operators' times on one core
(the costs the placement uses, as docs/measured-costs.md tells users to do on their own hardware), `placectl place
--objective throughput --algorithm pipeline_dp` splits it in two stages and predicts the time per micro-batch
(the slowest stage with its transfers), and placement_client.torch.pipeline runs the two stages as two processes
pinned to one core each, micro-batches passed over gloo, timing the steady state. Profiles and stages run with
glibc's malloc keeping freed memory (placement_client.torch's ALLOCATOR_ENVIRONMENT, which profile_model.py and
pipeline() set for themselves), as PyTorch's caching allocator does on a GPU. Prints measured against
predicted per model and writes results.tsv.
"""

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import warnings

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torchvision

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SIZES = [4 << 10, 64 << 10, 512 << 10, 2 << 20, 8 << 20]


def _one_way(rank, buffer, repeats):
    """Median of `repeats` round trips of `buffer` between the two processes, halved."""
    times = []
    for _ in range(repeats):
        dist.barrier()
        start = time.perf_counter()
        if rank == 0:
            dist.send(buffer, 1)
            dist.recv(buffer, 1)
        else:
            dist.recv(buffer, 0)
            dist.send(buffer, 0)
        times.append((time.perf_counter() - start) / 2)
    return statistics.median(times)


def _ping_pong(rank, port, results):
    os.sched_setaffinity(0, {rank})
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=2)
    for size in SIZES:  # warms the connection and the allocator; not kept
        _one_way(rank, torch.zeros(size // 4), 5)
    one_way = {size: min(_one_way(rank, torch.zeros(size // 4), 20) for _ in range(3)) for size in SIZES}
    if rank == 0:
        results.put(one_way)
    dist.destroy_process_group()


def measure_link():
    """(latency s, bandwidth B/s): least squares of one-way time = latency + bytes / bandwidth."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    results = mp.get_context("spawn").SimpleQueue()
    mp.spawn(_ping_pong, args=(port, results), nprocs=2, join=True)
    one_way = results.get()
    xs, ys = list(one_way), list(one_way.values())
    mx, my = statistics.mean(xs), statistics.mean(ys)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    return max(my - slope * mx, 0.0), 1 / slope, one_way


def two_core_topology(placectl, out):
    """The calibrated core twice, as accelerators (so that tensors between them cost a transfer, which CPU
    devices of a Tarnawski graph do not pay), with the measured link between them."""
    calibrated = os.path.join(out, "core.json")
    subprocess.run([placectl, "calibrate", "--threads", "1", "--output", calibrated], check=True,
                   capture_output=True, text=True)
    with open(calibrated) as f:
        core = json.load(f)["devices"][0]
    latency, bandwidth, one_way = measure_link()
    devices = []
    for i in range(2):
        device = dict(core, name=f"core{i}", type="accelerator", host=0)
        devices.append(device)
    topology = {"name": "this host's two cores", "devices": devices,
                "links": {"bandwidth": bandwidth, "latency": latency}}
    path = os.path.join(out, "two_cores.json")
    with open(path, "w") as f:
        json.dump(topology, f, indent=1)
    print(f"core: {core['peak_flops'] / 1e9:.1f} GFLOP/s GEMM; link: {latency * 1e6:.0f} us + bytes / "
          f"{bandwidth / 1e9:.2f} GB/s (one-way " +
          ", ".join(f"{s >> 10} KiB {t * 1e3:.2f} ms" for s, t in one_way.items()) + ")", flush=True)
    return path


def build(name, batch):
    kwargs = {"aux_logits": False, "init_weights": True} if name in ("googlenet", "inception_v3") else {}
    model = torchvision.models.get_model(name, weights=None, **kwargs).eval()
    size = 299 if name == "inception_v3" else 224
    return model, (torch.randn(batch, 3, size, size),)


def predict(placectl, model_name, batch, topology, work):
    """Profiles the model on one core, then asks for the two-stage split with those measured costs."""
    folder = os.path.join(work, f"{model_name}_b{batch}")
    subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "scripts", "profile_model.py"), model_name, "--batch",
                    str(batch), "--threads", "1", "--steps", "3", "--warmup", "2", "--out", folder],
                   check=True, capture_output=True, text=True)
    run = subprocess.run([placectl, "place", os.path.join(folder, "model.onnx"), "--topology", topology,
                          "--objective", "throughput", "--algorithm", "pipeline_dp", "--costs",
                          os.path.join(folder, "trace.json"), "--costs_kind", "cpu", "--policy_device=none",
                          "--output", "json"], check=True, capture_output=True, text=True)
    return json.loads(run.stdout)


def main():
    from placement_client.torch import pipeline
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--placectl", required=True)
    parser.add_argument("--models", default="resnet18,resnet50,mobilenet_v2,densenet121,googlenet,vgg11_bn,"
                                            "squeezenet1_1,regnet_y_400mf,efficientnet_b0,vit_b_16")
    parser.add_argument("--batch", type=int, default=8, help="samples per micro-batch")
    parser.add_argument("--micro-batches", type=int, default=8)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    out = args.out or tempfile.mkdtemp(prefix="pipeline_fidelity_")
    os.makedirs(out, exist_ok=True)
    warnings.simplefilter("ignore")
    topology = two_core_topology(args.placectl, out)
    rows = []
    print(f"{'model':18s} {'stages (modules)':34s} {'predicted':>10s} {'measured':>10s} {'ratio':>6s}", flush=True)
    for name in args.models.split(","):
        answer = predict(args.placectl, name, args.batch, topology, out)
        model, inputs = build(name, args.batch)
        run = pipeline(model, answer, inputs, micro_batches=args.micro_batches, repeats=3,
                       cores={"core0": [0], "core1": [1]})
        stages = ", ".join(f"{d}:{sum(1 for v in answer['modules'].values() if v == d)}" for d in run.stages)
        rows.append((name, args.batch, answer["value"], run.seconds_per_micro_batch, stages))
        print(f"{name:18s} {stages:34s} {answer['value'] * 1e3:8.1f}ms {run.seconds_per_micro_batch * 1e3:8.1f}ms "
              f"{answer['value'] / run.seconds_per_micro_batch:6.2f}", flush=True)
    with open(os.path.join(out, "results.tsv"), "w") as f:
        f.write("model\tbatch\tpredicted_s\tmeasured_s\tstages\n")
        f.writelines("\t".join(str(v) for v in r) + "\n" for r in rows)
    errors = [abs(r[2] / r[3] - 1) for r in rows]
    print(f"{len(rows)} models: median error {statistics.median(errors) * 100:.1f}%, worst {max(errors) * 100:.1f}%, "
          f"within 15%: {sum(e <= 0.15 for e in errors)}; results in {out}")


if __name__ == "__main__":
    sys.exit(main())
