"""ONNX's integer ops: ConvInteger, MatMulInteger (zero points on both operands, int32 out) and
DynamicQuantizeLinear.

Owns: their handlers. The integer operand becomes an int8 activation with its zero point, the
constant one an int8 quantized constant with its zero point; emit.py then builds the layer
(integer.py: CONV_INTEGER / BATCH_MATMUL). DynamicQuantizeLinear becomes DYNAMIC_QUANTIZE
(edgecc/ops/dynamic_quantize.py), whose outputs must be graph outputs: a run-time scale or zero
point feeding another op is refused by that op's handler, which needs constants.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from edgecc.frontends.onnx import emit
from edgecc.frontends.onnx import nodes as nd
from edgecc.frontends.onnx.builder import Builder, Rec, to_int8
from edgecc.ir import DType, Node, QParams, TensorType, Value
from edgecc.numerics import QLINEAR


def _opt(n, i: int) -> str:
    return n.input[i] if len(n.input) > i else ""


def _zero_point(b: Builder, name: str, what: str) -> np.ndarray:
    if not name:
        return np.zeros(1, np.uint8)
    z = np.asarray(nd._need_const(b, name, what))
    if z.dtype not in (np.int8, np.uint8):
        raise b.unsupported(f"{what} must be int8 or uint8, not {z.dtype}")
    return z


def int_act(b: Builder, x: str, zp_name: str) -> Rec:
    """The int8 IR activation of the integer operand `x` with its (per-tensor) zero point: a
    uint8 graph input becomes int8 with zero point - 128 (nodes._uint8_input)."""
    z = _zero_point(b, zp_name, "the input zero point")
    if z.size != 1:
        raise b.unsupported("a per-row zero point of the activation is not supported")
    r = b.rec(x)
    if r.kind != "act":
        raise b.unsupported(f"the integer input must be an activation, not a {r.kind} value")
    v = b.values[r.value]
    zi = int(z.ravel()[0])
    if v.type.dtype == DType.UINT8 and z.dtype == np.uint8:
        if v.type.q is None:
            return nd._uint8_input(b, x, r, QParams((1.0,), (zi,)), QParams((1.0,), (zi - 128,)))
        raise b.unsupported("a uint8 input read with other zero points")
    if v.type.dtype != DType.INT8 or z.dtype != np.int8:
        raise b.unsupported(f"a {v.type.dtype.value[0]} input with a {z.dtype} zero point")
    if v.type.q is None:
        b.values[r.value] = Value(v.name, replace(v.type, q=QParams((1.0,), (zi,))),
                                  label=v.label)
    elif v.type.q.zero_point != (zi,):
        raise b.unsupported("the input zero point differs from the input's quantization")
    return r


def int_weights(b: Builder, w: str, zp_name: str, axis: int) -> Rec:
    """The constant integer operand with its zero point (per tensor or on `axis`), as int8."""
    data = np.asarray(nd._need_const(b, w, "the weights"))
    z = _zero_point(b, zp_name, "the weight zero point")
    if data.dtype not in (np.int8, np.uint8) or (zp_name and z.dtype != data.dtype):
        raise b.unsupported(f"weights of {data.dtype} with a {z.dtype} zero point")
    data, zz = to_int8(data, z.astype(data.dtype))
    ax = axis % max(data.ndim, 1)
    if zz.size not in (1, data.shape[ax]):
        raise b.unsupported("the weight zero point must be per tensor or per output channel")
    return Rec("qconst", data=data, q=b.qparams_of(np.ones(zz.size, np.float32), zz, ax))


def conv_integer(b: Builder, n, a) -> list[Rec]:
    """ConvInteger(x, w, x_zero_point, w_zero_point) -> int32."""
    info = dict(x=int_act(b, n.input[0], _opt(n, 2)), w=int_weights(b, n.input[1], _opt(n, 3), 0),
                attrs=a)
    return [emit.conv(b, info, None)]


def matmul_integer(b: Builder, n, a) -> list[Rec]:
    """MatMulInteger(A, B, a_zero_point, b_zero_point) -> int32, B a constant."""
    info = dict(x=int_act(b, n.input[0], _opt(n, 2)), w=int_weights(b, n.input[1], _opt(n, 3), -1),
                trans_b=False)
    return [emit.fully_connected(b, info, None)]


def dynamic_quantize(b: Builder, n, a) -> list[Rec]:
    """DynamicQuantizeLinear(x) -> (y uint8, y_scale, y_zero_point)."""
    r = b.rec(n.input[0])
    if r.kind != "act" or b.type(r.value).dtype != DType.FLOAT32:
        raise b.unsupported("DynamicQuantizeLinear of a float32 activation only")
    shape = b.type(r.value).shape
    outs = [b.new_value(TensorType(shape, DType.UINT8), label=n.output[0]),
            b.new_value(TensorType((), DType.FLOAT32), label=_out_name(n, 1)),
            b.new_value(TensorType((), DType.UINT8), label=_out_name(n, 2))]
    k = len(b.nodes)
    # QLinear numerics: its float32 steps must not be contracted (fp-contract off)
    b.nodes.append(Node("DYNAMIC_QUANTIZE", [r.value], outs, {}, name=f"{k}_dynamic_quantize",
                        index=b.index, numerics=QLINEAR))
    return [Rec("act", outs[0], r.perm), Rec("act", outs[1], ()), Rec("act", outs[2], ())]


def _out_name(n, i: int) -> str:
    return n.output[i] if len(n.output) > i else ""

