#!/usr/bin/python3
"""Exports a coverage matrix of real architectures to ONNX, to check the ONNX importer against what people export.

Run with Debian's interpreter, which has python3-torch (1.13), python3-torchvision (0.14) and python3-onnx (1.12):

    /usr/bin/python3 scripts/onnx_coverage.py --list
    /usr/bin/python3 scripts/onnx_coverage.py [--out build/onnx_coverage] [--opsets 11,13,17] [--fold both|on|off]
        [--only resnet50,nn_lstm] [--jobs N] [--timeout 300]

Architectures: every model torchvision 0.14 builds (torchvision.models.list_models(), the quantization namespace
left out): classification, segmentation, detection (Faster/Mask/Keypoint R-CNN, RetinaNet, FCOS, SSD, SSDlite),
video and optical flow (RAFT), all with weights=None, plus torch.nn models (nn.Transformer with a causal target
mask, nn.TransformerEncoder, nn.MultiheadAttention alone, a bidirectional 2-layer LSTM, a 2-layer GRU). Each is
exported once per opset (--opsets) and constant-folding setting (--fold) with export_params=False,
TrainingMode.EVAL, model.eval() and torch.manual_seed(0) (weights_backbone=None too for segmentation and
detection: nothing is downloaded), to DIR/<arch>_op<opset>_<fold|nofold>.onnx. Every input
and output has a dynamic "batch" axis (sequence models also "seq" axes), except detection models: they take a
list of one 3-D image, exported with dynamic "height"/"width" (static when that does not export) and outputs
whose first axis, the detections, is "detections".

Inputs: classification 1x3x224x224 (inception_v3 299x299), segmentation 1x3x224x224, detection one 3x320x320
image (the model's own transform then resizes it: 800 for the R-CNNs, RetinaNet and FCOS, 300 for SSD, 320 for
SSDlite), video 1x3x8x112x112 (s3d and the MViTs need 1x3x16x224x224), RAFT two 1x3x128x128 images (its default
12 flow updates, so 12 outputs), sequence models batch 2, length 16.

Each architecture is built once in a worker subprocess that exports its configurations one after the other;
--jobs runs that many workers at a time, and an export (or a model build) that runs past --timeout seconds has
its worker killed, is recorded as failed, and the remaining configurations go on in a fresh worker. A failed
export is a row of DIR/MANIFEST.tsv with its reason, never a crash. The manifest keeps the rows of files not
exported in this run (so --only and --opsets can fill a matrix in several runs). Worker warnings go to
DIR/logs/<arch>.log.

Deterministic: the models are built after torch.manual_seed(0), the inputs are seeded, and the exporter's
metadata is fixed (producer name and version, doc strings cleared), so running it again gives the same bytes.
As in export_corpus.py every weight gets distinct values (here a small seeded offset in [0, 1e-3), which keeps
the activations, and so the detection post-processing, sane), since the exporter would otherwise merge equal
tensors (BatchNorm ones and zeros) into one input, which no trained model exports to.
"""

import argparse
import io
import json
import os
import re
import selectors
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

FAMILIES = ["classification", "segmentation", "detection", "video", "optical_flow", "nn"]
HEADER = ["file", "architecture", "family", "opset", "folding", "inputs", "nodes", "op_types", "bytes",
          "export_seconds", "status"]
CONTROL_FLOW = {"If", "Loop", "Scan"}
DATA_DEPENDENT = {"NonZero", "NonMaxSuppression", "TopK", "Unique", "Resize"}


# ----------------------------------------------------------------------------------------------------------------
# The architectures. Only names and families here: torch is imported by the workers (and --list).

def torchvision_architectures():
    """(name, family, source) for every torchvision 0.14 builder outside the quantization namespace."""
    import torchvision.models as tvm
    import torchvision.models.detection
    import torchvision.models.optical_flow
    import torchvision.models.segmentation
    import torchvision.models.video

    family_of = {}
    for family, module in [("segmentation", tvm.segmentation), ("detection", tvm.detection),
                           ("video", tvm.video), ("optical_flow", tvm.optical_flow)]:
        for name in tvm.list_models(module=module):
            family_of[name] = family
    quantized = set(tvm.list_models(module=tvm.quantization))
    result = []
    for name in tvm.list_models():
        if name in quantized:
            continue
        family = family_of.get(name, "classification")
        module = {"classification": "torchvision.models", "segmentation": "torchvision.models.segmentation",
                  "detection": "torchvision.models.detection", "video": "torchvision.models.video",
                  "optical_flow": "torchvision.models.optical_flow"}[family]
        result.append((name, family, f"{module}.{name}(weights=None)"))
    return result


NN_ARCHITECTURES = [
    ("nn_transformer", "nn", "nn.Transformer(512, 8, 6 encoder + 6 decoder layers, 2048, batch_first) with "
     "generate_square_subsequent_mask(tgt length) as tgt_mask"),
    ("nn_transformer_encoder", "nn", "nn.TransformerEncoder(6 x TransformerEncoderLayer(512, 8, 2048), "
     "batch_first)"),
    ("nn_multihead_attention", "nn", "nn.MultiheadAttention(512, 8, batch_first) (query, key, value) -> "
     "(output, averaged weights)"),
    ("nn_lstm", "nn", "nn.LSTM(256, 512, num_layers=2, bidirectional, batch_first) -> (output, h_n, c_n)"),
    ("nn_gru", "nn", "nn.GRU(256, 512, num_layers=2, batch_first) -> (output, h_n)"),
]


def all_architectures():
    order = {family: i for i, family in enumerate(FAMILIES)}
    archs = torchvision_architectures() + NN_ARCHITECTURES
    return sorted(archs, key=lambda a: (order[a[1]], a[0]))


# ----------------------------------------------------------------------------------------------------------------
# The worker: builds one architecture and exports its configurations.

def build(name, family):
    """Returns (model, args, input_names, input dynamic axes, output names, output dynamic axes)."""
    import torch
    import torch.nn as nn
    import torchvision.models as tvm

    if family == "nn":
        return build_nn(name)

    if name == "inception_v3":
        # aux_logits=False: the auxiliary head only runs in training; eval exports never contain it.
        model = tvm.get_model(name, weights=None, aux_logits=False, init_weights=True)
    elif name == "googlenet":
        model = tvm.get_model(name, weights=None, aux_logits=False, init_weights=True)
    elif family in ("segmentation", "detection"):
        # Their backbones default to ImageNet weights (a download): none either.
        model = tvm.get_model(name, weights=None, weights_backbone=None)
    else:
        model = tvm.get_model(name, weights=None)
    model.eval()
    distinct_weights(model)

    if family == "classification":
        size = 299 if name == "inception_v3" else 224
        args = (torch.randn(1, 3, size, size),)
        input_names, input_axes = ["input"], {"input": {0: "batch"}}
    elif family == "segmentation":
        args = (torch.randn(1, 3, 224, 224),)
        input_names, input_axes = ["input"], {"input": {0: "batch"}}
    elif family == "video":
        shape = (1, 3, 16, 224, 224) if name in ("s3d", "mvit_v1_b", "mvit_v2_s") else (1, 3, 8, 112, 112)
        args = (torch.randn(*shape),)
        input_names, input_axes = ["input"], {"input": {0: "batch"}}
    elif family == "optical_flow":
        args = (torch.randn(1, 3, 128, 128), torch.randn(1, 3, 128, 128))
        input_names = ["image1", "image2"]
        input_axes = {"image1": {0: "batch"}, "image2": {0: "batch"}}
    elif family == "detection":
        # A list of one 3-D image (values in [0, 1], as the model's transform expects).
        args = ([torch.rand(3, 320, 320)],)
        input_names, input_axes = ["images"], {"images": {1: "height", 2: "width"}}
    else:
        raise ValueError(family)

    # The output structure (a dict for segmentation, a list of dicts for detection, a list of flows for RAFT)
    # names the outputs, in the order the exporter flattens them.
    if family in ("classification", "video"):
        return model, args, input_names, input_axes, ["output"], {"output": {0: "batch"}}
    with torch.no_grad():
        out = model(*args)
    if family == "detection":
        output_names = list(out[0].keys())
        output_axes = {n: {0: "detections"} for n in output_names}
    else:
        output_names = flatten_names(out, "output")
        output_axes = {n: {0: "batch"} for n in output_names}
    return model, args, input_names, input_axes, output_names, output_axes


def flatten_names(obj, prefix):
    import torch
    if isinstance(obj, torch.Tensor):
        return [prefix]
    if isinstance(obj, dict):
        names = []
        for key, value in obj.items():
            names += flatten_names(value, str(key) if prefix == "output" else f"{prefix}_{key}")
        return names
    if isinstance(obj, (list, tuple)):
        stem = "flow" if prefix == "output" else prefix
        names = []
        for i, value in enumerate(obj):
            names += flatten_names(value, f"{stem}_{i}")
        return names
    raise TypeError(f"unexpected output type {type(obj).__name__}")


def distinct_weights(model):
    import torch
    with torch.no_grad():
        for tensor in list(model.parameters()) + list(model.buffers()):
            if tensor.is_floating_point():
                tensor.add_(torch.empty_like(tensor).uniform_(0.0, 1e-3))


def build_nn(name):
    import torch
    import torch.nn as nn

    class Transformer(nn.Module):
        def __init__(self):
            super().__init__()
            self.transformer = nn.Transformer(512, 8, 6, 6, 2048, dropout=0.1, batch_first=True)

        def forward(self, src, tgt):
            mask = nn.Transformer.generate_square_subsequent_mask(tgt.shape[1])
            return self.transformer(src, tgt, tgt_mask=mask)

    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            layer = nn.TransformerEncoderLayer(512, 8, 2048, dropout=0.1, batch_first=True)
            self.encoder = nn.TransformerEncoder(layer, 6, enable_nested_tensor=False)

        def forward(self, src):
            return self.encoder(src)

    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.attention = nn.MultiheadAttention(512, 8, batch_first=True)

        def forward(self, query, key, value):
            return self.attention(query, key, value)

    class Recurrent(nn.Module):
        def __init__(self, rnn):
            super().__init__()
            self.rnn = rnn

        def forward(self, x):
            out, state = self.rnn(x)
            return (out,) + (tuple(state) if isinstance(state, tuple) else (state,))

    bs = {0: "batch", 1: "seq"}
    if name == "nn_transformer":
        model = Transformer()
        args = (torch.randn(2, 16, 512), torch.randn(2, 12, 512))
        io_ = (["src", "tgt"], {"src": bs, "tgt": {0: "batch", 1: "tgt_seq"}},
               ["output"], {"output": {0: "batch", 1: "tgt_seq"}})
    elif name == "nn_transformer_encoder":
        model = Encoder()
        args = (torch.randn(2, 16, 512),)
        io_ = (["src"], {"src": bs}, ["output"], {"output": bs})
    elif name == "nn_multihead_attention":
        model = Attention()
        args = (torch.randn(2, 16, 512), torch.randn(2, 20, 512), torch.randn(2, 20, 512))
        kv = {0: "batch", 1: "kv_seq"}
        io_ = (["query", "key", "value"], {"query": bs, "key": kv, "value": kv},
               ["output", "weights"], {"output": bs, "weights": {0: "batch", 1: "seq", 2: "kv_seq"}})
    elif name == "nn_lstm":
        model = Recurrent(nn.LSTM(256, 512, num_layers=2, bidirectional=True, batch_first=True))
        args = (torch.randn(2, 16, 256),)
        io_ = (["input"], {"input": bs}, ["output", "h_n", "c_n"],
               {"output": bs, "h_n": {1: "batch"}, "c_n": {1: "batch"}})
    elif name == "nn_gru":
        model = Recurrent(nn.GRU(256, 512, num_layers=2, batch_first=True))
        args = (torch.randn(2, 16, 256),)
        io_ = (["input"], {"input": bs}, ["output", "h_n"], {"output": bs, "h_n": {1: "batch"}})
    else:
        raise ValueError(f"unknown architecture {name}")
    model.eval()
    distinct_weights(model)
    return (model, args) + io_


def one_line(error, limit=300):
    text = f"{type(error).__name__}: {error}" if isinstance(error, BaseException) else str(error)
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    text = " ".join(lines[:3]) if lines else type(error).__name__
    text = re.sub(r"\s+", " ", text).replace("\t", " ")
    text = re.sub(r" ?Please feel free to request support or submit a pull request on PyTorch GitHub: ?\S*", "", text)
    return text[:limit] + ("..." if len(text) > limit else "")


def export_one(model, args, input_names, input_axes, output_names, output_axes, opset, fold):
    """Exports to memory; returns the normalized ModelProto."""
    import onnx
    import torch
    torch.manual_seed(0)
    buffer = io.BytesIO()
    # Gradients stay enabled on purpose: under no_grad, nn.TransformerEncoderLayer and nn.MultiheadAttention in
    # eval take their fused fast paths, which have no ONNX export.
    torch.onnx.export(model, args, buffer, export_params=False, opset_version=opset, do_constant_folding=fold,
                      training=torch.onnx.TrainingMode.EVAL, input_names=input_names, output_names=output_names,
                      dynamic_axes={**input_axes, **output_axes}, verbose=False)
    proto = onnx.load_from_string(buffer.getvalue())
    # Fixed metadata so that the bytes depend only on the architecture and the exporter.
    proto.producer_name = "pytorch"
    proto.producer_version = torch.__version__
    proto.doc_string = ""
    for graph in all_graphs(proto.graph):
        graph.doc_string = ""
        for node in graph.node:
            node.doc_string = ""
    return proto


def all_graphs(graph):
    import onnx
    yield graph
    for node in graph.node:
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                yield from all_graphs(attr.g)
            elif attr.type == onnx.AttributeProto.GRAPHS:
                for g in attr.graphs:
                    yield from all_graphs(g)


def describe_inputs(proto, data_inputs):
    import onnx
    parts = []
    for value in proto.graph.input[:data_inputs]:
        t = value.type.tensor_type
        dims = ",".join(d.dim_param if d.HasField("dim_param") else
                        (str(d.dim_value) if d.HasField("dim_value") else "?") for d in t.shape.dim)
        dtype = {onnx.TensorProto.FLOAT: "f32", onnx.TensorProto.INT64: "i64"}.get(
            t.elem_type, onnx.TensorProto.DataType.Name(t.elem_type).lower())
        parts.append(f"{value.name} [{dims}] {dtype}")
    weights = len(proto.graph.input) - data_inputs
    return "; ".join(parts) + f"; +{weights} weight inputs"


def op_types(proto):
    ops = set()
    for graph in all_graphs(proto.graph):
        for node in graph.node:
            ops.add(node.op_type if node.domain in ("", "ai.onnx") else f"{node.domain}::{node.op_type}")
    return ",".join(sorted(ops))


def file_name(arch, opset, fold):
    return f"{arch}_op{opset}_{'fold' if fold else 'nofold'}.onnx"


def worker(arch, family, configs, out_dir, threads):
    """Exports configs [(opset, fold)] of one architecture. Protocol on the original stdout, one JSON per line:
    {"start": phase} before the build and each export, {"row": [...]} after each export."""
    proto_out = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # anything torch prints goes to the log, not into the protocol

    def send(obj):
        proto_out.write(json.dumps(obj) + "\n")
        proto_out.flush()

    import warnings
    warnings.simplefilter("ignore")
    import onnx
    import torch
    torch.set_num_threads(threads)
    torch.use_deterministic_algorithms(True, warn_only=True)

    send({"start": "build"})
    t0 = time.time()
    try:
        torch.manual_seed(0)
        built = build(arch, family)
    except Exception as e:  # every configuration fails the same way
        reason = f"export failed: model build: {one_line(e)}"
        for opset, fold in configs:
            send({"row": [file_name(arch, opset, fold), arch, family, str(opset), "on" if fold else "off",
                          "", "", "", "", "", reason]})
        return
    print(f"{arch}: built in {time.time() - t0:.1f}s", file=sys.stderr, flush=True)
    model, args, input_names, input_axes, output_names, output_axes = built

    for opset, fold in configs:
        name = file_name(arch, opset, fold)
        path = os.path.join(out_dir, name)
        send({"start": name})
        row = [name, arch, family, str(opset), "on" if fold else "off"]
        t0 = time.time()
        status = "ok"
        proto = None
        try:
            try:
                proto = export_one(model, args, input_names, input_axes, output_names, output_axes, opset, fold)
            except Exception as e:
                if family != "detection":
                    raise
                # Detection: dynamic height/width or none, whichever exports.
                print(f"{name}: dynamic H/W failed ({one_line(e)}); trying static", file=sys.stderr, flush=True)
                try:
                    proto = export_one(model, args, input_names, {}, output_names, output_axes, opset, fold)
                except Exception as e2:
                    raise RuntimeError(f"{one_line(e, 200)} [static H/W too: {one_line(e2, 120)}]") from e2
            try:
                onnx.checker.check_model(proto)
            except Exception as e:
                status = f"export failed: onnx.checker: {one_line(e)}"
        except Exception as e:
            status = f"export failed: {one_line(e)}"
        seconds = time.time() - t0
        if proto is not None:
            data = proto.SerializeToString()
            with open(path, "wb") as f:
                f.write(data)
            row += [describe_inputs(proto, len(input_names)), str(len(proto.graph.node)), op_types(proto),
                    str(len(data))]
        else:
            if os.path.exists(path):
                os.remove(path)  # no stale file beside a failed row
            row += ["", "", "", ""]
        row += [f"{seconds:.1f}", status]
        print(f"{name}: {status} ({seconds:.1f}s)", file=sys.stderr, flush=True)
        send({"row": row})


# ----------------------------------------------------------------------------------------------------------------
# The driver.

def run_architecture(arch, family, configs, args, lock, progress):
    """Runs workers for one architecture until every configuration has a row; returns the rows."""
    rows = {}
    remaining = list(configs)
    log_path = os.path.join(args.out, "logs", arch + ".log")
    threads = max(1, (os.cpu_count() or 1) // args.jobs)
    with open(log_path, "w") as log:
        while remaining:
            cmd = [sys.executable, os.path.abspath(__file__), "--worker", arch, "--family", family,
                   "--configs", ",".join(f"{o}:{int(f)}" for o, f in remaining), "--out", args.out,
                   "--threads", str(threads)]
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=log, start_new_session=True, text=True)
            sel = selectors.DefaultSelector()
            sel.register(proc.stdout, selectors.EVENT_READ)
            phase, deadline, failure = None, None, None
            buffer = ""
            while True:
                timeout = None if deadline is None else max(0.0, deadline - time.time())
                events = sel.select(timeout)
                if not events and deadline is not None and time.time() >= deadline:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()
                    failure = f"export failed: timeout after {args.timeout}s" + (
                        " building the model" if phase == "build" else "")
                    break
                chunk = os.read(proc.stdout.fileno(), 65536).decode() if events else ""
                if events and not chunk:  # worker exited
                    proc.wait()
                    if remaining:
                        failure = f"export failed: worker exited with status {proc.returncode}" + (
                            " building the model" if phase == "build" else "") + f" (see logs/{arch}.log)"
                    break
                buffer += chunk
                while "\n" in buffer:
                    line, buffer = buffer.split("\n", 1)
                    message = json.loads(line)
                    if "start" in message:
                        phase = message["start"]
                        deadline = time.time() + args.timeout
                    else:
                        row = message["row"]
                        rows[row[0]] = row
                        remaining = [(o, f) for o, f in remaining if file_name(arch, o, f) != row[0]]
                        deadline = None
                        with lock:
                            progress[0] += 1
                            print(f"[{progress[0]}/{progress[1]}] {row[0]}: {row[-1]} ({row[9] or '-'}s)", flush=True)
            sel.close()
            proc.stdout.close()
            if failure and remaining:
                # The phase that failed takes the failure; a failed build fails every remaining configuration.
                failed = remaining if phase == "build" or phase is None else \
                    [c for c in remaining if file_name(arch, *c) == phase]
                for o, f in failed:
                    name = file_name(arch, o, f)
                    path = os.path.join(args.out, name)
                    if os.path.exists(path):
                        os.remove(path)
                    rows[name] = [name, arch, family, str(o), "on" if f else "off", "", "", "", "", "", failure]
                    with lock:
                        progress[0] += 1
                        print(f"[{progress[0]}/{progress[1]}] {name}: {failure}", flush=True)
                remaining = [c for c in remaining if c not in failed]
    return list(rows.values())


def read_manifest(path):
    rows = {}
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                if line.startswith("#") or line.startswith("file\t"):
                    continue
                cols = line.rstrip("\n").split("\t")
                if len(cols) == len(HEADER):
                    rows[cols[0]] = cols
    return rows


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=os.path.join(root, "build", "onnx_coverage"))
    parser.add_argument("--opsets", default="11,13,17", help="comma-separated opset versions (default 11,13,17)")
    parser.add_argument("--fold", choices=["on", "off", "both"], default="both",
                        help="do_constant_folding setting(s) (default both)")
    parser.add_argument("--only", help="comma-separated architectures (default: all; see --list)")
    parser.add_argument("--list", action="store_true", help="print the architectures and exit")
    parser.add_argument("--jobs", type=int, default=1, help="worker subprocesses at a time (default 1)")
    parser.add_argument("--timeout", type=int, default=300, help="seconds per export or model build (default 300)")
    # Internal: the worker subprocess.
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--family", help=argparse.SUPPRESS)
    parser.add_argument("--configs", help=argparse.SUPPRESS)
    parser.add_argument("--threads", type=int, default=1, help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.worker:
        configs = [(int(c.split(":")[0]), c.split(":")[1] == "1") for c in args.configs.split(",")]
        worker(args.worker, args.family, configs, args.out, args.threads)
        return

    archs = all_architectures()
    if args.only:
        wanted = [a.strip() for a in args.only.split(",") if a.strip()]
        known = {a[0] for a in archs}
        unknown = [a for a in wanted if a not in known]
        if unknown:
            parser.error(f"unknown architecture(s): {', '.join(unknown)} (see --list)")
        archs = [a for a in archs if a[0] in wanted]
    if args.list:
        for name, family, source in archs:
            print(f"{name}\t{family}\t{source}")
        return

    import onnx
    import torch
    import torchvision
    opsets = [int(o) for o in args.opsets.split(",") if o.strip()]
    folds = {"on": [True], "off": [False], "both": [True, False]}[args.fold]
    configs = [(o, f) for o in opsets for f in folds]
    args.out = os.path.abspath(args.out)
    os.makedirs(os.path.join(args.out, "logs"), exist_ok=True)
    manifest = os.path.join(args.out, "MANIFEST.tsv")
    rows = read_manifest(manifest)

    # Detection first: the slowest exports, so that the jobs finish together.
    order = sorted(archs, key=lambda a: (a[1] != "detection", a[1] != "video"))
    lock = threading.Lock()
    progress = [0, len(archs) * len(configs)]
    start = time.time()
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = [pool.submit(run_architecture, name, family, configs, args, lock, progress)
                   for name, family, _ in order]
        for future in futures:
            for row in future.result():
                rows[row[0]] = row

    rank = {a[0]: i for i, a in enumerate(all_architectures())}
    ordered = sorted(rows.values(), key=lambda r: (rank.get(r[1], len(rank)), r[1], int(r[3]), r[4] != "on"))
    with open(manifest + ".tmp", "w") as f:
        f.write(f"# Made by: /usr/bin/python3 scripts/onnx_coverage.py (torch {torch.__version__}, torchvision "
                f"{torchvision.__version__}, onnx {onnx.__version__}, export_params=False, TrainingMode.EVAL, "
                "seed 0)\n")
        f.write("# inputs: the data inputs as exported (the weights follow as static inputs); nodes: main graph; "
                "op_types: distinct, subgraphs (If/Loop bodies) included; export_seconds: build excluded\n")
        f.write("\t".join(HEADER) + "\n")
        for row in ordered:
            f.write("\t".join(row) + "\n")
    os.replace(manifest + ".tmp", manifest)
    ok = sum(1 for r in ordered if r[-1] == "ok")
    print(f"{ok}/{len(ordered)} ok in the manifest; this run took {time.time() - start:.0f}s; {manifest}",
          file=sys.stderr)


if __name__ == "__main__":
    main()
