#!/usr/bin/python3
"""Measures the bytes autograd saves in a training step of real models and compares them with the memory model.

For each model: its training-mode forward runs under torch.autograd.graph.saved_tensors_hooks, which sees every
tensor an operator keeps for its backward; the distinct storages among them (parameters and the input batch aside,
which are resident anyway) are what the step holds at the end of its forward pass. The same model is exported to
ONNX in training mode (batch normalization and dropout kept, as they run) and `placectl memory --training` gives the
model's figure for it. Run with Debian's interpreter:

    /usr/bin/python3 scripts/measure_saved_tensors.py --placectl build/client/placectl [--batch 2] [--out DIR]

Prints one line per model (measured, predicted, ratio) and writes them to DIR/saved_tensors.tsv; exits 1 when a
model is off by more than --tolerance. The test Memory.SavedTensorsMatchAutograd (tests/CMakeLists.txt) runs it on five models.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import warnings

try:
    import torch
    import torchvision
except ImportError as missing:  # the test's skip line: python3-torch and python3-torchvision are test packages
    print(f"SKIPPED: {missing}; install python3-torch and python3-torchvision")
    sys.exit(0)

# Every corpus CNN and twenty more torchvision architectures, of every block kind they use.
DEFAULT_MODELS = [
    "resnet50", "inception_v3", "vgg16", "mobilenet_v3_large",
    "alexnet", "resnet18", "resnet34", "resnet101", "resnext50_32x4d", "wide_resnet50_2", "vgg11", "vgg13_bn",
    "vgg19_bn", "densenet121", "densenet169", "googlenet", "squeezenet1_0", "squeezenet1_1", "mobilenet_v2",
    "mobilenet_v3_small", "shufflenet_v2_x1_0", "mnasnet0_5", "mnasnet1_0", "efficientnet_b0", "regnet_x_400mf",
    "regnet_y_400mf", "convnext_tiny",
]


def build_model(name):
    kwargs = {"weights": None}
    if name in ("inception_v3", "googlenet"):
        kwargs["aux_logits"] = False
        kwargs["init_weights"] = False
    model = getattr(torchvision.models, name)(**kwargs)
    # Stochastic depth draws with Bernoulli, which the ONNX exporter refuses in training mode; at p = 0 it is the
    # identity in both runs (its per-sample mask is a few bytes either way).
    for module in model.modules():
        if type(module).__name__ == "StochasticDepth":
            module.p = 0.0
    return model


def input_for(name, batch):
    side = 299 if name == "inception_v3" else 224
    return torch.randn(batch, 3, side, side)


def storage_key(t):
    s = t.storage()
    return s.data_ptr(), s.nbytes()


def measure_saved_bytes(model, x, autocast_dtype=None):
    """Bytes of the distinct storages autograd saves in one training forward, parameters and input aside."""
    resident = {storage_key(p)[0] for p in model.parameters()}
    resident.add(storage_key(x)[0])
    saved = {}

    def pack(t):
        if t.layout == torch.strided and t.device.type == "cpu":
            ptr, nbytes = storage_key(t)
            if ptr not in resident and ptr != 0:
                saved[ptr] = max(saved.get(ptr, 0), nbytes)
        return t

    model.train()
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        if autocast_dtype is not None:
            with torch.autocast("cpu", dtype=autocast_dtype):
                out = model(x)
        else:
            out = model(x)
    del out
    return sum(saved.values())


def export_training(model, x, path):
    model.train()
    warnings.filterwarnings("ignore", category=UserWarning)  # one line per BatchNorm's step counter
    torch.onnx.export(model, x, path, training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False,
                      export_params=False, input_names=["input"], dynamic_axes={"input": {0: "batch"}},
                      opset_version=14)


def predicted_saved_bytes(placectl, path, batch):
    result = subprocess.run([placectl, "memory", path, "--training", f"--batch={batch}", "--output=json"],
                            capture_output=True, text=True, timeout=600)
    if result.returncode != 0:
        raise RuntimeError(f"placectl memory {path}: exit {result.returncode}: {result.stderr.strip()}")
    return json.loads(result.stdout)["memory"]["activations"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--placectl", required=True)
    parser.add_argument("--models", default=",".join(DEFAULT_MODELS))
    parser.add_argument("--batch", type=int, default=2)
    parser.add_argument("--tolerance", type=float, default=0.02, help="largest relative error accepted")
    parser.add_argument("--out", default="", help="folder for the exports and saved_tensors.tsv (default: a temp one)")
    args = parser.parse_args()
    torch.manual_seed(0)
    out = args.out or tempfile.mkdtemp(prefix="saved_tensors_")
    os.makedirs(out, exist_ok=True)
    rows, worst = [], 0.0
    for name in [m for m in args.models.split(",") if m]:
        model = build_model(name)
        x = input_for(name, args.batch)
        measured = measure_saved_bytes(model, x)
        path = os.path.join(out, f"{name}.onnx")
        export_training(model, x, path)
        predicted = predicted_saved_bytes(args.placectl, path, args.batch)
        ratio = predicted / measured if measured else float("inf")
        worst = max(worst, abs(ratio - 1))
        rows.append((name, args.batch, measured, predicted, ratio))
        print(f"{name:22s} batch {args.batch}  measured {measured / 2**20:9.2f} MiB  model {predicted / 2**20:9.2f} MiB"
              f"  ratio {ratio:.4f}", flush=True)
    with open(os.path.join(out, "saved_tensors.tsv"), "w") as f:
        f.write("model\tbatch\tmeasured_bytes\tpredicted_bytes\tratio\n")
        for r in rows:
            f.write(f"{r[0]}\t{r[1]}\t{r[2]}\t{r[3]}\t{r[4]:.4f}\n")
    print(f"{len(rows)} models, worst error {100 * worst:.2f}% (tolerance {100 * args.tolerance:.1f}%)")
    return 0 if worst <= args.tolerance else 1


if __name__ == "__main__":
    sys.exit(main())
