#!/usr/bin/python3
"""The preset a user reaches for, `--devices 1xH100`, against one H100's measured step times: every export in
../shared/bench/gpu_h100 (both exporters) and the folder's four other torchvision models (exported here in training
mode by Debian's torch, as bench/memory/h100_memory.py does), float32 and bf16 autocast, inference and a training
step with Adam, at batch 32 (BERT 32 x 128 tokens). Beside it, in the same run, the datasheet's H100 (989 TFLOP/s, 3.35 TB/s, every
class at the roofline: a topology file naming the preset) that `--devices 1xH100` used to mean.

    bench/fidelity/preset_h100.py [--placectl build/client/placectl] [--out preset_h100.tsv]

None of these models was used to fit anything: the preset's figures are the H100's benchmark layers
(graph/device_data/h100_*.json), its host multiples were fitted on torchvision models at batch 32. Skips, saying
so, without ../shared.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

from export_pairs import MEASURED_DTYPE, ROOT, SHARED, link_exports, measured_steps

sys.path.insert(0, os.path.join(ROOT, "bench", "memory"))
from h100_memory import export_torchvision  # noqa: E402  (one export of the four for both benchmarks)

# A kind other than the preset's name keeps the datasheet's figures (a topology file's unchanged preset device gets
# the measured ones, as --devices does).
DATASHEET = {"name": "datasheet H100", "devices": [{"name": "gpu0", "preset": "H100", "kind": "H100 datasheet"}]}
MODELS = ("bert_base", "convnext_base", "efficientnet_v2_s", "swin_s")


def predict(placectl, model_file, precision, training, cluster):
    cmd = [placectl, "place", model_file, *cluster, "--precision", precision, "--batch", "32", "--algorithm",
           "single_device", "--output", "json"]
    out = subprocess.run(cmd + (["--training"] if training else []), capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        raise SystemExit("%s: %s" % (" ".join(cmd), out.stderr.strip()))
    return json.loads(out.stdout)["value"]


def summary(name, ratios):
    errors = [abs(r - 1) for r in ratios]
    within = lambda x: sum(e <= x for e in errors)
    print("%-10s cases %2d  median ratio %.2f  median error %5.1f%%  within 10%% %2d  within 20%% %2d  worst %.2fx" % (
        name, len(ratios), statistics.median(ratios), 100 * statistics.median(errors), within(0.10), within(0.20),
        max(max(ratios), 1 / min(ratios))))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--placectl", default=os.path.join(ROOT, "build/client/placectl"))
    ap.add_argument("--out", default="")
    a = ap.parse_args()
    if not os.path.isdir(SHARED):
        print("SKIPPED: %s is absent (the shared H100 exports)" % SHARED)
        return 0
    workdir = tempfile.mkdtemp(prefix="preset_h100_")
    link_exports(workdir)
    datasheet = os.path.join(workdir, "datasheet_h100.json")
    with open(datasheet, "w") as f:
        json.dump(DATASHEET, f)
    steps = measured_steps()
    rows, preset_ratios, datasheet_ratios = [], [], []
    print("%-18s %-7s %-9s %-9s %9s %9s %9s %7s %7s" % ("model", "export", "mode", "precision", "measured", "preset",
                                                       "datasheet", "p/meas", "d/meas"))
    cases = [(model, export, "%s_%s.onnx" % (model, export)) for model in MODELS for export in ("legacy", "dynamo")]
    cases += [(f[:-len("_train.onnx")], "train", f) for f in export_torchvision(workdir)]
    for model, export, onnx_file in cases:
        for mode in ("inference", "training"):
            for precision in ("fp32", "amp_bf16"):
                measured = steps.get((model, MEASURED_DTYPE[precision], mode))
                if measured is None:
                    continue
                onnx = os.path.join(workdir, onnx_file)
                p = predict(a.placectl, onnx, precision, mode == "training", ["--devices", "1xH100"])
                d = predict(a.placectl, onnx, precision, mode == "training", ["--topology", datasheet])
                preset_ratios.append(p / measured)
                datasheet_ratios.append(d / measured)
                rows.append((model, export, mode, precision, measured, p, d))
                print("%-18s %-7s %-9s %-9s %9.2f %9.2f %9.2f %7.2f %7.2f" % (
                    model, export, mode, precision, measured * 1e3, p * 1e3, d * 1e3, p / measured, d / measured))
    print("times in ms")
    shared = [r[1] != "train" for r in rows]
    for name, ratios in (("1xH100", preset_ratios), ("datasheet", datasheet_ratios)):
        summary(name, ratios)
        summary(name + ", shared exports", [x for x, s in zip(ratios, shared) if s])
    if a.out:
        with open(a.out, "w") as f:
            f.write("model\texport\tmode\tprecision\tmeasured_s\tpreset_s\tdatasheet_s\n")
            for r in rows:
                f.write("%s\t%s\t%s\t%s\t%.6g\t%.6g\t%.6g\n" % r)
    return 0


if __name__ == "__main__":
    sys.exit(main())
