"""RELU6, int8 and int16, as TFLite Micro computes it: a clamp of the raw input values to
[in_zp, six] with six = clamp(round(6.0f / in_scale) + in_zp) (FloatToQuantizedType). TFLite Micro
ignores the output's quantization parameters here (no requantization), and so do we.
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import DType, Graph, Node
from edgecc.ops import Kernel, OpDef, dtype_limits, in_type, out_type, register
from edgecc.ops._elementwise import same_as_input
from edgecc.ops import _float_act
from edgecc.ops._float import twin
from edgecc.numerics.fixed_point import tflite_round


def int8_or_int16(g: Graph, n: Node) -> bool:
    """input and output must both be int8 or both int16, quantized per tensor"""
    a, b = in_type(g, n), out_type(g, n)
    return (a.dtype == b.dtype and a.dtype in (DType.INT8, DType.INT16) and a.q is not None
            and not a.q.per_channel)


def clamp_range(g: Graph, n: Node) -> tuple[int, int]:
    x = in_type(g, n)
    lo, hi = dtype_limits(x)
    zp = x.q.zero_point[0]
    six = tflite_round(float(np.float32(6.0) / np.float32(x.q.scale[0]))) + zp
    return zp, min(max(six, lo), hi)


def reference(g: Graph, n: Node, ins: list) -> list:
    lo, hi = clamp_range(g, n)
    x = ins[0]
    # Relu6Quantized: val > upper ? upper : (val < lower ? lower : val)
    return [np.where(x > hi, hi, np.where(x < lo, lo, x)).astype(out_type(g, n).dtype.np)]


def lower(g: Graph, n: Node, target) -> Kernel:
    lo, hi = clamp_range(g, n)
    return Kernel("relu6.c.j2", params=dict(n=in_type(g, n).numel, ctype=out_type(g, n).dtype.c,
                                            lo=lo, hi=hi))


OP = register(OpDef("RELU6", same_as_input, reference, lower, [int8_or_int16],
                    dtypes="int8 -> int8, int16 -> int16 (clamp, no requantization)",
                    inplace=((0, 0),)))  # y[i] is written after x[i] is read
twin(OP, _float_act.RELU6)  # float32: edgecc/ops/_float_act.py
