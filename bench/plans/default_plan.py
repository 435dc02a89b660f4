#!/usr/bin/python3
"""The default answer for a training step on several GPUs against the plans a person would otherwise run.

For each model and cluster, at one global batch in samples: the default `placectl place --training --batch B`
answer, synchronous data parallelism at the same global batch (`--parallelism data`, micro-batches of B / devices),
and the operator placement of the whole batch (`--parallelism operator`). Prints each step time and the default's
samples per second over the others' (>= 1.00 means the default is no slower).

    bench/plans/default_plan.py [--placectl build/client/placectl] [--batch 256] [--deadline 5s]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CORPUS = ["resnet50", "vgg16", "inception_v3", "mobilenet_v3_large", "transformer_encoder", "transformer_decoder"]
# Architectures no rule here was written for, where ../shared is present: the H100 set's dynamo exports.
SHARED = os.path.join(ROOT, "..", "shared", "bench", "gpu_h100")
SHARED_MODELS = ["bert_base_dynamo", "convnext_base_dynamo", "efficientnet_v2_s_dynamo", "swin_s_dynamo"]


WORKDIR = tempfile.mkdtemp(prefix="default_plan_")


def model_path(model):
    """The corpus model, or the shared export linked into a folder beside a sparse file of its external data (the
    weights are not kept; shapes and sizes are all the cost model reads, as ../shared/bench/gpu_h100/README.md says)."""
    corpus = os.path.join(ROOT, "tests/data/corpus", model + ".onnx")
    if os.path.exists(corpus):
        return corpus
    with open(os.path.join(SHARED, "exports.tsv")) as f:
        for line in f.read().splitlines()[1:]:
            onnx, data, size = line.split("\t")[:3]
            if onnx == model + ".onnx":
                with open(os.path.join(WORKDIR, data), "wb") as sparse:
                    sparse.truncate(int(size))
    link = os.path.join(WORKDIR, model + ".onnx")
    if not os.path.exists(link):
        os.symlink(os.path.join(SHARED, model + ".onnx"), link)
    return link
CLUSTERS = {"8xH100": 8, "2x8xH100": 16}


def place(placectl, model, args):
    cmd = [placectl, "place", model_path(model), "--training",
           "--output", "json"] + args
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        return None, out.stderr.strip().splitlines()[-1] if out.stderr.strip() else "exit %d" % out.returncode
    return json.loads(out.stdout), ""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--placectl", default=os.path.join(ROOT, "build/client/placectl"))
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--deadline", default="5s")
    ap.add_argument("--models", default="", help="comma-separated; default: the corpus, and ../shared's when present")
    a = ap.parse_args()
    models = a.models.split(",") if a.models else CORPUS + (SHARED_MODELS if os.path.isdir(SHARED) else [])
    print("%-20s %-9s %-16s %10s %10s %10s %8s %8s" % ("model", "cluster", "answer", "default", "data", "operator",
                                                    "vs data", "vs op"))
    worst = float("inf")
    for model in models:
        for cluster, n in CLUSTERS.items():
            common = ["--devices", cluster, "--deadline", a.deadline]
            chosen, err = place(a.placectl, model, common + ["--batch", str(a.batch)])
            if chosen is None:
                print("%-20s %-9s error: %s" % (model, cluster, err))
                continue
            m = chosen["micro_batch_size"]
            data, _ = place(a.placectl, model, common + ["--batch", str(m), "--parallelism", "data", "--objective",
                                                          "throughput", "--global_batch", str(a.batch // m)])
            # A model exported with a fixed batch has no graph of the whole batch to place operator by operator.
            fixed = any("fixed at" in n for n in chosen["notes"])
            op = None if fixed else place(a.placectl, model, common + ["--batch", str(a.batch), "--parallelism",
                                                                         "operator"])[0]
            step = chosen["step_time"]
            d = data["step_time"] if data and data["fits_memory"] else None
            o = op["value"] if op and op["fits_memory"] else None
            if not step:
                print("%-20s %-9s error: the answer states no step time" % (model, cluster))
                worst = 0
                continue
            vs_d = d / step if d else None
            vs_o = o / step if o else None
            for v in (vs_d, vs_o):
                if v:
                    worst = min(worst, v)
            answer = chosen["notes"][[i for i, s in enumerate(chosen["notes"]) if s.startswith("winner")][0]][8:]
            fmt = lambda x: "%10.2f" % (x * 1e3) if x else "%10s" % ("n/a" if fixed else "no fit")
            print("%-20s %-9s %-16s %s %s %s %8s %8s" % (model, cluster, answer[:16], fmt(step), fmt(d), fmt(o),
                                                        "%.2f" % vs_d if vs_d else "-", "%.2f" % vs_o if vs_o else "-"))
    print("step times in ms at a global batch of %d samples; worst ratio %.3f" % (a.batch, worst))
    return 0 if worst >= 1 - 1e-6 else 1


if __name__ == "__main__":
    sys.exit(main())
