"""QDQ groups around single ops, as quantize_static writes them (DequantizeLinear -> op ->
QuantizeLinear, float32 model inputs and outputs): data movement (Pad in its three modes,
Slice, Concat, Split, Transpose, Reshape, Flatten, Squeeze / Unsqueeze, Gather, Tile, Expand,
DepthToSpace / SpaceToDepth, Resize nearest, MaxPool), the elementwise ops whose integer form is
exact (Neg, Abs, Relu, Clip, LeakyRelu, PRelu), reductions (ReduceMean, ReduceMax, the global
pools), MatMul with batch dimensions, Mul / Sub / Div, and the ops onnxruntime computes in float
(Sigmoid, HardSigmoid, HardSwish, Tanh, Softmax, Resize linear, LayerNormalization, Erf, Gelu),
those checked within one step with the count of differing values reported.
"""
from __future__ import annotations

import numpy as np

from onnx_corpus import EXACT, LSB, Case
from onnx_corpus._make import Net, case_builder

X = (1, 4, 6, 6)  # NCHW


def _pad(mode: str, value: float | None = None):
    def g(n: Net):
        ins = [n.input(X), n.init(np.array([0, 0, 1, 2, 0, 0, 2, 1], np.int64), "pads")]
        if value is not None:
            ins.append(n.init(np.array(value, np.float32), "value"))
        n.output(n.op("Pad", ins, mode=mode))
    return g


def _pad_attrs(n: Net):  # opset 10: pads and value are attributes
    x = n.conv(n.input(X), 4, 4)
    n.output(n.op("Pad", [x], pads=[0, 0, 1, 0, 0, 0, 0, 2], value=0.0))


def _unary(op: str, after_conv: bool = False, **attrs):
    """op(x); after_conv: of a Conv's output (quantize_static quantizes some ops, such as Relu
    and the data movement ones, only where their input already is)."""
    def g(n: Net):
        x = n.input(X)
        n.output(n.op(op, [n.conv(x, 4, 4, relu=False) if after_conv else x], **attrs))
    return g


def _with(op: str, *consts, **attrs):
    """op(conv(x), *consts): consts as arrays (int64 shapes, indices ...) or float weights."""
    def g(n: Net):
        x = n.conv(n.input(X), 4, 4, relu=False)
        n.output(n.op(op, [x, *(n.init(c) for c in consts)], **attrs))
    return g


def _slice(n: Net):
    x = n.conv(n.input(X), 4, 4)
    i64 = lambda *v: n.init(np.array(v, np.int64))  # noqa: E731
    n.output(n.op("Slice", [x, i64(1, 0), i64(3, 5), i64(1, 3), i64(1, 2)]))


def _concat(n: Net):
    x = n.input(X)
    n.output(n.op("Concat", [x, n.conv(x, 4, 4)], axis=1))


def _split(n: Net):
    x = n.input(X)
    a, b = n.op("Split", [x, n.init(np.array([1, 3], np.int64))], n_out=2, axis=1)
    n.output(n.op("Add", [n.op("ReduceMax", [a], axes=[1], keepdims=1), b]))


def _transpose_conv(n: Net):
    x = n.input((1, 6, 6, 4))  # NHWC in, as exporters write
    n.output(n.conv(n.op("Transpose", [x], perm=[0, 3, 1, 2]), 4, 8))


def _reshape(n: Net):
    x = n.input(X)
    n.output(n.op("Reshape", [n.conv(x, 4, 4), n.init(np.array([1, 4, 36], np.int64))]))


def _flatten_gemm(n: Net):
    x = n.input(X)
    n.output(n.gemm(n.op("Flatten", [n.conv(x, 4, 4, stride=2)], axis=1), 36, 10))


def _squeeze(n: Net):
    x = n.input((1, 4, 1, 6))
    y = n.op("Squeeze", [n.conv(x, 4, 4, k=1, relu=False), n.init(np.array([2], np.int64))])
    n.output(n.op("Unsqueeze", [n.op("Relu", [y]), n.init(np.array([3], np.int64))]))


def _gather(n: Net):
    x = n.conv(n.input(X), 4, 4)
    n.output(n.op("Gather", [x, n.init(np.array([3, 0, 2], np.int64))], axis=1))


def _tile(n: Net):
    n.output(n.op("Tile", [n.input(X), n.init(np.array([1, 2, 1, 2], np.int64))]))


def _expand(n: Net):
    x = n.input((1, 4, 1, 6))
    n.output(n.op("Expand", [x, n.init(np.array([1, 4, 3, 6], np.int64))]))


def _resize(mode: str, ctm: str = "asymmetric"):
    def g(n: Net):
        x = n.conv(n.input(X), 4, 4)
        extra = dict(nearest_mode="floor") if mode == "nearest" else {}
        n.output(n.op("Resize", [x, n.init(np.zeros(0, np.float32)),
                                 n.init(np.array([1, 1, 2, 2], np.float32))], mode=mode,
                      coordinate_transformation_mode=ctm, **extra))
    return g


def _maxpool(n: Net):
    n.output(n.op("MaxPool", [n.conv(n.input(X), 4, 8)], kernel_shape=[2, 2], strides=[2, 2]))


def _prelu(n: Net):
    x = n.input(X)
    slope = n.init(np.array([0.1, 0.25, -0.2, 0.5], np.float32).reshape(4, 1, 1))
    n.output(n.op("PRelu", [n.conv(x, 4, 4, relu=False), slope]))


def _reduce(op: str, axes, keep: int):
    def g(n: Net):
        x = n.conv(n.input(X), 4, 8, relu=False)
        if not axes:
            n.output(n.op(op, [x]))
        elif n.opset >= 18 and op == "ReduceMean":
            n.output(n.op(op, [x, n.init(np.array(axes, np.int64))], keepdims=keep))
        else:
            n.output(n.op(op, [x], axes=list(axes), keepdims=keep))
    return g


def _matmul_batch(n: Net):
    a = n.input((1, 3, 4, 8), "a")
    b = n.input((1, 3, 8, 5), "b")
    n.output(n.op("MatMul", [a, b]))


def _matmul_const(n: Net):
    x = n.input((2, 5, 8))
    n.output(n.op("MatMul", [x, n.weight((8, 6))]))


def _binary(op: str):
    def g(n: Net):
        x = n.input(X)
        y = n.conv(x, 4, 4, relu=op != "Div")
        if op == "Div":  # a divisor away from zero
            y = n.op("Add", [n.op("Abs", [y]), n.init(np.array(1.0, np.float32))])
        n.output(n.op(op, [x, y]))
    return g


def _max_min(n: Net):  # Clip written as Max / Min by a constant
    x = n.conv(n.input(X), 4, 4, relu=False)
    y = n.op("Max", [x, n.init(np.array(-0.5, np.float32))])
    n.output(n.op("Min", [y, n.init(np.array(0.75, np.float32))]))


def _softmax(n: Net):
    x = n.input((1, 3, 10))
    n.output(n.op("Softmax", [x], axis=-1))


def _layernorm(n: Net):
    x = n.input((1, 5, 16))
    g, b = n.weight((16,), 0.5), n.weight((16,), 0.1)
    n.output(n.op("LayerNormalization", [x, g, b], axis=-1, epsilon=1e-5))


def _gelu_erf(n: Net):  # Gelu as exporters before opset 20 write it: x * 0.5 * (1 + erf(x/sqrt2))
    x = n.input((1, 5, 16))
    e = n.op("Erf", [n.op("Div", [x, n.init(np.array(1.4142135, np.float32))])])
    h = n.op("Mul", [x, n.op("Add", [e, n.init(np.array(1.0, np.float32))])])
    n.output(n.op("Mul", [h, n.init(np.array(0.5, np.float32))]))


def _case(name: str, graph, check: str = EXACT, opset: int = 13, ops: tuple = (), **q) -> Case:
    return Case(f"qdq_{name}", case_builder(f"qdq_{name}", graph, opset=opset,
                                            extra_ops=ops, **q), check)


CASES = [
    _case("pad_constant", _pad("constant")),
    _case("pad_value", _pad("constant", 0.5), opset=11),
    _case("pad_opset10", _pad_attrs, opset=10),
    _case("pad_reflect", _pad("reflect")),
    _case("pad_edge", _pad("edge")),
    _case("slice", _slice),
    _case("concat", _concat),
    _case("split", _split, ops=("ReduceMax",)),
    _case("transpose", _transpose_conv),
    _case("reshape", _reshape),
    _case("flatten", _flatten_gemm),
    _case("squeeze", _squeeze),
    _case("gather", _gather),
    _case("tile", _tile, ops=("Tile",)),
    _case("expand", _expand, ops=("Expand",)),
    _case("depth_to_space", _unary("DepthToSpace", blocksize=2, mode="DCR"),
          ops=("DepthToSpace",)),
    _case("space_to_depth", _unary("SpaceToDepth", blocksize=2), ops=("SpaceToDepth",)),
    _case("resize_nearest", _resize("nearest")),
    _case("maxpool", _maxpool),
    _case("neg", _unary("Neg"), ops=("Neg",)),
    _case("abs", _unary("Abs"), ops=("Abs",)),
    _case("relu", _unary("Relu", after_conv=True)),
    _case("clip", _with("Clip", np.array(-0.5, np.float32), np.array(1.0, np.float32))),
    _case("leaky_relu", _unary("LeakyRelu", alpha=0.1)),
    _case("prelu", _prelu, ops=("PRelu",)),
    _case("reduce_mean", _reduce("ReduceMean", (2, 3), 1), LSB, ops=("ReduceMean",)),
    _case("reduce_mean_c", _reduce("ReduceMean", (1,), 0), LSB, opset=18, ops=("ReduceMean",)),
    _case("reduce_max", _reduce("ReduceMax", (2, 3), 0), ops=("ReduceMax",)),
    _case("gap", _reduce("GlobalAveragePool", (), 1), LSB),
    _case("gmp", lambda n: n.output(n.op("GlobalMaxPool", [n.conv(n.input(X), 4, 8)])),
          ops=("GlobalMaxPool",)),
    _case("matmul_batch", _matmul_batch, LSB),
    _case("matmul_const", _matmul_const),
    _case("mul", _binary("Mul")),
    _case("sub", _binary("Sub"), ops=("Sub",)),
    _case("div", _binary("Div"), ops=("Div", "Abs")),
    _case("max", _binary("Max"), ops=("Max",)),
    _case("sub_const", _with("Sub", np.array(0.25, np.float32)), ops=("Sub",)),
    _case("div_const", _with("Div", np.array(1.5, np.float32)), LSB, ops=("Div",)),
    _case("max_min", _max_min, ops=("Max", "Min")),
    _case("sigmoid", _unary("Sigmoid"), LSB),
    _case("hard_sigmoid", _unary("HardSigmoid", alpha=0.2, beta=0.5), LSB, ops=("HardSigmoid",)),
    _case("hard_swish", _unary("HardSwish"), LSB, opset=14, ops=("HardSwish",)),
    _case("tanh", _unary("Tanh"), LSB, ops=("Tanh",)),
    _case("softmax", _softmax, LSB),
    _case("resize_linear", _resize("linear", "half_pixel"), LSB),
    _case("layernorm", _layernorm, LSB, opset=17),
    _case("gelu_erf", _gelu_erf, LSB, ops=("Erf", "Div")),
    _case("gelu", _unary("Gelu"), LSB, opset=20, ops=("Gelu",)),
]
