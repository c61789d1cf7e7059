"""onnxruntime's QLinearAveragePool (CPU provider, com.microsoft) for AVERAGE_POOL_2D nodes with
QLinear numerics, in numpy and as portable C (templates/c/average_pool_2d_onnx.c.j2).

Owns: its arithmetic. Each input value is dequantized in float32, x_scale * float(x - x_zp); a
window's taps inside the input are summed in float32 row by row; the sum is divided by their
count (padding excluded) and y = saturate(round_half_even(float32(avg / y_scale) + y_zp)) with
the ONNX zero point (uint8 models: the IR's + 128, attribute "onnx_zp_offset"), which differs
from TFLite's integer average (round half away from zero) on ties. Checked against onnxruntime
1.32 (tests/test_onnx_float_ops.py). The C needs -ffp-contract=off.
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import Graph, Node
from edgecc.ops import in_type, out_type
from edgecc.ops._conv_common import act_range, pool_geometry
from edgecc.ops.quantize import c_float_literal

F32 = np.float32
CLAMP = F32(1 << 22)  # ec_onnx_round's exact range; every int8 result saturates beyond


def params(g: Graph, n: Node) -> dict:
    x, y = in_type(g, n), out_type(g, n)
    off = int(n.attrs.get("onnx_zp_offset", 0))
    q = np.arange(-128, 128, dtype=np.int64) - int(x.q.zero_point[0])
    return dict(deq=(F32(x.q.scale[0]) * q.astype(F32)).astype(F32), off=off,
                yscale=F32(y.q.scale[0]), zpf=F32(int(y.q.zero_point[0]) + off))


def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    d, p = pool_geometry(g, n), params(g, n)
    lo, hi = act_range(g, n)
    x = p["deq"][np.asarray(ins[0]).astype(np.int64) + 128]
    out = np.zeros((d["batches"], d["out_h"], d["out_w"], d["depth"]), np.int64)
    for oy in range(d["out_h"]):
        y0 = oy * d["stride_h"] - d["pad_h"]
        for ox in range(d["out_w"]):
            x0 = ox * d["stride_w"] - d["pad_w"]
            acc = np.zeros((d["batches"], d["depth"]), F32)
            ys = range(max(y0, 0), min(y0 + d["fh"], d["in_h"]))
            xs = range(max(x0, 0), min(x0 + d["fw"], d["in_w"]))
            for yy in ys:
                for xx in xs:
                    acc = (acc + x[:, yy, xx, :]).astype(F32)
            v = ((acc / F32(len(ys) * len(xs))).astype(F32) / p["yscale"]).astype(F32)
            v = np.clip((v + p["zpf"]).astype(F32), -CLAMP, CLAMP)
            out[:, oy, ox, :] = np.rint(v).astype(np.int64) - p["off"]
    return [np.clip(out, lo, hi).astype(np.int8)]


def kernel_params(g: Graph, n: Node) -> tuple[dict, dict]:
    """(template params, consts) average_pool_2d_onnx.c.j2 reads."""
    p = params(g, n)
    return (dict(yscale=c_float_literal(p["yscale"]), zpf=c_float_literal(p["zpf"]),
                 off=p["off"], clamp=c_float_literal(CLAMP)), dict(deq=p["deq"]))
