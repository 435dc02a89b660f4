#!/usr/bin/python3
"""Predicted peak memory of one step against one H100's measured peaks (../shared/bench/gpu_h100/memory.tsv).

For every ONNX export in the shared folder (both exporters) and every torchvision model of memory.tsv exported
here in training mode (batch normalization kept, as it runs), `placectl memory` predicts the peak of one step on
one H100 at the measured batch (32 images, or 32 sequences of 128 tokens), float32 and under bf16 autocast
(--precision amp_bf16), inference and a training step with Adam, and prints the ratio to
torch.cuda.max_memory_allocated. The training-mode exports serve inference too: eager PyTorch runs an eval-mode
batch normalization as an operator of its own, as they keep it.

    /usr/bin/python3 bench/memory/h100_memory.py --placectl build/client/placectl [--shared ../shared] [--out DIR]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import warnings

TORCHVISION_TRAINING_EXPORTS = ["wide_resnet50_2", "resnet152", "densenet201", "regnet_x_1_6gf"]


def measured_peaks(shared):
    peaks = {}
    with open(os.path.join(shared, "bench", "gpu_h100", "memory.tsv")) as f:
        next(f)
        for line in f:
            model, dtype, mode, peak, _ = line.rstrip("\n").split("\t")
            peaks[(model, dtype, mode)] = int(peak)
    return peaks


def lay_out_shared_exports(shared, work):
    """Links the shared .onnx files into `work` beside sparse weight files of the recorded sizes."""
    folder = os.path.abspath(os.path.join(shared, "bench", "gpu_h100"))
    files = []
    with open(os.path.join(folder, "exports.tsv")) as f:
        next(f)
        for line in f:
            onnx_file, data_file, data_bytes = line.split("\t")[:3]
            os.symlink(os.path.join(folder, onnx_file), os.path.join(work, onnx_file))
            with open(os.path.join(work, data_file), "wb") as data:
                data.truncate(int(data_bytes))
            files.append(onnx_file)
    return files


def export_torchvision(work):
    """The torchvision models of memory.tsv without a shared export, in training mode (Debian's torch)."""
    try:
        import torch
        import torchvision
    except ImportError:
        print("# python3-torch or python3-torchvision missing: the torchvision training exports are left out")
        return []
    warnings.filterwarnings("ignore", category=UserWarning)
    files = []
    for name in TORCHVISION_TRAINING_EXPORTS:
        model = getattr(torchvision.models, name)(weights=None).train()
        path = os.path.join(work, f"{name}_train.onnx")
        torch.onnx.export(model, torch.randn(32, 3, 224, 224), path, training=torch.onnx.TrainingMode.TRAINING,
                          do_constant_folding=False, export_params=False, input_names=["input"],
                          dynamic_axes={"input": {0: "batch"}}, opset_version=14)
        files.append(os.path.basename(path))
    return files


def predict(placectl, path, training, precision):
    command = [placectl, "memory", path, "--batch=32", "--seq=128", "--devices=1xH100", "--output=json",
               f"--precision={precision}"]
    if training:
        command.append("--training")
    result = subprocess.run(command, capture_output=True, text=True, timeout=900)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(command)}: exit {result.returncode}: {result.stderr.strip()}")
    return json.loads(result.stdout)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--placectl", required=True)
    parser.add_argument("--shared", default=os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared"))
    parser.add_argument("--out", default="")
    args = parser.parse_args()
    if not os.path.exists(os.path.join(args.shared, "bench", "gpu_h100", "memory.tsv")):
        print(f"SKIPPED: {args.shared}/bench/gpu_h100 is absent (the shared benchmarks are not in a user's clone)")
        return 0
    peaks = measured_peaks(args.shared)
    work = tempfile.mkdtemp(prefix="h100_memory_")
    files = lay_out_shared_exports(args.shared, work) + export_torchvision(work)
    rows = []
    for onnx_file in sorted(files):
        stem = onnx_file[:-len(".onnx")]
        model, export = stem.rsplit("_", 1)
        for dtype, precision in (("fp32", "fp32"), ("bf16", "amp_bf16")):
            for mode in ("training", "inference"):
                answer = predict(args.placectl, os.path.join(work, onnx_file), mode == "training", precision)
                measured = peaks[(model, dtype, mode)]
                ratio = answer["peak_memory"] / measured
                rows.append((model, export, dtype, mode, measured, answer["peak_memory"],
                             answer["memory"]["activations"], ratio))
                print(f"{model:18s} {export:7s} {dtype:5s} {mode:9s} measured {measured / 2**30:6.2f} GiB  "
                      f"predicted {answer['peak_memory'] / 2**30:6.2f} GiB  ratio {ratio:.3f}", flush=True)
    for dtype in ("fp32", "bf16"):
        for mode in ("training", "inference"):
            errors = [abs(r[7] - 1) for r in rows if r[2] == dtype and r[3] == mode]
            if errors:
                print(f"{dtype} {mode}: {len(errors)} cases, median error {100 * statistics.median(errors):.1f}%, "
                      f"worst {100 * max(errors):.1f}%")
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "h100_memory.tsv"), "w") as f:
            f.write("model\texport\tdtype\tmode\tmeasured_bytes\tpredicted_bytes\tactivations_bytes\tratio\n")
            for r in rows:
                f.write("\t".join(str(x) for x in r[:7]) + f"\t{r[7]:.4f}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
