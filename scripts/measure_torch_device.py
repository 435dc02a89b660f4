#!/usr/bin/python3
"""Measures a PyTorch device (a CUDA GPU, or this host's CPU) as a placement device, with the layers, shapes and
FLOP/byte counting of `placectl calibrate` (policy/learned/host_calibration.cc), and writes the measurements as
JSON for `placectl calibrate --measurements FILE`, which turns them into a calibrated device.

    python3 scripts/measure_torch_device.py --device cuda --output h200.json
    python3 scripts/measure_torch_device.py --device cuda --dtype bfloat16 --output h200_bf16.json
    /usr/bin/python3 scripts/measure_torch_device.py --device cpu --threads 4 --output cpu.json [--seconds 0.05]

Run it where the placement is for: on the GPU machine, with the PyTorch the models run with (any version from
1.13). What it measures, each as the best of three attempts of at least --seconds of repeated calls:

- peak_flops: a large float32 GEMM (4096^3 on CUDA, 1024^3 on a CPU);
- memory_bandwidth: a large tensor copy, bytes read plus bytes written (256M floats on CUDA, 32M on a CPU);
- launch_overhead: an add of one-element tensors: dispatch, not work;
- lines: each benchmark layer's forward seconds (under no_grad) and, where a training step's backward is
  measured, its backward seconds (forward plus backward() with a dense gradient, of inputs that require grad, less
  the forward with grad and less what a backward() call costs by itself, which a model's step pays once); and a parameter update over 16M parameters as a training step runs it: zero_grad, the gradient
  accumulated, Adam's step (op_class "optimizer").

Each line's op_class is the class of its operator type ("gemm", "conv", "pooling", "normalization",
"elementwise", "transcendental", "data_movement", "view", "optimizer"; "inference_batch_norm" for the batch
normalizations, timed in eval mode, which the consumer counts among the normalizations too); the consumer refines
gemm and conv by intensity (thin_gemm, thin_conv below 16 FLOPs per byte; wide_thin_conv for thin ones whose "window", kh x kw, is past 3x3;
channels_last_thin_conv for thin ones whose input is channels-last, "channels_last"), as the cost
model classes an imported operator. The numerics are PyTorch's
defaults (float32; TF32 as the settings say), which `settings` records.

On CUDA the repeated calls are queued without waiting and the loop is bracketed by torch.cuda.synchronize(): the
figure is the throughput of queued launches, which is what a model's step sees. So that queued work cannot run far
past the budget, the loop also stops after as many calls as a synchronized call's time fits into twice the budget.
"""

import argparse
import json
import math
import os
import re
import sys
import time
import warnings

import torch
import torch.nn.functional as F

# The element type the layers run in and its bytes, as --dtype sets them before the layers are made: float32, as
# PyTorch runs a model by default, or bfloat16/float16 for a device's half-precision figures (its Tensor Cores).
DTYPE = torch.float32
FLOAT = 4
ADAM_PARAMETERS = 16 << 20


class Layer:
    """One benchmark layer: the importer's FLOPs and bytes for it, how to make its inputs, and its forward."""

    def __init__(self, op_class, name, flops, nbytes, shapes, forward, backward_ops):
        self.op_class = op_class
        self.name = name
        self.flops = float(flops)
        self.bytes = float(nbytes)
        self.shapes = shapes  # input shapes, made with randn on the device outside the timing
        self.forward = forward
        self.backward_ops = backward_ops  # operators of its training-step backward (0: backward not measured)
        self.window = 0  # a convolution's kernel window, kh x kw
        self.channels_last = False  # its first input laid out channels-last, as the importer marks ConvNeXt's


def conv(n, c, hw, out, k, stride, groups):
    pad = k // 2
    ohw = (hw + 2 * pad - k) // stride + 1
    outputs = n * out * ohw * ohw
    weights = out * (c // groups) * k * k
    layer = Layer("conv", f"conv {c}->{out} {k}x{k}/{stride} g{groups} on {hw}x{hw}",
                  2.0 * outputs * (c // groups * k * k), FLOAT * (n * c * hw * hw + weights + outputs),
                  [(n, c, hw, hw), (out, c // groups, k, k)],
                  lambda t: F.conv2d(t[0], t[1], None, stride, pad, 1, groups), 2)
    layer.window = k * k
    return layer


def channels_last(layer):
    """The same convolution on a channels-last input, as ConvNeXt's depthwise convolutions run in eager PyTorch (the
    permutes around its LayerNorm and Linear layers leave every activation channels-last)."""
    layer.name += " channels-last"
    layer.channels_last = True
    return layer


def linear(m, k, n):
    return Layer("gemm", f"linear {m}x{k} by {k}x{n}", 2.0 * m * k * n + m * n, FLOAT * (m * k + k * n + n + m * n),
                 [(m, k), (n, k), (n,)], lambda t: F.linear(t[0], t[1], t[2]), 2)


def batched_matmul(b, m, k, n):
    return Layer("gemm", f"matmul {b}x{m}x{k} by {k}x{n}", 2.0 * b * m * k * n, FLOAT * b * (m * k + k * n + m * n),
                 [(b, m, k), (b, k, n)], lambda t: torch.matmul(t[0], t[1]), 2)


def pointwise(op_class, name, shape, inputs, flops_per_output, forward, nbytes=None):
    """An operator reading `inputs` tensors of `shape` and writing one, at `flops_per_output` per element;
    `nbytes` where the importer counts otherwise."""
    elements = math.prod(shape)
    return Layer(op_class, name, flops_per_output * elements,
                 FLOAT * elements * (inputs + 1) if nbytes is None else nbytes, [shape] * inputs, forward, 1)


def layers(device, b):
    """The benchmark layers at batch `b` (placectl calibrate's are at 8)."""
    # Batchnorm's running statistics are made once rather than per call: on a GPU two fill kernels per call would
    # be timed as normalization work (on a CPU the difference is lost in the noise).
    # A batch normalization's time follows its count of maps as well as its bytes: timed over early maps and late ones.
    stats = {c: (torch.zeros(c, device=device), torch.ones(c, device=device)) for c in (64, 960)}
    # A training step's batch normalization has affine weights whose gradients its backward computes.
    affine = {c: (torch.ones(c, device=device, requires_grad=True), torch.zeros(c, device=device, requires_grad=True))
              for c in (64, 960)}
    return [
        linear(b, 512, 1000),
        linear(1, 4096, 4096),  # a classifier's weights at batch 1: streamed from memory, forward and backward
        linear(b * 197, 768, 3072),
        linear(b * 197, 768, 768),
        batched_matmul(12 * b, 197, 64, 197),
        conv(b, 3, 224, 64, 7, 2, 1),
        conv(b, 64, 56, 64, 3, 1, 1),
        conv(b, 128, 28, 128, 3, 1, 1),
        conv(b, 256, 14, 256, 3, 1, 1),
        conv(b, 64, 56, 256, 1, 1, 1),
        conv(b, 512, 7, 2048, 1, 1, 1),
        conv(b, 32, 112, 32, 3, 1, 32),
        conv(b, 144, 56, 144, 3, 2, 144),
        conv(b, 96, 56, 96, 7, 1, 96),
        conv(b, 672, 14, 672, 5, 1, 672),
        conv(b, 240, 28, 240, 5, 1, 240),
        conv(b, 960, 7, 960, 3, 1, 960),
        # ConvNeXt-T's first and third stages: the class's backward is their median.
        channels_last(conv(b, 96, 56, 96, 7, 1, 96)),
        channels_last(conv(b, 384, 14, 384, 7, 1, 384)),
        # Counted as the importer counts a pool: a 3x3 window per output, inputs plus outputs.
        pointwise("pooling", "maxpool 3x3/2 64x112x112", (b, 64, 112, 112), 1, 9 / 4,
                  lambda t: F.max_pool2d(t[0], 3, 2, 1), nbytes=FLOAT * b * 64 * (112 * 112 + 56 * 56)),
        # The importer counts inputs plus outputs: the global pool writes one value per channel.
        pointwise("normalization", "global average pool 512x7x7", (b, 512, 7, 7), 1, 0,
                  lambda t: F.adaptive_avg_pool2d(t[0], (1, 1)), nbytes=FLOAT * (b * 512 * 49 + b * 512)),
        pointwise("inference_batch_norm", "batchnorm 64x56x56", (b, 64, 56, 56), 1, 5,
                  lambda t: torch.batch_norm(t[0], None, None, *stats[64], False, 0.1, 1e-5, False)),
        pointwise("inference_batch_norm", "batchnorm 960x7x7", (b, 960, 7, 7), 1, 5,
                  lambda t: torch.batch_norm(t[0], None, None, *stats[960], False, 0.1, 1e-5, False)),
        pointwise("training_batch_norm", "batchnorm train 64x56x56", (b, 64, 56, 56), 1, 8,
                  lambda t: torch.batch_norm(t[0], *affine[64], None, None, True, 0.1, 1e-5, False)),
        pointwise("training_batch_norm", "batchnorm train 960x7x7", (b, 960, 7, 7), 1, 8,
                  lambda t: torch.batch_norm(t[0], *affine[960], None, None, True, 0.1, 1e-5, False)),
        pointwise("normalization", "layernorm 197x768", (b, 197, 768), 1, 8, lambda t: F.layer_norm(t[0], (768,))),
        pointwise("normalization", "softmax 12x197x197", (b, 12, 197, 197), 1, 5, lambda t: torch.softmax(t[0], -1)),
        pointwise("elementwise", "relu 64x56x56", (b, 64, 56, 56), 1, 1, lambda t: torch.relu(t[0])),
        pointwise("elementwise", "add 256x56x56", (b, 256, 56, 56), 2, 1, lambda t: t[0] + t[1]),
        pointwise("transcendental", "sigmoid 32x112x112", (b, 32, 112, 112), 1, 4, lambda t: torch.sigmoid(t[0])),
        pointwise("transcendental", "gelu 197x3072", (b, 197, 3072), 1, 8, lambda t: F.gelu(t[0])),
        pointwise("data_movement", "concat 2x128x28x28", (b, 128, 28, 28), 2, 0, lambda t: torch.cat([t[0], t[1]], 1),
                  nbytes=FLOAT * 4 * (b * 128 * 28 * 28)),
        pointwise("data_movement", "transpose 197x12x64", (b, 197, 12, 64), 1, 0,
                  lambda t: t[0].permute(0, 2, 1, 3).contiguous()),
        Layer("view", "reshape 512x7x7", 0, FLOAT * b * 512 * 49, [(b, 512, 7, 7)], lambda t: t[0].reshape(b, -1), 0),
    ]


class Timer:
    def __init__(self, device, budget):
        self.cuda = device.type == "cuda"
        self.budget = budget

    def sync(self):
        if self.cuda:
            torch.cuda.synchronize()

    def seconds(self, run):
        """Best of three attempts of seconds per call, each repeating `run` for at least the budget."""
        run()  # warm: allocator, caches, lazily built kernels
        cap = math.inf
        if self.cuda:
            self.sync()
            start = time.perf_counter()
            run()
            self.sync()
            cap = max(3, math.ceil(2 * self.budget / max(time.perf_counter() - start, 1e-9)))
        best = math.inf
        for _ in range(3):
            self.sync()
            repeats = 0
            start = time.perf_counter()
            while True:
                run()
                repeats += 1
                if time.perf_counter() - start >= self.budget or repeats >= cap:
                    break
            self.sync()
            best = min(best, (time.perf_counter() - start) / repeats)
        return best


def backward_call_seconds(device, timer):
    """What a backward() call costs beyond its functions (starting the autograd engine; on CUDA, handing over to
    its device thread): a model's step pays it once, not once per layer, so each layer's backward leaves it out."""
    leaf = torch.ones(1, device=device, requires_grad=True)
    return max(timer.seconds(lambda: leaf.sum().backward()) - timer.seconds(lambda: leaf.sum()), 0.0)


def measure_layer(layer, device, timer, backward_call):
    inputs = [torch.randn(s, device=device, dtype=DTYPE) for s in layer.shapes]
    if layer.channels_last:
        inputs[0] = inputs[0].contiguous(memory_format=torch.channels_last)
    with torch.no_grad():
        forward = timer.seconds(lambda: layer.forward(inputs))
    if layer.backward_ops == 0:
        return forward, 0.0
    leaves = [t.detach().requires_grad_(True) for t in inputs]
    with_grad = timer.seconds(lambda: layer.forward(leaves))
    # A dense gradient of the output's shape and layout, as a network's next layer hands back (one expanded from a
    # sum's single element sends some kernels down slower paths).
    gradient = torch.randn_like(layer.forward(leaves).detach())
    step = timer.seconds(lambda: layer.forward(leaves).backward(gradient))
    return forward, max(step - with_grad - backward_call, 0.0)


def update_seconds(device, timer):
    """One parameter update as a training step runs it: the gradients zeroed, the backward's gradient accumulated
    into them, Adam's step; over enough parameters to stream from memory, as a model's do."""
    w = torch.randn(ADAM_PARAMETERS, device=device, dtype=DTYPE).requires_grad_(True)
    w.grad = torch.randn(ADAM_PARAMETERS, device=device, dtype=DTYPE)
    gradient = torch.randn(ADAM_PARAMETERS, device=device, dtype=DTYPE)
    adam = torch.optim.Adam([w])

    def update():
        w.grad.zero_()
        w.grad.add_(gradient)
        adam.step()
    return timer.seconds(update)


def roofs(device, timer):
    """peak_flops, memory_bandwidth, launch_overhead."""
    n, copy_elements = (4096, 256 << 20) if device.type == "cuda" else (1024, 32 << 20)
    with torch.no_grad():
        a, b = torch.randn(n, n, device=device, dtype=DTYPE), torch.randn(n, n, device=device, dtype=DTYPE)
        peak = 2.0 * n ** 3 / timer.seconds(lambda: torch.mm(a, b))
        del a, b
        big = torch.randn(copy_elements, device=device, dtype=DTYPE)
        copy = torch.empty_like(big)
        bandwidth = 2.0 * FLOAT * copy_elements / timer.seconds(lambda: copy.copy_(big))
        del big, copy
        one = torch.ones(1, device=device)
        launch = timer.seconds(lambda: torch.add(one, one))
    return peak, bandwidth, launch


def device_kind(name):
    """The device kind a topology names: "NVIDIA H100 80GB HBM3" -> "H100", "NVIDIA A100-SXM4-80GB" -> "A100",
    "NVIDIA GeForce RTX 4090" -> "RTX4090"."""
    words = [w for w in name.split() if w not in ("NVIDIA", "Tesla", "GeForce", "Quadro")]
    kind = []
    for w in words:
        kind.append(w.split("-")[0])
        if re.search(r"\d", w):
            break
    return "".join(kind) or name


def describe(device, threads, budget, batch):
    settings = {"dtype": str(DTYPE).replace("torch.", ""), "batch": batch, "seconds_per_measurement": budget}
    if device.type == "cuda":
        props = torch.cuda.get_device_properties(device)
        info = {"name": props.name, "kind": device_kind(props.name), "memory_bytes": props.total_memory,
                "multiprocessors": props.multi_processor_count, "cuda": torch.version.cuda}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # newer PyTorch deprecates these flags in favour of fp32_precision
            settings["cuda.matmul.allow_tf32"] = torch.backends.cuda.matmul.allow_tf32
            settings["cudnn.allow_tf32"] = torch.backends.cudnn.allow_tf32
            settings["cudnn.benchmark"] = torch.backends.cudnn.benchmark
            settings["cudnn.version"] = torch.backends.cudnn.version()
            settings["float32_matmul_precision"] = torch.get_float32_matmul_precision()
    else:
        info = {"name": "cpu", "kind": "cpu", "memory_bytes": os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")}
        settings["threads"] = threads
    return info, settings


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--device", choices=("cpu", "cuda"), default="cuda")
    p.add_argument("--threads", type=int, default=1, help="intra-op threads on a CPU, as torch.set_num_threads")
    p.add_argument("--seconds", type=float, default=0.05, help="each measurement repeats for at least this long")
    p.add_argument("--output", default="-", help="JSON file to write (- for standard output)")
    p.add_argument("--kind", default=None, help="the device kind to write (default: from the device's name)")
    p.add_argument("--batch", type=int, default=8,
                   help="batch of the layers: 8 as placectl calibrate's; larger for a GPU, whose kernels at 8 last "
                        "little more than their launch")
    p.add_argument("--dtype", choices=("float32", "bfloat16", "float16"), default="float32",
                   help="element type of every layer (bytes counted at its size)")
    args = p.parse_args()
    if args.batch < 1:
        p.error(f"--batch must be at least 1, got {args.batch}")
    if args.threads < 1:
        p.error(f"--threads must be at least 1, got {args.threads}")
    if not args.seconds > 0:
        p.error(f"--seconds must be positive, got {args.seconds}")
    if args.device == "cuda" and not torch.cuda.is_available():
        p.error("--device cuda: this PyTorch sees no CUDA device")
    return args


def main():
    global DTYPE, FLOAT
    args = parse_args()
    DTYPE = getattr(torch, args.dtype)
    FLOAT = torch.empty((), dtype=DTYPE).element_size()
    device = torch.device("cuda:0" if args.device == "cuda" else "cpu")
    if device.type == "cpu":
        torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    timer = Timer(device, args.seconds)
    info, settings = describe(device, args.threads, args.seconds, args.batch)
    if args.kind:
        info["kind"] = args.kind
    started = time.perf_counter()
    current = "peak GEMM, memory copy and launch overhead"
    try:
        peak, bandwidth, launch = roofs(device, timer)
        print(f"{info['name']}: peak {peak / 1e12:.2f} TFLOP/s, bandwidth {bandwidth / 1e9:.1f} GB/s, "
              f"launch {launch * 1e6:.1f} us", file=sys.stderr, flush=True)
        backward_call = backward_call_seconds(device, timer)
        lines = []
        for layer in layers(device, args.batch):
            current = layer.name
            forward, backward = measure_layer(layer, device, timer, backward_call)
            lines.append({"op_class": layer.op_class, "layer": layer.name, "flops": layer.flops,
                          "bytes": layer.bytes, "forward_seconds": forward, "backward_seconds": backward,
                          "backward_ops": layer.backward_ops, "window": layer.window,
                          "channels_last": layer.channels_last})
            print(f"  {layer.name:34s} forward {forward * 1e6:10.1f} us  backward {backward * 1e6:10.1f} us",
                  file=sys.stderr, flush=True)
        current = "zero_grad, accumulate, adam 16M parameters"
        adam = update_seconds(device, timer)
        lines.append({"op_class": "optimizer", "layer": current, "flops": 10.0 * ADAM_PARAMETERS,
                      "bytes": 7.0 * FLOAT * ADAM_PARAMETERS, "forward_seconds": adam, "backward_seconds": 0.0,
                      "backward_ops": 0})
    except RuntimeError as e:  # PyTorch's errors, out of memory included
        print(f"measurement failed at {current}: {e}", file=sys.stderr)
        return 1
    result = {"device": info, "torch": torch.__version__, "settings": settings, "peak_flops": peak,
              "memory_bandwidth": bandwidth, "launch_overhead": launch, "backward_call_seconds": backward_call, "lines": lines,
              "measured_seconds": time.perf_counter() - started}
    text = json.dumps(result, indent=1) + "\n"
    if args.output == "-":
        sys.stdout.write(text)
    else:
        try:
            with open(args.output, "w") as f:
                f.write(text)
        except OSError as e:
            print(f"cannot write {args.output}: {e}", file=sys.stderr)
            return 1
        print(f"wrote {args.output} ({len(lines)} lines, {result['measured_seconds']:.1f} s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
