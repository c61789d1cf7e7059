"""Single-op quantized ONNX models (QOperator form) for the SIMD kernel tests of ONNX numerics:
QLinearConv (plain, depthwise, one input channel with a depth multiplier), QGemm (per-tensor or
per-unit weights), QLinearAdd and QLinearMul, with int8 or uint8 activations, seeded weights, biases and
quantization. Each builder returns the serialized ModelProto; onnxruntime is the oracle."""
from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper, numpy_helper

OPSETS = [helper.make_opsetid("", 13), helper.make_opsetid("com.microsoft", 1)]


def _init(name: str, arr) -> TensorProto:
    return numpy_helper.from_array(np.asarray(arr), name)


def _act(rng, dtype) -> tuple[np.float32, object]:
    """(scale, zero point) of an activation of this dtype."""
    zp = rng.integers(100, 156) if dtype == np.uint8 else rng.integers(-30, 30)
    return np.float32(rng.uniform(0.01, 0.1)), dtype(zp)


def _elem(dtype) -> int:
    return TensorProto.UINT8 if dtype == np.uint8 else TensorProto.INT8


def _model(node, inputs, out_name, out_shape, dtype, inits) -> bytes:
    g = helper.make_graph([node], "t", inputs,
                          [helper.make_tensor_value_info(out_name, _elem(dtype), list(out_shape))],
                          inits)
    return helper.make_model(g, opset_imports=OPSETS).SerializeToString()


def _weights(rng, shape, per_channel: bool) -> tuple[np.ndarray, np.ndarray]:
    w = rng.integers(-127, 128, size=shape).astype(np.int8)
    n = shape[0] if per_channel else 1
    ws = rng.uniform(0.002, 0.02, n).astype(np.float32)
    return w, (ws if per_channel else ws[0])


def qlinear_conv(rng, n: int, c: int, h: int, w: int, m: int, k: tuple[int, int],
                 stride=(1, 1), pads=(0, 0, 0, 0), dil=(1, 1), group: int = 1,
                 dtype=np.int8, bias: bool = True) -> bytes:
    """QLinearConv of an NCHW input [n, c, h, w] into m channels (group == c: depthwise)."""
    xs, xz = _act(rng, dtype)
    ys, yz = _act(rng, dtype)
    ys = np.float32(ys * 4)
    wt, ws = _weights(rng, (m, c // group, *k), True)
    inits = [_init("xs", xs), _init("xz", xz), _init("w", wt), _init("ws", ws),
             _init("wz", np.zeros(m, np.int8)), _init("ys", ys), _init("yz", yz)]
    ins = ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz"]
    if bias:
        inits.append(_init("b", rng.integers(-3000, 3000, m).astype(np.int32)))
        ins.append("b")
    node = helper.make_node("QLinearConv", ins, ["y"], strides=list(stride), pads=list(pads),
                            dilations=list(dil), group=group)
    oh = (h + pads[0] + pads[2] - dil[0] * (k[0] - 1) - 1) // stride[0] + 1
    ow = (w + pads[1] + pads[3] - dil[1] * (k[1] - 1) - 1) // stride[1] + 1
    x = helper.make_tensor_value_info("x", _elem(dtype), [n, c, h, w])
    return _model(node, [x], "y", (n, m, oh, ow), dtype, inits)


def qgemm(rng, batches: int, depth: int, units: int, per_channel: bool,
          dtype=np.int8) -> bytes:
    """QGemm (transB = 1) of [batches, depth] by int8 weights [units, depth], int32 bias."""
    xs, xz = _act(rng, dtype)
    ys, yz = _act(rng, dtype)
    ys = np.float32(ys * 4)
    wt, ws = _weights(rng, (units, depth), per_channel)
    wz = np.zeros(units, np.int8) if per_channel else np.int8(0)
    inits = [_init("xs", xs), _init("xz", xz), _init("w", wt), _init("ws", ws), _init("wz", wz),
             _init("b", rng.integers(-3000, 3000, units).astype(np.int32)), _init("ys", ys),
             _init("yz", yz)]
    node = helper.make_node("QGemm", ["x", "xs", "xz", "w", "ws", "wz", "b", "ys", "yz"], ["y"],
                            domain="com.microsoft", transB=1)
    x = helper.make_tensor_value_info("x", _elem(dtype), [batches, depth])
    return _model(node, [x], "y", (batches, units), dtype, inits)


def qlinear_add(rng, a_shape, b_shape, dtype=np.int8, op: str = "QLinearAdd",
                const_b: bool = False) -> bytes:
    """QLinearAdd (or `op`: QLinearMul) of two activations (either may broadcast); `const_b`: b
    a constant initializer (a per-channel scale or bias)."""
    (sa, za), (sb, zb), (sc, zc) = (_act(rng, dtype) for _ in range(3))
    inits = [_init(k, v) for k, v in
             (("sa", sa), ("za", za), ("sb", sb), ("zb", zb), ("sc", sc), ("zc", zc))]
    node = helper.make_node(op, ["a", "sa", "za", "b", "sb", "zb", "sc", "zc"], ["y"],
                            domain="com.microsoft")
    out = tuple(np.broadcast_shapes(tuple(a_shape), tuple(b_shape)))
    ins = [helper.make_tensor_value_info("a", _elem(dtype), list(a_shape))]
    if const_b:
        lo, hi = (0, 256) if dtype == np.uint8 else (-128, 128)
        inits.append(_init("b", rng.integers(lo, hi, b_shape).astype(dtype)))
    else:
        ins.append(helper.make_tensor_value_info("b", _elem(dtype), list(b_shape)))
    return _model(node, ins, "y", out, dtype, inits)
