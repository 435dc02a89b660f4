#!/usr/bin/python3
"""Step times of torchvision models on a CUDA GPU, measured as fidelity.py measures them on a CPU: the reference
that the step times the service predicts for a calibrated GPU (scripts/measure_torch_device.py, then
`placectl calibrate --measurements`) are compared with.

    python3 bench/fidelity/gpu_steps.py --out DIR [--models resnet18,...] [--batches 1,8,32]
        [--modes inference,training] [--budget 0.5] [--device cuda]

Each model is built as fidelity.py builds it (its build(): no pretrained weights, GoogLeNet without auxiliary
heads), in float32 with PyTorch's default settings (cuDNN autotuning off, TF32 as PyTorch sets it), and timed as
fidelity.py's measure() times it: the median step after two warm-up steps, at least 3 and at most 50 steps,
repeated for at least --budget seconds; a training step is zero_grad, forward, out.sum().backward() and an Adam
step. On a GPU each timed step ends with torch.cuda.synchronize(), so a step's time is the GPU's work, not the
launches queued. Writes DIR/results.tsv (model, batch, threads, mode, measured_s; threads is "gpu" on a GPU), a
row as soon as it is measured, and prints one line per case.
"""

import argparse
import copy
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fidelity import build, measure  # noqa: E402  (the models and the timing exactly as fidelity.py's)

DEFAULT_MODELS = ("resnet18,resnet50,mobilenet_v2,mobilenet_v3_large,efficientnet_b0,densenet121,vgg11_bn,"
                  "convnext_tiny,regnet_y_400mf,shufflenet_v2_x1_0,squeezenet1_1,googlenet,mnasnet1_0,"
                  "resnext50_32x4d,vit_b_16,alexnet")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", default=DEFAULT_MODELS)
    p.add_argument("--batches", default="1,8,32")
    p.add_argument("--modes", default="inference,training")
    p.add_argument("--budget", type=float, default=0.5, help="seconds of measured steps per case")
    p.add_argument("--device", default="cuda", help="cuda (cuda:N) or cpu")
    p.add_argument("--out", required=True, help="folder for results.tsv")
    args = p.parse_args()
    modes = args.modes.split(",")
    if any(m not in ("inference", "training") for m in modes):
        p.error(f"--modes takes inference and training, got {args.modes}")
    device = torch.device(args.device)
    if device.type == "cuda":
        if not torch.cuda.is_available():
            p.error(f"--device {args.device}: this PyTorch sees no CUDA device")
        torch.backends.cudnn.benchmark = False  # PyTorch's default, stated: no per-shape autotuning in the steps
        threads = "gpu"

        def sync():
            torch.cuda.synchronize(device)
    else:
        threads = str(torch.get_num_threads())

        def sync():
            pass
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, "results.tsv")
    failed = 0
    with open(path, "w") as tsv:
        tsv.write("model\tbatch\tthreads\tmode\tmeasured_s\n")
        print(f"{'model':22s} {'batch':>5s} {'mode':9s} {'measured':>10s}", flush=True)
        for name in args.models.split(","):
            for batch in [int(b) for b in args.batches.split(",")]:
                torch.manual_seed(0)
                model, x = build(name, batch)  # built once; each mode times its own copy, as fidelity.py's fresh one
                x = x.to(device)
                for mode in modes:
                    try:
                        measured = measure(copy.deepcopy(model).to(device), x, mode == "training", args.budget, sync)
                    except RuntimeError as e:  # out of memory, a kernel missing for this device: the others go on
                        failed += 1
                        print(f"{name} batch {batch} {mode}: failed: {e}", file=sys.stderr, flush=True)
                        if device.type == "cuda":
                            torch.cuda.empty_cache()
                        continue
                    tsv.write(f"{name}\t{batch}\t{threads}\t{mode}\t{measured}\n")
                    tsv.flush()
                    print(f"{name:22s} {batch:5d} {mode:9s} {measured * 1e3:9.2f}ms", flush=True)
                del model, x
    print(f"results in {path}" + (f"; {failed} cases failed" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
