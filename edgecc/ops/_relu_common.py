"""The requantize-and-clamp kernel shared by RELU (TFLite Micro) and RELU_N1_TO_1 (TFLite).

TFLite Micro's ReluQuantized does not assume equal input/output quantization: every element is
requantized, y = out_zp + MultiplyByQuantizedMultiplier(x - in_zp, M, S) with (M, S) =
QuantizeMultiplier(double(in_scale) / double(out_scale)), then clamped to the activation range
computed from the OUTPUT parameters (zp + round(bound / scale) in float32). When the parameters
are equal, M = 2^30, S = 1 and the requantization is the identity, so the kernel is a plain clamp.
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import DType, Graph, Node
from edgecc.ops import Kernel, dtype_limits, in_type, out_type
from edgecc.numerics.fixed_point import activation_range, mbqm, quantize_multiplier


def int8_or_int16_same_type(g: Graph, n: Node) -> bool:
    """input and output must both be int8 or both int16, quantized per tensor"""
    a, b = in_type(g, n), out_type(g, n)
    return (a.dtype == b.dtype and a.dtype in (DType.INT8, DType.INT16) and a.q is not None
            and b.q is not None and not a.q.per_channel and not b.q.per_channel)


def int16_zero_points(g: Graph, n: Node) -> bool:
    """int16 activations must have zero point 0 (TFLite's symmetric int16 scheme)"""
    a, b = in_type(g, n), out_type(g, n)
    return a.dtype != DType.INT16 or (a.q.zero_point[0] == 0 and b.q.zero_point[0] == 0)


def relu_params(g: Graph, n: Node, act: int) -> dict:
    """Multiplier, shift, zero points and clamp range as TFLite prepares them (act: fused code)."""
    x, y = in_type(g, n), out_type(g, n)
    m, s = quantize_multiplier(float(x.q.scale[0]) / float(y.q.scale[0]))
    lo, hi = dtype_limits(y)
    act_min, act_max = activation_range(act, lo, hi, y.q.scale[0], y.q.zero_point[0])
    return dict(mult=m, shift=s, in_zp=x.q.zero_point[0], out_zp=y.q.zero_point[0],
                act_min=act_min, act_max=act_max)


def relu_reference(g: Graph, n: Node, x: np.ndarray, act: int) -> np.ndarray:
    p = relu_params(g, n, act)
    v = mbqm(x.astype(np.int64) - p["in_zp"], p["mult"], p["shift"]) + p["out_zp"]
    return np.clip(v, p["act_min"], p["act_max"]).astype(out_type(g, n).dtype.np)


def relu_lower(g: Graph, n: Node, act: int) -> Kernel:
    p = relu_params(g, n, act)
    p.update(n=in_type(g, n).numel, ctype=out_type(g, n).dtype.c)
    if p["mult"] == 1 << 30 and p["shift"] == 1 and p["in_zp"] == p["out_zp"]:
        # Identity requantization (equal parameters): only the clamp remains.
        return Kernel("relu6.c.j2", params=dict(n=p["n"], ctype=p["ctype"], lo=p["act_min"],
                                                hi=p["act_max"]), variant="clamp")
    return Kernel("relu.c.j2", params=p)
