#!/usr/bin/python3
"""Profiles a PyTorch model for the placement service: exports its graph to ONNX (without weights) and records
a torch.profiler trace whose module annotations let the service match measured times to the exported operators.

    /usr/bin/python3 scripts/profile_model.py resnet18 --batch 8 --out /tmp/resnet18 [--training] [--threads 1]
    (writes model.onnx, trace.json and meta.json: what was profiled, for placectl calibrate --profiles)
    placectl place /tmp/resnet18/model.onnx --batch 8 --costs /tmp/resnet18/trace.json --costs_kind cpu ...

MODEL is a torchvision architecture (resnet18, mobilenet_v2, vit_b_16, ...) or `file.py:factory`, a function
returning (model, example_inputs). Run it on the device the placement is for (a GPU with --device cuda): the
trace's times are that device's. What it records:

- every module call is wrapped in a `record_function` named `module:<path>#<call>` (`module:layer1.0.relu#2`: the
  third call of that module in one forward), which the exporter's node names (`/layer1/layer1.0/relu_2/Relu`)
  lead back to;
- `--warmup` untimed steps, then `--steps` timed without the profiler (their median is meta.json's
  `unprofiled_step_seconds`: the profiler's own cost per recorded range is not in it), then `--warmup` and
  `--steps` profiled ones, each a `ProfilerStep#N`;
- with --training, each step is a forward in training mode, a sum of the outputs as the loss, a backward and an
  Adam step. The service takes the forward times of the modules from it; torch 1.13's trace carries no sequence
  numbers that would tie backward ops to modules, so backward operators derive from the measured forward times
  (docs/measured-costs.md).

The trace is torch's Chrome-trace JSON (chrome://tracing and Perfetto open it too).
"""

import argparse
import importlib.util
import inspect
import json
import os
import statistics
import sys
import time
import warnings

import torch
import torchvision


def load(spec, batch):
    if ":" in spec:
        path, factory = spec.split(":", 1)
        module_spec = importlib.util.spec_from_file_location("user_model", path)
        module = importlib.util.module_from_spec(module_spec)
        module_spec.loader.exec_module(module)
        return getattr(module, factory)()
    model = torchvision.models.get_model(spec, weights=None)
    size = 299 if spec == "inception_v3" else 224
    return model, (torch.randn(batch, 3, size, size),)


def export(model, inputs, path, opset):
    """The graph PyTorch runs: in the model's own mode (PRESERVE, TRAINING for training), so that BatchNorm stays an
    operator of its own as in eager PyTorch rather than being folded into the convolution before it, as an
    inference export (TrainingMode.EVAL) folds it for runtimes that fuse it. A training export that torch refuses
    (stochastic depth's Bernoulli in EfficientNet, ConvNeXt) falls back to the model in eval mode, kept as it is:
    the same operators less dropout. Module paths name the nodes only with the TorchScript exporter, which torch
    2.9 and later run when asked (dynamo=False)."""
    kwargs = {"dynamo": False} if "dynamo" in inspect.signature(torch.onnx.export).parameters else {}

    def run(mode):
        torch.onnx.export(model, inputs, path, export_params=False, opset_version=opset, do_constant_folding=True,
                          training=mode, **kwargs)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if not model.training:
            return run(torch.onnx.TrainingMode.PRESERVE)
        try:
            run(torch.onnx.TrainingMode.TRAINING)
        except Exception as e:  # torch raises several types here, by exporter version
            print(f"training-mode export failed ({type(e).__name__}); exporting the model in eval mode",
                  file=sys.stderr)
            model.eval()
            run(torch.onnx.TrainingMode.PRESERVE)
            model.train()


def annotate(model):
    """Wraps every module's forward (the model's own under the path "") in record_function("module:<path>#<call>");
    returns the hooks to remove and the per-step call counter."""
    calls = {}
    open_ranges = {}
    handles = []
    for path, module in model.named_modules():
        def pre(mod, args, path=path):
            n = calls.get(path, 0)
            calls[path] = n + 1
            scope = torch.profiler.record_function(f"module:{path}#{n}")
            scope.__enter__()
            open_ranges.setdefault(path, []).append(scope)

        def post(mod, args, out, path=path):
            open_ranges[path].pop().__exit__(None, None, None)

        handles.append(module.register_forward_pre_hook(pre))
        handles.append(module.register_forward_hook(post))
    return handles, calls


def keep_freed_memory():
    """Profiles with glibc's malloc keeping freed memory, as placement_client.torch's pipeline() runs stages (else
    each step faults its large activations in again, which no placement changes); where the package is at hand."""
    sys.path.append(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "client", "python"))
    try:
        from placement_client.torch._pipeline import rerun_with_allocator_environment
    except ImportError:
        return
    rerun_with_allocator_environment()


def median_step_seconds(step, warmup, min_steps, budget=0.0, max_steps=50):
    """The median time of a call of `step` after `warmup` untimed calls: at least `min_steps` calls timed, more
    while `budget` seconds last (at most `max_steps`). bench/fidelity times its steps with it too."""
    for _ in range(warmup):
        step()
    times = []
    start = time.perf_counter()
    while len(times) < min_steps or (time.perf_counter() - start < budget and len(times) < max_steps):
        t0 = time.perf_counter()
        step()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def unprofiled_step_seconds(step, args):
    """The median time of --steps steps after --warmup ones, the profiler off: what the model's step takes when
    nothing records it."""
    sync = torch.cuda.synchronize if args.device.startswith("cuda") else (lambda: None)

    def synced_step():
        step()
        sync()

    return median_step_seconds(synced_step, args.warmup, max(args.steps, 1))


def main():
    keep_freed_memory()
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model")
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--out", required=True, help="folder for model.onnx and trace.json")
    parser.add_argument("--training", action="store_true", help="profile a training step (backward and Adam)")
    parser.add_argument("--threads", type=int, default=0, help="torch.set_num_threads (0: torch's default)")
    parser.add_argument("--device", default="cpu", help="cpu or cuda")
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--opset", type=int, default=17)
    args = parser.parse_args()
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    os.makedirs(args.out, exist_ok=True)
    model, inputs = load(args.model, args.batch)
    export(model.train(args.training), inputs, os.path.join(args.out, "model.onnx"), args.opset)
    model = model.to(args.device)
    inputs = tuple(x.to(args.device) for x in inputs)
    optimizer = torch.optim.Adam(model.parameters()) if args.training else None
    calls = None  # the module annotations' call counts, once annotate() has wrapped the modules

    def step():
        if calls is not None:
            calls.clear()
        if not args.training:
            with torch.no_grad():
                model(*inputs)
            return
        optimizer.zero_grad()
        out = model(*inputs)
        loss = sum(o.float().sum() for o in (out if isinstance(out, (tuple, list)) else [out]))
        loss.backward()
        optimizer.step()

    unprofiled = unprofiled_step_seconds(step, args)  # before the annotations, whose hooks cost time too
    handles, calls = annotate(model)
    activities = [torch.profiler.ProfilerActivity.CPU]
    if args.device.startswith("cuda"):
        activities.append(torch.profiler.ProfilerActivity.CUDA)
    schedule = torch.profiler.schedule(wait=0, warmup=args.warmup, active=args.steps)
    trace = os.path.join(args.out, "trace.json")
    with torch.profiler.profile(activities=activities, schedule=schedule,
                                on_trace_ready=lambda p: p.export_chrome_trace(trace)) as prof:
        for _ in range(args.warmup + args.steps):
            step()
            if args.device.startswith("cuda"):
                torch.cuda.synchronize()
            prof.step()
    for h in handles:
        h.remove()
    with open(os.path.join(args.out, "meta.json"), "w") as f:
        json.dump({"model": args.model, "batch": args.batch, "training": args.training, "threads": args.threads,
                   "device": args.device, "optimizer": "adam" if args.training else None,
                   "unprofiled_step_seconds": unprofiled}, f)
    print(os.path.join(args.out, "model.onnx"), trace)


if __name__ == "__main__":
    sys.exit(main())
