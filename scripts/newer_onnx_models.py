#!/usr/bin/python3
"""Writes the hand-built ONNX models of tests/data/onnx_coverage/ that no exporter on this machine can write:
opsets 18 to 21, IR 9 and 10, model-local functions with attribute defaults and overloads, the newer element
types. Debian's python3-onnx (1.12) knows opsets up to 17 only, so the models are built from the protobuf
messages directly (onnx.helper for nodes, the newer fields appended as raw protobuf fields) and never checked
by its checker.

    /usr/bin/python3 scripts/newer_onnx_models.py [--out tests/data/onnx_coverage]

Every model is a small but complete network (a Transformer block, a CNN stem, a quantized projection) with a
symbolic batch axis, so that the importer's answer can be compared with figures worked out by hand in
graph/onnx/tests/onnx_coverage_test.cc.
"""

import argparse
import os

import onnx
from onnx import TensorProto, helper

FLOAT8E4M3FN = 17
INT4 = 22


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field(number, payload):
    """A length-delimited protobuf field: how fields newer than onnx 1.12 are written."""
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def with_fields(message, fields):
    """A copy of `message` carrying raw fields its class does not know (kept as unknown fields)."""
    copy = type(message)()
    copy.ParseFromString(message.SerializeToString() + b"".join(fields))
    return copy


def weight(name, shape, data_type=TensorProto.FLOAT):
    """A weight with its shape and no data, as tools that strip weights leave them: the files stay small."""
    t = TensorProto()
    t.name, t.data_type = name, data_type
    t.dims.extend(shape)
    return t


def ints(name, values):
    return helper.make_tensor(name, TensorProto.INT64, [len(values)], values)


def model(graph, opset, ir_version, functions=(), domains=()):
    imports = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, 1) for d in domains]
    m = helper.make_model(graph, opset_imports=imports, producer_name="placement-tests", functions=list(functions))
    m.ir_version = ir_version
    return m


def transformer_block_opset18():
    """Two calls of a function `pkg.Block` (LayerNorm, attention-free MLP with GELU written as Erf) at opset 18:
    ReduceMean takes axes as an input, Split num_outputs, Pad with axes; `eps` defaults through IR 9's
    attribute_proto and the second call overrides it."""
    body = [
        helper.make_node("ReduceMean", ["x", "axes"], ["mean"], name="mean"),
        helper.make_node("Sub", ["x", "mean"], ["centered"], name="center"),
        helper.make_node("Mul", ["centered", "centered"], ["sq"], name="square"),
        helper.make_node("ReduceMean", ["sq", "axes"], ["var"], name="var"),
        helper.make_node("Add", ["var", "eps_t"], ["var_eps"], name="add_eps"),
        helper.make_node("Sqrt", ["var_eps"], ["std"], name="std"),
        helper.make_node("Div", ["centered", "std"], ["normed"], name="norm"),
        helper.make_node("MatMul", ["normed", "w_up"], ["up"], name="up"),
        helper.make_node("Split", ["up"], ["gate", "value"], name="split", axis=-1, num_outputs=2),
        helper.make_node("Sigmoid", ["gate"], ["gate_act"], name="gate_act"),
        helper.make_node("Mul", ["gate_act", "value"], ["glu"], name="glu"),
        helper.make_node("MatMul", ["glu", "w_down"], ["down"], name="down"),
        helper.make_node("Add", ["x", "down"], ["y"], name="residual"),
    ]
    eps = helper.make_node("Constant", [], ["eps_t"], name="eps")
    ref = helper.AttributeProto()
    ref.name, ref.type, ref.ref_attr_name = "value_float", helper.AttributeProto.FLOAT, "eps"
    eps.attribute.append(ref)
    axes = helper.make_node("Constant", [], ["axes"], name="axes", value=ints("axes", [-1]))
    fn = helper.make_function("pkg", "Block", ["x", "w_up", "w_down"], ["y"], [axes, eps] + body,
                              [helper.make_opsetid("", 18)], attributes=["eps"])
    default = helper.make_attribute("eps", 1e-5)
    fn = with_fields(fn, [field(11, default.SerializeToString())])
    nodes = [
        helper.make_node("Block", ["tokens", "w_up0", "w_down0"], ["h0"], name="/layers.0", domain="pkg"),
        helper.make_node("Block", ["h0", "w_up1", "w_down1"], ["h1"], name="/layers.1", domain="pkg", eps=1e-6),
        helper.make_node("Pad", ["h1", "pads", "", "pad_axes"], ["padded"], name="/pad"),
    ]
    inits = [weight("w_up0", [64, 256]), weight("w_down0", [128, 64]), weight("w_up1", [64, 256]),
             weight("w_down1", [128, 64]), ints("pads", [0, 2]), ints("pad_axes", [1])]
    graph = helper.make_graph(nodes, "block18", [helper.make_tensor_value_info("tokens", TensorProto.FLOAT,
                                                                               ["batch", 32, 64])],
                              [helper.make_tensor_value_info("padded", TensorProto.FLOAT, None)], inits)
    return model(graph, 18, 9, [fn], ["pkg"])


def vision_stem_opset20():
    """A CNN stem at opset 20: GroupNormalization, Gelu, AveragePool with dilations (19), Resize with axes and
    keep_aspect_ratio_policy (18), AffineGrid and GridSample (20), a Cast to float8 for the output (19)."""
    nodes = [
        helper.make_node("Conv", ["image", "w_conv"], ["c"], name="/stem/conv", strides=[2, 2], pads=[1, 1, 1, 1]),
        helper.make_node("GroupNormalization", ["c", "gn_scale", "gn_bias"], ["gn"], name="/stem/norm", num_groups=4),
        helper.make_node("Gelu", ["gn"], ["act"], name="/stem/gelu"),
        helper.make_node("AveragePool", ["act"], ["pooled"], name="/stem/pool", kernel_shape=[3, 3],
                         dilations=[2, 2]),
        helper.make_node("Resize", ["pooled", "", "", "sizes"], ["resized"], name="/stem/resize", axes=[2, 3],
                         keep_aspect_ratio_policy="not_larger", mode="linear"),
        helper.make_node("AffineGrid", ["theta", "grid_size"], ["grid"], name="/warp/grid"),
        helper.make_node("GridSample", ["resized", "grid"], ["warped"], name="/warp/sample"),
        helper.make_node("Cast", ["warped"], ["out8"], name="/out/cast", to=FLOAT8E4M3FN),
    ]
    inits = [weight("w_conv", [16, 3, 3, 3]), weight("gn_scale", [16]), weight("gn_bias", [16]),
             ints("sizes", [64, 48]), ints("grid_size", [1, 16, 24, 24]), helper.make_tensor("theta", TensorProto.FLOAT, [1, 2, 3], [1, 0, 0, 0, 1, 0])]
    graph = helper.make_graph(nodes, "stem20", [helper.make_tensor_value_info("image", TensorProto.FLOAT,
                                                                              [1, 3, 128, 128])],
                              [helper.make_tensor_value_info("out8", FLOAT8E4M3FN, None)], inits)
    return model(graph, 20, 9)


def quantized_projection_opset21():
    """IR 10 at opset 21: a block-quantized weight (INT4, DequantizeLinear with block_size), a function with two
    overloads called once each, and a Loop over a folded trip count whose body reads the enclosing scope."""
    def projection(overload, activation):
        nodes = [helper.make_node("MatMul", ["x", "w"], ["h"], name="matmul"),
                 helper.make_node(activation, ["h"], ["y"], name="act")]
        fn = helper.make_function("pkg", "Proj", ["x", "w"], ["y"], nodes, [helper.make_opsetid("", 21)])
        return with_fields(fn, [field(13, overload.encode())])

    dq = helper.make_node("DequantizeLinear", ["w_q", "w_scale"], ["w"], name="/dequant", axis=0, block_size=32)
    first = helper.make_node("Proj", ["x", "w"], ["p0"], name="/proj.relu", domain="pkg")
    first = with_fields(first, [field(8, b"relu")])
    second = helper.make_node("Proj", ["p0", "w"], ["p1"], name="/proj.tanh", domain="pkg")
    second = with_fields(second, [field(8, b"tanh")])
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"], name="keep"),
         helper.make_node("MatMul", ["state", "w"], ["next"], name="step")],
        "body", [helper.make_tensor_value_info("i", TensorProto.INT64, []),
                 helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
                 helper.make_tensor_value_info("state", TensorProto.FLOAT, None)],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("next", TensorProto.FLOAT, None)])
    loop = helper.make_node("Loop", ["trips", "", "p1"], ["looped"], name="/refine", body=body)
    w_q = weight("w_q", [128, 128], INT4)
    inits = [w_q, weight("w_scale", [4, 128]), helper.make_tensor("trips", TensorProto.INT64, [], [3])]
    graph = helper.make_graph([dq, first, second, loop], "proj21",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 128])],
                              [helper.make_tensor_value_info("looped", TensorProto.FLOAT, None)], inits)
    return model(graph, 21, 10, [projection("relu", "Relu"), projection("tanh", "Tanh")], ["pkg"])


MODELS = {
    "transformer_block_op18_functions.onnx": transformer_block_opset18,
    "vision_stem_op20.onnx": vision_stem_opset20,
    "quantized_projection_op21_ir10.onnx": quantized_projection_opset21,
}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "tests", "data", "onnx_coverage"))
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for name, build in MODELS.items():
        path = os.path.join(args.out, name)
        with open(path, "wb") as f:
            f.write(build().SerializeToString())
        print(path, os.path.getsize(path))


if __name__ == "__main__":
    main()
