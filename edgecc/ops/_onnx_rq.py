"""onnxruntime's requantization of integer accumulators ("ONNX numerics"), in numpy.

Owns: the float32 output scales of an ONNX-numerics node and the epilogue applied to its int32
accumulators. A node carries attrs["numerics"] == "onnx" when it comes from an ONNX model
(edgecc/frontends/onnx/); its accumulator is the same exact integer as TFLite's, only the epilogue
differs. onnxruntime's QLinearConv / QGemm / QLinearMatMul (CPU provider; MLAS
MlasRequantizeOutput) compute, per output channel c,

    scale[c] = float32(float32(x_scale * w_scale[c]) / y_scale)
    y = clamp(round_half_even(float32(float32(acc) * scale[c])) + y_zp, act_min, act_max)

(MLAS clamps the float to [qmin - zp, qmax - zp] before rounding, which gives the same integers).
The C twin is ec_onnx_rq in runtime_c/edgecc_rt.h; it must be built with -ffp-contract=off.
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import Graph, Node
from edgecc.ops import in_type, out_type

ONNX = "onnx"


def is_onnx(n: Node) -> bool:
    return n.attrs.get("numerics") == ONNX


def onnx_scales(g: Graph, n: Node, channels: int) -> np.ndarray:
    """float32 scale per output channel, computed in float32 as onnxruntime does."""
    xs = np.float32(in_type(g, n, 0).q.scale[0])
    ys = np.float32(out_type(g, n).q.scale[0])
    ws = np.asarray(in_type(g, n, 1).q.scale, np.float32)
    ws = np.broadcast_to(ws, (channels,)) if ws.size == 1 else ws
    return ((xs * ws).astype(np.float32) / ys).astype(np.float32)


def onnx_requantize(acc: np.ndarray, scale: np.ndarray, out_zp: int, lo: int, hi: int,
                    dtype) -> np.ndarray:
    """clamp(rint(float32(acc) * scale) + zp): float32 product, round half to even."""
    r = np.asarray(acc).astype(np.float32) * np.asarray(scale, np.float32)
    r = np.clip(r.astype(np.float32), -32768.0, 32767.0)
    return np.clip(np.rint(r).astype(np.int64) + out_zp, lo, hi).astype(dtype)


def rq_array(m: np.ndarray) -> np.ndarray:
    """The per-channel multiplier constant as the C kernel reads it: float32 scales for ONNX
    numerics, int32 multipliers otherwise."""
    m = np.asarray(m)
    return m.astype(np.float32) if m.dtype.kind == "f" else m.astype(np.int32)


def dequant_fn_quant_table(g: Graph, n: Node, fn=None) -> np.ndarray:
    """The int8 -> int8 table of y = QuantizeLinear(fn(DequantizeLinear(x))) as onnxruntime
    computes it in float32 (QLinearLookupBase / an unfused DQ -> op -> Q): (x - zp) * scale,
    fn, / y_scale, round half to even, + y_zp, saturate. fn None: a plain requantization."""
    x, y = in_type(g, n), out_type(g, n)
    q = np.arange(-128, 128, dtype=np.int64)
    v = (q - int(x.q.zero_point[0])).astype(np.float32) * np.float32(x.q.scale[0])
    if fn is not None:
        v = np.asarray(fn(v.astype(np.float64))).astype(np.float32)
    r = np.clip((v / np.float32(y.q.scale[0])).astype(np.float32), -32768.0, 32767.0)
    return np.clip(np.rint(r).astype(np.int64) + int(y.q.zero_point[0]), -128, 127).astype(np.int8)


def sigmoid(v: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-v))
