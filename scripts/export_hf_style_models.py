#!/usr/bin/python3
"""Exports two tiny transformers in the shape of Hugging Face's own classes, for the tests of transformer
recognition in ONNX exports (graph/onnx/transformer_recognition.h).

Run with Debian's interpreter (python3-torch; the exporter does not need the onnx package):

    /usr/bin/python3 scripts/export_hf_style_models.py [--out graph/onnx/tests/data]

The modules are written in plain torch but named and computed as transformers' GPT2LMHeadModel and
LlamaForCausalLM are (the same parameter paths, Conv1D's [in, out] weights, rotary positions, repeat_kv,
eager attention), so that their exports carry what a real export of those classes carries:

  tiny_gpt2.onnx   GPT-2: 2 layers, hidden 64, 4 heads, MLP 128 (n_inner), vocab 128, 32 positions, head tied to wte
  tiny_llama.onnx  Llama: 2 layers, hidden 64, 4 query heads and 2 key/value heads of 16, gated MLP 96,
                   vocab 128, RMSNorm, untied lm_head

Both use the TorchScript exporter (dynamo=False; Debian's torch 1.13 has no dynamo exporter) at opset 17, with
their weights and the exporter's default constant folding, so weights are named as a real export names them
(transposed Linear weights become "onnx::MatMul_N"). Inputs: input_ids [batch, seq]. Seeded: running it again
gives the same graphs.
"""

import argparse
import math
import os

import torch
import torch.nn as nn

OPSET = 17  # the first with LayerNormalization, as transformers' exports use


class Conv1D(nn.Module):
    """GPT-2's linear layer: weight [in, out], out = x @ weight + bias."""

    def __init__(self, nf, nx):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(nx, nf) * 0.02)
        self.bias = nn.Parameter(torch.zeros(nf))

    def forward(self, x):
        size_out = x.size()[:-1] + (self.weight.size(-1),)
        x = torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight)
        return x.view(size_out)


def gelu_new(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


class GPT2Attention(nn.Module):
    def __init__(self, hidden, heads, positions):
        super().__init__()
        self.heads, self.head_dim = heads, hidden // heads
        self.c_attn = Conv1D(3 * hidden, hidden)
        self.c_proj = Conv1D(hidden, hidden)
        self.register_buffer("bias", torch.tril(torch.ones(positions, positions, dtype=torch.bool))[None, None])

    def split_heads(self, x):
        return x.view(x.size()[:-1] + (self.heads, self.head_dim)).permute(0, 2, 1, 3)

    def forward(self, x):
        q, k, v = self.c_attn(x).split(x.size(-1), dim=2)
        q, k, v = self.split_heads(q), self.split_heads(k), self.split_heads(v)
        w = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim)
        length = q.size(-2)
        causal = self.bias[:, :, :length, :length]
        w = torch.where(causal, w, torch.tensor(torch.finfo(w.dtype).min, dtype=w.dtype))
        out = torch.matmul(nn.functional.softmax(w, dim=-1), v)
        out = out.permute(0, 2, 1, 3).contiguous()
        return self.c_proj(out.view(out.size()[:-2] + (self.heads * self.head_dim,)))


class GPT2MLP(nn.Module):
    def __init__(self, hidden, inner):
        super().__init__()
        self.c_fc = Conv1D(inner, hidden)
        self.c_proj = Conv1D(hidden, inner)

    def forward(self, x):
        return self.c_proj(gelu_new(self.c_fc(x)))


class GPT2Block(nn.Module):
    def __init__(self, hidden, heads, inner, positions):
        super().__init__()
        self.ln_1 = nn.LayerNorm(hidden)
        self.attn = GPT2Attention(hidden, heads, positions)
        self.ln_2 = nn.LayerNorm(hidden)
        self.mlp = GPT2MLP(hidden, inner)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT2Model(nn.Module):
    def __init__(self, vocab, positions, hidden, layers, heads, inner):
        super().__init__()
        self.wte = nn.Embedding(vocab, hidden)
        self.wpe = nn.Embedding(positions, hidden)
        self.h = nn.ModuleList(GPT2Block(hidden, heads, inner, positions) for _ in range(layers))
        self.ln_f = nn.LayerNorm(hidden)

    def forward(self, input_ids):
        positions = torch.arange(input_ids.size(-1), dtype=torch.long).unsqueeze(0)
        x = self.wte(input_ids) + self.wpe(positions)
        for block in self.h:
            x = block(x)
        return self.ln_f(x)


class GPT2LMHeadModel(nn.Module):
    def __init__(self, vocab=128, positions=32, hidden=64, layers=2, heads=4, inner=128):
        super().__init__()
        self.transformer = GPT2Model(vocab, positions, hidden, layers, heads, inner)
        self.lm_head = nn.Linear(hidden, vocab, bias=False)
        self.lm_head.weight = self.transformer.wte.weight  # tie_word_embeddings

    def forward(self, input_ids):
        return self.lm_head(self.transformer(input_ids))


class LlamaRMSNorm(nn.Module):
    def __init__(self, hidden, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden))
        self.eps = eps

    def forward(self, x):
        variance = x.pow(2).mean(-1, keepdim=True)
        return self.weight * (x * torch.rsqrt(variance + self.eps))


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def repeat_kv(x, groups):
    batch, kv_heads, length, head_dim = x.shape
    x = x[:, :, None, :, :].expand(batch, kv_heads, groups, length, head_dim)
    return x.reshape(batch, kv_heads * groups, length, head_dim)


class LlamaAttention(nn.Module):
    def __init__(self, hidden, heads, kv_heads):
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = heads, kv_heads, hidden // heads
        self.q_proj = nn.Linear(hidden, heads * self.head_dim, bias=False)
        self.k_proj = nn.Linear(hidden, kv_heads * self.head_dim, bias=False)
        self.v_proj = nn.Linear(hidden, kv_heads * self.head_dim, bias=False)
        self.o_proj = nn.Linear(heads * self.head_dim, hidden, bias=False)

    def forward(self, x, cos, sin, mask):
        batch, length, _ = x.shape
        q = self.q_proj(x).view(batch, length, -1, self.head_dim).transpose(1, 2)
        k = self.k_proj(x).view(batch, length, -1, self.head_dim).transpose(1, 2)
        v = self.v_proj(x).view(batch, length, -1, self.head_dim).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        k, v = repeat_kv(k, self.heads // self.kv_heads), repeat_kv(v, self.heads // self.kv_heads)
        w = torch.matmul(q, k.transpose(2, 3)) * self.head_dim**-0.5 + mask
        w = nn.functional.softmax(w, dim=-1, dtype=torch.float32).to(q.dtype)
        out = torch.matmul(w, v).transpose(1, 2).reshape(batch, length, -1)
        return self.o_proj(out)


class LlamaMLP(nn.Module):
    def __init__(self, hidden, inner):
        super().__init__()
        self.gate_proj = nn.Linear(hidden, inner, bias=False)
        self.up_proj = nn.Linear(hidden, inner, bias=False)
        self.down_proj = nn.Linear(inner, hidden, bias=False)

    def forward(self, x):
        return self.down_proj(nn.functional.silu(self.gate_proj(x)) * self.up_proj(x))


class LlamaDecoderLayer(nn.Module):
    def __init__(self, hidden, heads, kv_heads, inner):
        super().__init__()
        self.self_attn = LlamaAttention(hidden, heads, kv_heads)
        self.mlp = LlamaMLP(hidden, inner)
        self.input_layernorm = LlamaRMSNorm(hidden)
        self.post_attention_layernorm = LlamaRMSNorm(hidden)

    def forward(self, x, cos, sin, mask):
        x = x + self.self_attn(self.input_layernorm(x), cos, sin, mask)
        return x + self.mlp(self.post_attention_layernorm(x))


class LlamaModel(nn.Module):
    def __init__(self, vocab, hidden, layers, heads, kv_heads, inner):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, hidden)
        self.layers = nn.ModuleList(LlamaDecoderLayer(hidden, heads, kv_heads, inner) for _ in range(layers))
        self.norm = LlamaRMSNorm(hidden)
        head_dim = hidden // heads
        self.register_buffer("inv_freq", 1.0 / (10000 ** (torch.arange(0, head_dim, 2).float() / head_dim)))

    def forward(self, input_ids):
        length = input_ids.size(-1)
        positions = torch.arange(length, dtype=torch.float32)
        freqs = torch.outer(positions, self.inv_freq)
        angles = torch.cat((freqs, freqs), dim=-1)
        cos, sin = angles.cos()[None, None], angles.sin()[None, None]
        mask = torch.triu(torch.full((length, length), torch.finfo(torch.float32).min), diagonal=1)
        x = self.embed_tokens(input_ids)
        for layer in self.layers:
            x = layer(x, cos, sin, mask)
        return self.norm(x)


class LlamaForCausalLM(nn.Module):
    def __init__(self, vocab=128, hidden=64, layers=2, heads=4, kv_heads=2, inner=96):
        super().__init__()
        self.model = LlamaModel(vocab, hidden, layers, heads, kv_heads, inner)
        self.lm_head = nn.Linear(hidden, vocab, bias=False)

    def forward(self, input_ids):
        return self.lm_head(self.model(input_ids))


def export(model, path):
    model.eval()
    ids = torch.zeros(1, 8, dtype=torch.long)
    torch.onnx.export(model, (ids,), path, input_names=["input_ids"], output_names=["logits"],
                      dynamic_axes={"input_ids": {0: "batch", 1: "seq"}, "logits": {0: "batch", 1: "seq"}},
                      opset_version=OPSET, do_constant_folding=True)
    print(f"{path}: {os.path.getsize(path)} bytes")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "graph", "onnx", "tests",
                                                      "data"))
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.manual_seed(0)
    export(GPT2LMHeadModel(), os.path.join(args.out, "tiny_gpt2.onnx"))
    torch.manual_seed(0)
    export(LlamaForCausalLM(), os.path.join(args.out, "tiny_llama.onnx"))


if __name__ == "__main__":
    main()
