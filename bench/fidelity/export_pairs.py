#!/usr/bin/python3
"""One model, two exports: the step time predicted for the TorchScript export (opset 17) and the dynamo export
(opset 20) of each model in ../shared/bench/gpu_h100, against each other and against the step time measured on
the H100 (steps.tsv there), on the shipped calibrated H100 topologies.

    bench/fidelity/export_pairs.py [--placectl build/client/placectl] [--models bert_base,...]

Exits 1 when two exports of a model are predicted more than --tolerance apart (default 0.15); skips, saying so,
without ../shared.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SHARED = os.path.join(ROOT, "..", "shared", "bench", "gpu_h100")
TOPOLOGY = {"fp32": "examples/topology/h100_pytorch_float32.json",
            "amp_bf16": "examples/topology/h100_pytorch_bfloat16.json"}
MEASURED_DTYPE = {"fp32": "fp32", "amp_bf16": "bf16"}


def link_exports(workdir):
    """Each export beside a sparse file of its external data's size: shapes and sizes are what the model reads."""
    with open(os.path.join(SHARED, "exports.tsv")) as f:
        for line in f.read().splitlines()[1:]:
            onnx, data, size = line.split("\t")[:3]
            with open(os.path.join(workdir, data), "wb") as sparse:
                sparse.truncate(int(size))
            os.symlink(os.path.join(SHARED, onnx), os.path.join(workdir, onnx))


def measured_steps():
    steps = {}
    with open(os.path.join(SHARED, "steps.tsv")) as f:
        for line in f.read().splitlines()[1:]:
            model, dtype, mode, seconds = line.split("\t")[:4]
            steps[(model, dtype, mode)] = float(seconds)
    return steps


def predict(placectl, model_file, precision, training):
    cmd = [placectl, "place", model_file, "--topology", os.path.join(ROOT, TOPOLOGY[precision]), "--precision",
           precision, "--batch", "32", "--algorithm", "single_device", "--output", "json"]
    out = subprocess.run(cmd + (["--training"] if training else []), capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        raise SystemExit("%s: %s" % (" ".join(cmd), out.stderr.strip()))
    return json.loads(out.stdout)["value"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--placectl", default=os.path.join(ROOT, "build/client/placectl"))
    ap.add_argument("--models", default="bert_base,convnext_base,efficientnet_v2_s,swin_s")
    ap.add_argument("--tolerance", type=float, default=0.15)
    a = ap.parse_args()
    if not os.path.isdir(SHARED):
        print("SKIPPED: %s is absent (the shared H100 exports)" % SHARED)
        return 0
    workdir = tempfile.mkdtemp(prefix="export_pairs_")
    link_exports(workdir)
    steps = measured_steps()
    print("%-18s %-9s %-9s %9s %9s %9s %7s %7s %7s" % ("model", "mode", "precision", "measured", "legacy", "dynamo",
                                                     "l/d", "l/meas", "d/meas"))
    worst = 1.0
    for model in a.models.split(","):
        for mode in ("inference", "training"):
            for precision in ("fp32", "amp_bf16"):
                legacy, dynamo = (predict(a.placectl, os.path.join(workdir, "%s_%s.onnx" % (model, e)), precision,
                                          mode == "training") for e in ("legacy", "dynamo"))
                measured = steps.get((model, MEASURED_DTYPE[precision], mode))
                ratio = legacy / dynamo
                worst = max(worst, ratio, 1 / ratio)
                print("%-18s %-9s %-9s %9.2f %9.2f %9.2f %7.3f %7.2f %7.2f" % (
                    model, mode, precision, measured * 1e3, legacy * 1e3, dynamo * 1e3, ratio, legacy / measured,
                    dynamo / measured))
    print("times in ms; the two exports' predictions at most %.3fx apart" % worst)
    return 0 if worst <= 1 + a.tolerance else 1


if __name__ == "__main__":
    sys.exit(main())
