#!/usr/bin/python3
"""placement_client.torch against real answers: each model is exported to ONNX (or taken from the corpus),
placed over four devices by placectl (and once through a real server), split with torch.fx and split_module by
the answer's module map, and checked: the split model's outputs equal the original's, and so do the gradients of
one training step (max abs difference <= 1e-5, float32). Then the errors a user meets with a wrong answer.
Run by install_and_test.py with the interpreter of the environment the package was installed into; prints
"SKIPPED: ..." when torch or torchvision is missing."""

import argparse
import copy
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
import warnings

try:
    import torch
    import torchvision
except ImportError as e:
    print(f"SKIPPED: {e} (scripts/deps.sh installs python3-torch and python3-torchvision)")
    sys.exit(0)

from placement_client.torch import AnswerMismatch, split

ARGS = None
TOLERANCE = 1e-5


def fail(message):
    print(f"FAILED: {message}", flush=True)
    sys.exit(1)


def check(condition, message):
    if not condition:
        fail(message)


def corpus_models():
    """The corpus's own architectures (scripts/export_corpus.py), matching tests/data/corpus/*.onnx."""
    spec = importlib.util.spec_from_file_location("export_corpus", os.path.join(ARGS.source, "scripts", "export_corpus.py"))
    corpus = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(corpus)
    return {stem: factory for stem, _, _, factory in corpus.MODELS}


def vision(name, size=224, batch=2):
    kwargs = {"aux_logits": False, "init_weights": True} if name == "googlenet" else {}
    return torchvision.models.get_model(name, weights=None, **kwargs), (torch.randn(batch, 3, size, size),)


def export(model, inputs, path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model.eval(), inputs, path, export_params=False, opset_version=17, do_constant_folding=True)


def answer_for(onnx_path, algorithm, devices="4xA100", extra=()):
    run = subprocess.run([ARGS.placectl, "place", onnx_path, "--devices", devices, "--algorithm", algorithm,
                          "--policy_device=none", "--output", "json", *extra], capture_output=True, text=True,
                         timeout=120)
    check(run.returncode == 0, f"placectl place {onnx_path} failed: {run.stderr}")
    return json.loads(run.stdout)


def max_difference(a, b):
    if isinstance(a, torch.Tensor):
        return (a.detach() - b.detach()).abs().max().item() if a.numel() else 0.0
    return max(max_difference(x, y) for x, y in zip(a, b))


def loss(out):
    """The mean of every output: gradients of the size training sees, where float32's rounding is far below the
    tolerance whatever order the parts accumulate them in."""
    return out.float().mean() if isinstance(out, torch.Tensor) else sum(loss(o) for o in out)


def without_dropout(model):
    """No random layers: dropout and stochastic depth draw from the generator in the order the ops run, and the
    parts run them in another order than the model. (Attention's dropout is an argument of a function that
    tracing records as it is, so it is zeroed before the split.)"""
    for m in model.modules():
        if isinstance(m, torch.nn.MultiheadAttention):
            m.dropout = 0.0
    return model


def train_deterministically(model):
    """Training mode (batch statistics, gradients) without dropout and stochastic depth."""
    model.train()
    for m in model.modules():
        if isinstance(m, (torch.nn.Dropout, torchvision.ops.StochasticDepth)):
            m.eval()


def check_model(name, model, inputs, onnx_path, algorithm):
    start = time.monotonic()
    answer = answer_for(onnx_path, algorithm)
    without_dropout(model)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        parts = split(model, answer, inputs)
    reference = copy.deepcopy(model)
    model.eval(), reference.eval()
    with torch.no_grad():
        inference = max_difference(parts(*inputs), reference(*inputs))
    check(inference <= TOLERANCE, f"{name}: split inference differs by {inference}")
    # One training step: the parts share the model's parameters; the reference is a copy of them.
    train_deterministically(model), train_deterministically(reference)
    loss(parts(*inputs)).backward()
    loss(reference(*inputs)).backward()
    grads = [(n, p.grad, q.grad) for (n, p), q in zip(model.named_parameters(), reference.parameters())]
    for n, g, h in grads:
        check((g is None) == (h is None), f"{name}: parameter {n} has a gradient in one model only")
    worst = max((max_difference(g, h) for _, g, h in grads if g is not None), default=0.0)
    check(worst <= TOLERANCE, f"{name}: split gradients differ by {worst}")
    devices = sorted(set(parts.part_devices))
    kept = [str(w.message) for w in caught if "kept whole" in str(w.message) or "cannot trace" in str(w.message)]
    print(f"  {name:22s} {len(answer['modules']):4d} modules -> {len(parts.parts):2d} parts on {len(devices)} devices, "
          f"{len(parts.crossings):3d} crossings; outputs {inference:.1e}, gradients {worst:.1e} "
          f"({time.monotonic() - start:.1f} s){'; ' + '; '.join(kept) if kept else ''}", flush=True)
    return parts


def test_models(work):
    corpus = corpus_models()
    cases = []
    for stem in ("resnet50", "inception_v3", "mobilenet_v3_large", "transformer_encoder", "transformer_decoder",
                 "lstm_seq2seq", "gru_seq2seq"):
        torch.manual_seed(0)
        model, inputs, _, _ = corpus[stem]()
        cases.append((stem, model, inputs, os.path.join(ARGS.source, "tests", "data", "corpus", f"{stem}.onnx")))
    for name in ("googlenet", "densenet121", "vit_b_16", "squeezenet1_1", "shufflenet_v2_x0_5", "regnet_y_400mf",
                 "efficientnet_b0"):
        torch.manual_seed(0)
        model, inputs = vision(name, batch=1 if name == "vit_b_16" else 2)
        path = os.path.join(work, f"{name}.onnx")
        export(model, inputs, path)
        cases.append((name, model, inputs, path))
    split_models = 0
    for name, model, inputs, path in cases:
        # m_topo spreads a model over the devices in topological order: parts with tensors crossing between them.
        parts = check_model(name, model, inputs, path, "m_topo")
        split_models += len(set(parts.part_devices)) > 1
    check(split_models >= 10, f"only {split_models} models were split over more than one device")
    # An answer with parts revisiting a device (HEFT interleaves branches): parts are cut so tensors flow forward.
    model, inputs = vision("googlenet")
    export(model, inputs, os.path.join(work, "googlenet_heft.onnx"))
    check_model("googlenet (heft)", model, inputs, os.path.join(work, "googlenet_heft.onnx"), "heft")


def expect_mismatch(action, *words):
    try:
        action()
    except AnswerMismatch as e:
        for word in words:
            check(word in str(e), f"the error does not name {word!r}: {e}")
        return
    fail(f"no error for an answer that does not match (expected one naming {words})")


def test_mismatched_answers():
    model, inputs = vision("resnet18", batch=1)
    expect_mismatch(lambda: split(model, {"modules": {"": "gpu0", "layer9.conv": "gpu1"}}, inputs), "layer9.conv")
    expect_mismatch(lambda: split(model, {"layer1": "gpu0", "layer2": "gpu1"}, inputs), "conv1", "unplaced")
    expect_mismatch(lambda: split(model, {"layer1": "gpu0", "layer2": "gpu1", "": "gpu0"}, inputs, devices={"gpu0": "cpu"}),
                    "gpu1")
    expect_mismatch(lambda: split(model, {"modules": {}}, inputs), "empty")
    expect_mismatch(lambda: split(model, {"assignment": {"/conv1/Conv": "gpu0"}}, inputs), "module map")
    expect_mismatch(lambda: split(model, {"": "gpu0"}, inputs, devices={"gpu0": "cpu", "gpu7": "cpu"}), "gpu7")
    expect_mismatch(lambda: split(model, {"": "gpu0", "fc": "gpu1"}, inputs, devices={"gpu0": "cpu"}), "gpu1")


def test_folded_modules_follow_their_operator():
    """The exporter folds each BatchNorm into its convolution: an answer that puts layer1.0.conv1 alone on gpu1
    has no entry for layer1.0.bn1, which must run with conv1; the relu after them runs where the model does."""
    model, inputs = vision("resnet18", batch=1)
    parts = split(model, {"": "gpu0", "layer1.0.conv1": "gpu1"}, inputs)
    check([d for d, _ in parts.parts] == ["gpu0", "gpu1", "gpu0"], f"parts {[d for d, _ in parts.parts]}")
    on_gpu1 = sorted(n.target for n in parts.parts[1][1].graph.nodes if n.op == "call_module")
    check(on_gpu1 == ["layer1_0_bn1", "layer1_0_conv1"], f"gpu1 runs {on_gpu1}, not conv1 with its folded bn1")


def test_glue_operations_follow_their_operands():
    """A ViT's own operations (the class token it prepends, the token it reads out after the encoder) are in the
    model's scope, which the answer lists on gpu0 where most of their FLOPs run: the read-out runs with the encoder
    output on gpu1, so two stages make two parts, not a trip back to gpu0 and out again."""
    torch.manual_seed(0)
    model = torchvision.models.VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=2,
                                                 hidden_dim=16, mlp_dim=32, num_classes=10).eval()
    inputs = (torch.randn(2, 3, 32, 32),)
    answer = {"": "gpu0", "conv_proj": "gpu0", "encoder": "gpu0", "encoder.layers.encoder_layer_0": "gpu0",
              "encoder.layers.encoder_layer_1": "gpu1", "encoder.ln": "gpu1", "heads": "gpu1"}
    parts = split(model, answer, inputs)
    check([d for d, _ in parts.parts] == ["gpu0", "gpu1"], f"parts {[d for d, _ in parts.parts]}, not gpu0 then gpu1")
    with torch.no_grad():
        difference = max_difference(parts(*inputs), model(*inputs))
    check(difference <= TOLERANCE, f"the split ViT differs by {difference}")


def test_pipeline_runs_the_stages_as_processes(work):
    """Two stages of a pipeline answer as two processes over gloo, micro-batches through them: the outputs are the
    model's, and the run is timed."""
    from placement_client.torch import pipeline
    torch.manual_seed(0)
    model, inputs = vision("resnet18", size=64, batch=2)
    model.eval()
    path = os.path.join(work, "resnet18_pipeline.onnx")
    export(model, inputs, path)
    answer = answer_for(path, "pipeline_dp", devices="2xA100", extra=("--objective", "throughput"))
    run = pipeline(model, answer, inputs, micro_batches=2, repeats=1)
    check(run.stages == ["gpu0", "gpu1"], f"stages {run.stages}")
    with torch.no_grad():
        expected = model(*inputs)
    check(len(run.outputs) == 4, f"{len(run.outputs)} outputs of the last run, not its 4 micro-batches")
    difference = max(max_difference(out, expected) for out in run.outputs)
    check(difference <= TOLERANCE, f"the pipeline's outputs differ by {difference}")
    check(run.seconds_per_micro_batch > 0 or len(run.run_seconds) == 2, f"no timing: {run}")
    print(f"  pipeline: stages {run.stages}, {run.seconds_per_micro_batch * 1e3:.1f} ms per micro-batch")


def test_placed_parts_and_a_server_answer():
    """A PlaceResponse from a real server, and the parts placed on torch devices (this machine's CPU for both)."""
    from placement_client import PlacementClient, place_request
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from test_client import Server  # the same server fixture as the client's own test
    import test_client
    test_client.ARGS = ARGS
    path = os.path.join(ARGS.source, "tests", "data", "corpus", "resnet50.onnx")
    with Server() as server, PlacementClient(server.address, timeout=120) as client:
        client.wait_until_ready(timeout=30)
        answer = client.place(place_request(path, devices="2xA100", algorithm="m_topo", budget_ms=5000))
    check(len(answer.modules) > 0, "the server's answer has no module map")
    torch.manual_seed(0)
    model, inputs, _, _ = corpus_models()["resnet50"]()
    model.eval()
    expected = copy.deepcopy(model)(*inputs)
    parts = split(model, answer, inputs, devices={"gpu0": "cpu", "gpu1": "cpu"})
    check([d for d, _ in parts.parts] == ["gpu0", "gpu1"], f"parts {[d for d, _ in parts.parts]}, not gpu0 then gpu1")
    with torch.no_grad():
        difference = max_difference(parts(*inputs), expected)
    check(difference <= TOLERANCE, f"the placed parts differ by {difference}")
    crossing = [c for c in parts.crossings if c.source == 0 and c.destination == 1]
    check(crossing and crossing[0].bytes > 0, f"no tensor with a size crosses from part 0 to 1: {parts.crossings}")
    print(f"  server answer: {len(answer.modules)} modules, parts {[d for d, _ in parts.parts]}, "
          f"{crossing[0].bytes} bytes cross")


def main():
    global ARGS
    parser = argparse.ArgumentParser()
    parser.add_argument("--server-binary", required=True)
    parser.add_argument("--placectl", required=True)
    parser.add_argument("--source", required=True)
    ARGS, _ = parser.parse_known_args()
    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as work:
        test_models(work)
        test_pipeline_runs_the_stages_as_processes(work)
    test_mismatched_answers()
    test_folded_modules_follow_their_operator()
    test_glue_operations_follow_their_operands()
    test_placed_parts_and_a_server_answer()
    print("PASSED")
    return 0


if __name__ == "__main__":
    sys.exit(main())
