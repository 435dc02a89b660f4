#!/usr/bin/python3
"""Measures the bytes autograd saves in a training step of real models and compares them with the memory model.

For each model: its training-mode forward runs under torch.autograd.graph.saved_tensors_hooks, which sees every
tensor an operator keeps for its backward; the distinct storages among them (parameters and the input batch aside,
which are resident anyway) are what the step holds at the end of its forward pass. The same model is exported to
ONNX in training mode (batch normalization and dropout kept, as they run) and `placectl memory --training` gives the
model's figure for it. Run with Debian's interpreter:

    /usr/bin/python3 scripts/measure_saved_tensors.py --placectl build/client/placectl [--batch 2] [--out DIR]

Prints one line per model (measured, predicted, ratio) and writes them to DIR/saved_tensors.tsv; exits 1 when a
model is off by more than --tolerance. The test Memory.SavedTensorsMatchAutograd (tests/CMakeLists.txt) runs it on six models.
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

# Every corpus model (tests/data/corpus, made by export_corpus.py) and twenty-three more torchvision architectures,
# of every block kind they use.
DEFAULT_MODELS = [
    "resnet50", "inception_v3", "vgg16", "mobilenet_v3_large", "transformer_encoder", "transformer_decoder",
    "lstm_seq2seq", "gru_seq2seq",
    "alexnet", "resnet18", "resnet34", "resnet101", "resnext50_32x4d", "wide_resnet50_2", "vgg11", "vgg13_bn",
    "vgg19_bn", "densenet121", "densenet169", "googlenet", "squeezenet1_0", "squeezenet1_1", "mobilenet_v2",
    "mobilenet_v3_small", "shufflenet_v2_x1_0", "mnasnet0_5", "mnasnet1_0", "efficientnet_b0", "regnet_x_400mf",
    "regnet_y_400mf", "convnext_tiny",
]


def corpus_factories():
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import export_corpus  # the corpus's own model definitions and example inputs
    return {stem: factory for stem, _, _, factory in export_corpus.MODELS}


def build_case(name, batch):
    """The model, its inputs and the export's input names and dynamic axes."""
    corpus = corpus_factories()
    if name in corpus and not hasattr(torchvision.models, name):
        torch.manual_seed(0)
        model, args, input_names, dynamic_axes = corpus[name]()
        return without_random_masks(model), args, input_names, dynamic_axes
    model = build_model(name)
    return model, (input_for(name, batch),), ["input"], {"input": {0: "batch"}}


def build_model(name):
    kwargs = {"weights": None}
    if name in ("inception_v3", "googlenet"):
        kwargs["aux_logits"] = False
        kwargs["init_weights"] = False
    return without_random_masks(getattr(torchvision.models, name)(**kwargs))


def without_random_masks(model):
    """Dropout and stochastic depth as the identity in both runs. On the CPU eager PyTorch keeps dropout's mask
    as a float32 tensor (input * noise), on CUDA as one byte per element (native_dropout), which is what the model
    counts; stochastic depth draws with Bernoulli, which the ONNX exporter refuses in training mode."""
    for parent in list(model.modules()):
        for child_name, child in parent.named_children():
            if isinstance(child, torch.nn.Dropout):
                setattr(parent, child_name, torch.nn.Identity())  # gone from the export too, not a Dropout of rate 0
            elif type(child).__name__ == "StochasticDepth":
                child.p = 0.0
    for module in model.modules():  # nn.MultiheadAttention and the Transformer layers keep their own rate
        if hasattr(module, "dropout") and isinstance(module.dropout, float):
            module.dropout = 0.0
    return model


def input_for(name, batch):
    side = 299 if name == "inception_v3" else 224
    return torch.randn(batch, 3, side, side)


def storage_key(t):
    s = t.storage()
    return s.data_ptr(), s.nbytes()


def measure_saved_bytes(model, args, autocast_dtype=None):
    """Bytes of the distinct storages autograd saves in one training forward, parameters and inputs aside."""
    resident = {storage_key(p)[0] for p in model.parameters()}
    resident.update(storage_key(x)[0] for x in args)
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
                out = model(*args)
        else:
            out = model(*args)
    del out
    return sum(saved.values())


def export_training(model, args, input_names, dynamic_axes, path):
    model.train()
    warnings.filterwarnings("ignore", category=UserWarning)  # one line per BatchNorm's step counter
    torch.onnx.export(model, args, path, training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False,
                      export_params=False, input_names=input_names, dynamic_axes=dynamic_axes, opset_version=14)


def predicted_saved_bytes(placectl, path, batch, seq, precision):
    sequence = [f"--seq={seq}"] if seq > 0 else []  # the image models have no sequence to bind
    result = subprocess.run([placectl, "memory", path, "--training", f"--batch={batch}", *sequence,
                             f"--precision={precision}", "--output=json"],
                            capture_output=True, text=True, timeout=600)
    if result.returncode != 0:
        raise RuntimeError(f"placectl memory {path}: exit {result.returncode}: {result.stderr.strip()}")
    return json.loads(result.stdout)["memory"]["activations"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--placectl", required=True)
    parser.add_argument("--models", default=",".join(DEFAULT_MODELS))
    parser.add_argument("--batch", type=int, default=2)
    parser.add_argument("--precision", default="fp32", choices=["fp32", "amp_bf16"],
                        help="amp_bf16: the forward runs under torch.autocast('cpu', torch.bfloat16)")
    parser.add_argument("--tolerance", type=float, default=0.02, help="largest relative error accepted")
    parser.add_argument("--out", default="", help="folder for the exports and saved_tensors.tsv (default: a temp one)")
    args = parser.parse_args()
    torch.manual_seed(0)
    out = args.out or tempfile.mkdtemp(prefix="saved_tensors_")
    os.makedirs(out, exist_ok=True)
    rows, worst = [], 0.0
    for name in [m for m in args.models.split(",") if m]:
        model, inputs, input_names, dynamic_axes = build_case(name, args.batch)
        batch = inputs[0].shape[0]
        seq = inputs[0].shape[1] if inputs[0].dim() >= 2 and "seq" in str(dynamic_axes) else 0
        measured = measure_saved_bytes(model, inputs, torch.bfloat16 if args.precision == "amp_bf16" else None)
        path = os.path.join(out, f"{name}.onnx")
        export_training(model, inputs, input_names, dynamic_axes, path)
        predicted = predicted_saved_bytes(args.placectl, path, batch, seq, args.precision)
        ratio = predicted / measured if measured else float("inf")
        worst = max(worst, abs(ratio - 1))
        rows.append((name, batch, measured, predicted, ratio))
        print(f"{name:22s} batch {batch}  measured {measured / 2**20:9.2f} MiB  model {predicted / 2**20:9.2f} MiB"
              f"  ratio {ratio:.4f}", flush=True)
    with open(os.path.join(out, "saved_tensors.tsv"), "w") as f:
        f.write("model\tbatch\tmeasured_bytes\tpredicted_bytes\tratio\n")
        for r in rows:
            f.write(f"{r[0]}\t{r[1]}\t{r[2]}\t{r[3]}\t{r[4]:.4f}\n")
    print(f"{len(rows)} models, worst error {100 * worst:.2f}% (tolerance {100 * args.tolerance:.1f}%)")
    return 0 if worst <= args.tolerance else 1


if __name__ == "__main__":
    sys.exit(main())
