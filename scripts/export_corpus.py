#!/usr/bin/python3
"""Exports the ONNX corpus in tests/data/corpus/ from torch/torchvision architectures.

Run with Debian's interpreter, which has python3-torch, python3-torchvision and python3-onnx:

    /usr/bin/python3 scripts/export_corpus.py [--out tests/data/corpus]

Models are exported without their weights (export_params=False), so each file holds only the graph and stays
small; the weights then appear as graph inputs with static shapes, after the real inputs, which have a dynamic
"batch" axis (and a "seq" axis for sequence models). The importer counts those inputs as parameters
(docs/onnx.md). One small MLP, external/mlp.onnx, keeps its weights, as ONNX external data in
external/mlp.data, for the tests of that path. Everything is seeded and the exporter's metadata is fixed, so
running it again gives the same bytes. MANIFEST.tsv lists each file with what it was made from and the figures
the tests compare against.
"""

import argparse
import hashlib
import os
import sys

import torch
import torch.nn as nn
import torchvision

OPSET = 14  # 14 is the first opset with Trilu, which the decoder's causal mask exports to.


class TransformerEncoderModel(nn.Module):
    """nn.TransformerEncoder as in "Attention Is All You Need" (base): 6 layers, d_model 512, 8 heads."""

    def __init__(self, d_model=512, nhead=8, layers=6, ff=2048):
        super().__init__()
        layer = nn.TransformerEncoderLayer(d_model, nhead, ff, dropout=0.1, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)

    def forward(self, src):
        return self.encoder(src)


class TransformerDecoderModel(nn.Module):
    """nn.TransformerDecoder (base size) with the causal mask built from the target length."""

    def __init__(self, d_model=512, nhead=8, layers=6, ff=2048):
        super().__init__()
        layer = nn.TransformerDecoderLayer(d_model, nhead, ff, dropout=0.1, batch_first=True)
        self.decoder = nn.TransformerDecoder(layer, layers)

    def forward(self, tgt, memory):
        length = tgt.shape[1]
        mask = torch.triu(torch.full((length, length), float("-inf")), diagonal=1)
        return self.decoder(tgt, memory, tgt_mask=mask)


class Seq2Seq(nn.Module):
    """A GNMT-style sequence-to-sequence model: embeddings, a stacked encoder RNN whose final state starts a
    stacked decoder RNN (teacher forcing: the target tokens are an input), and a projection to the vocabulary."""

    def __init__(self, cell, vocab=32000, embed=512, hidden=1024, layers=2):
        super().__init__()
        self.src_embed = nn.Embedding(vocab, embed)
        self.tgt_embed = nn.Embedding(vocab, embed)
        self.encoder = cell(embed, hidden, layers, batch_first=True)
        self.decoder = cell(embed, hidden, layers, batch_first=True)
        self.project = nn.Linear(hidden, vocab)

    def forward(self, src, tgt):
        _, state = self.encoder(self.src_embed(src))
        out, _ = self.decoder(self.tgt_embed(tgt), state)
        return self.project(out)


def vision(name, size):
    def make():
        if name == "inception_v3":
            # aux_logits=False: the auxiliary head only runs in training; eval exports never contain it.
            model = torchvision.models.inception_v3(weights=None, aux_logits=False, init_weights=True)
        else:
            model = getattr(torchvision.models, name)(weights=None)
        x = torch.randn(1, 3, size, size)
        return model, (x,), ["input"], {"input": {0: "batch"}, "output": {0: "batch"}}
    return make


def encoder():
    x = torch.randn(2, 16, 512)
    return (TransformerEncoderModel(), (x,), ["src"],
            {"src": {0: "batch", 1: "seq"}, "output": {0: "batch", 1: "seq"}})


def decoder():
    tgt, memory = torch.randn(2, 16, 512), torch.randn(2, 16, 512)
    return (TransformerDecoderModel(), (tgt, memory), ["tgt", "memory"],
            {"tgt": {0: "batch", 1: "seq"}, "memory": {0: "batch", 1: "memory_seq"},
             "output": {0: "batch", 1: "seq"}})


def seq2seq(cell):
    def make():
        src = torch.randint(0, 32000, (2, 16))
        tgt = torch.randint(0, 32000, (2, 16))
        return (Seq2Seq(cell), (src, tgt), ["src", "tgt"],
                {"src": {0: "batch", 1: "seq"}, "tgt": {0: "batch", 1: "seq"},
                 "output": {0: "batch", 1: "seq"}})
    return make


# file stem, source architecture, input shape as documented, factory
MODELS = [
    ("resnet50", "torchvision.models.resnet50(weights=None)", "input [batch,3,224,224] f32",
     vision("resnet50", 224)),
    ("inception_v3", "torchvision.models.inception_v3(weights=None, aux_logits=False)",
     "input [batch,3,299,299] f32", vision("inception_v3", 299)),
    ("vgg16", "torchvision.models.vgg16(weights=None)", "input [batch,3,224,224] f32", vision("vgg16", 224)),
    ("mobilenet_v3_large", "torchvision.models.mobilenet_v3_large(weights=None)", "input [batch,3,224,224] f32",
     vision("mobilenet_v3_large", 224)),
    ("transformer_encoder", "nn.TransformerEncoder(6 x TransformerEncoderLayer(512, 8, 2048), batch_first)",
     "src [batch,seq,512] f32", encoder),
    ("transformer_decoder", "nn.TransformerDecoder(6 x TransformerDecoderLayer(512, 8, 2048), batch_first) "
     "with causal tgt_mask", "tgt [batch,seq,512] f32; memory [batch,memory_seq,512] f32", decoder),
    ("lstm_seq2seq", "Embedding(32000,512) x2 + 2-layer LSTM(512,1024) encoder/decoder + Linear(1024,32000)",
     "src [batch,seq] i64; tgt [batch,seq] i64", seq2seq(nn.LSTM)),
    ("gru_seq2seq", "Embedding(32000,512) x2 + 2-layer GRU(512,1024) encoder/decoder + Linear(1024,32000)",
     "src [batch,seq] i64; tgt [batch,seq] i64", seq2seq(nn.GRU)),
]


def export(stem, factory, out_dir):
    import onnx  # python3-onnx: only writing the corpus needs it, not its model definitions

    torch.manual_seed(0)
    model, args, input_names, dynamic_axes = factory()
    model.eval()
    # Distinct values in every weight, as a trained model has: with the default initialisation many tensors are
    # equal (BatchNorm and LayerNorm ones and zeros), and the exporter would merge them into one input read
    # through Identity nodes, a graph no trained model exports to. Positive values keep running_var valid.
    with torch.no_grad():
        for tensor in list(model.parameters()) + list(model.buffers()):
            if tensor.is_floating_point():
                tensor.uniform_(0.5, 1.5)
    params = sum(p.numel() for p in model.parameters())
    # Buffers that inference reads (BatchNorm running statistics) are exported as inputs too.
    buffers = sum(b.numel() for name, b in model.named_buffers() if not name.endswith("num_batches_tracked"))
    path = os.path.join(out_dir, stem + ".onnx")
    # Gradients stay enabled on purpose: under no_grad, nn.TransformerEncoderLayer in eval takes its fused
    # fast path (aten::_transformer_encoder_layer_fwd), which has no ONNX export.
    torch.onnx.export(model, args, path, export_params=False, opset_version=OPSET,
                      input_names=input_names, output_names=["output"], dynamic_axes=dynamic_axes,
                      do_constant_folding=True)
    proto = onnx.load(path)
    # Fixed metadata so that the bytes depend only on the architecture and the exporter.
    proto.producer_name = "pytorch"
    proto.producer_version = torch.__version__
    proto.doc_string = ""
    onnx.checker.check_model(proto)
    with open(path, "wb") as f:
        f.write(proto.SerializeToString())
    data = open(path, "rb").read()
    return params, buffers, len(data), hashlib.sha256(data).hexdigest(), len(proto.graph.node)


def export_external_data(out_dir):
    """A small MLP with its weights, stored as ONNX external data (one file beside the model), for the tests
    of that path: Linear(64, 128) -> ReLU -> Linear(128, 10)."""
    import onnx  # python3-onnx: only writing the corpus needs it, not its model definitions

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10)).eval()
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, "mlp.onnx")
    data = os.path.join(out_dir, "mlp.data")
    if os.path.exists(data):
        os.remove(data)  # onnx appends external data to an existing file
    torch.onnx.export(model, (torch.randn(1, 64),), path, opset_version=OPSET, input_names=["x"],
                      output_names=["y"], dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}})
    proto = onnx.load(path)
    proto.producer_version = torch.__version__
    onnx.save_model(proto, path, save_as_external_data=True, all_tensors_to_one_file=True, location="mlp.data",
                    size_threshold=0)
    return sum(p.numel() for p in model.parameters())


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=os.path.join(root, "tests", "data", "corpus"))
    parser.add_argument("--only", nargs="*", help="file stems to export, leaving MANIFEST.tsv as it is "
                        "(default: all, and the manifest is rewritten)")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.use_deterministic_algorithms(True)

    rows = []
    for stem, source, shape, factory in MODELS:
        if args.only and stem not in args.only:
            continue
        params, buffers, size, digest, nodes = export(stem, factory, args.out)
        print(f"{stem}.onnx: {nodes} nodes, {size} bytes, {params} parameters (+{buffers} buffer elements)",
              file=sys.stderr)
        rows.append([stem + ".onnx", source, shape, str(params), str(buffers), str(nodes), str(size), digest,
                     torch.__version__, torchvision.__version__,
                     f"/usr/bin/python3 scripts/export_corpus.py --only {stem}"])
    if args.only:
        return
    mlp = export_external_data(os.path.join(args.out, "external"))
    print(f"external/mlp.onnx + mlp.data: {mlp} parameters as external data", file=sys.stderr)
    header = ["file", "architecture", "inputs", "parameters", "buffers", "nodes", "bytes", "sha256", "torch",
              "torchvision", "command"]
    with open(os.path.join(args.out, "MANIFEST.tsv"), "w") as f:
        f.write(f"# Made by: /usr/bin/python3 scripts/export_corpus.py (torch {torch.__version__}, "
                f"torchvision {torchvision.__version__}, onnx {onnx.__version__}, opset {OPSET}, "
                "export_params=False, seed 0)\n")
        f.write("# parameters: sum of p.numel() over model.parameters(); buffers: elements of the BatchNorm "
                "running statistics, which the export also lists as inputs\n")
        f.write(f"# external/mlp.onnx + external/mlp.data: Linear(64,128)-ReLU-Linear(128,10), {mlp} parameters "
                "stored as ONNX external data (the tests of that path)\n")
        f.write("\t".join(header) + "\n")
        for row in rows:
            f.write("\t".join(row) + "\n")


if __name__ == "__main__":
    main()
