"""onnxruntime's requantization of integer accumulators (the QLinear dialect), in numpy.

Owns: the float32 output scales of a QLinear node and the epilogue applied to its int32
accumulators, and that epilogue's proven integer lines (`fixed_epilogue`). A node follows it when
the ONNX frontend gave it `QLINEAR` (edgecc/ir.py, exported by edgecc.numerics); its accumulator is
the same exact integer as TFLite's, only the epilogue differs. onnxruntime's QLinearConv / QGemm /
QLinearMatMul (CPU provider; MLAS MlasRequantizeOutput) compute, per output channel c,

    scale[c] = float32(float32(x_scale * w_scale[c]) / y_scale)
    y = clamp(round_half_even(float32(float32(acc) * scale[c])) + y_zp, act_min, act_max)

(MLAS clamps the float to [qmin - zp, qmax - zp] before rounding, which gives the same integers).
The C twin is ec_onnx_rq in runtime_c/edgecc_rt.h; it must be built with -ffp-contract=off.
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import Graph, Node

def onnx_scales(g: Graph, n: Node, channels: int) -> np.ndarray:
    """float32 scale per output channel, computed in float32 as onnxruntime does."""
    xs = np.float32(g.type(n.inputs[0]).q.scale[0])
    ys = np.float32(g.type(n.outputs[0]).q.scale[0])
    ws = np.asarray(g.type(n.inputs[1]).q.scale, np.float32)
    ws = np.broadcast_to(ws, (channels,)) if ws.size == 1 else ws
    return ((xs * ws).astype(np.float32) / ys).astype(np.float32)


def onnx_requantize(acc: np.ndarray, scale: np.ndarray, out_zp: int, lo: int, hi: int,
                    dtype) -> np.ndarray:
    """clamp(rint(float32(acc) * scale) + zp): float32 product, round half to even."""
    r = np.asarray(acc).astype(np.float32) * np.asarray(scale, np.float32)
    r = np.clip(r.astype(np.float32), -32768.0, 32767.0)
    return np.clip(np.rint(r).astype(np.int64) + out_zp, lo, hi).astype(dtype)


def dequant_fn_quant_table(g: Graph, n: Node, fn=None) -> np.ndarray:
    """The int8 -> int8 table of y = QuantizeLinear(fn(DequantizeLinear(x))) as onnxruntime
    computes it in float32 (QLinearLookupBase / an unfused DQ -> op -> Q): (x - zp) * scale,
    fn, / y_scale, round half to even, + y_zp, saturate. fn None: a plain requantization."""
    x, y = g.type(n.inputs[0]), g.type(n.outputs[0])
    f64 = None if fn is None else (lambda v: fn(v.astype(np.float64)))
    return table_of(x.q.scale[0], x.q.zero_point[0], y.q.scale[0], y.q.zero_point[0], f64)


def table_of(x_scale: float, x_zp: int, y_scale: float, y_zp: int, fn=None) -> np.ndarray:
    """The int8 -> int8 table (index x + 128) of QuantizeLinear(fn(DequantizeLinear(x))) in
    float32 as onnxruntime computes it: (x - zp) * scale, fn (given and returning float32
    arrays), / y_scale, round half to even, + y_zp, saturate."""
    q = np.arange(-128, 128, dtype=np.int64)
    v = (q - int(x_zp)).astype(np.float32) * np.float32(x_scale)
    if fn is not None:
        v = np.asarray(fn(v)).astype(np.float32)
    with np.errstate(invalid="ignore", over="ignore"):
        r = np.clip((v / np.float32(y_scale)).astype(np.float32), -32768.0, 32767.0)
    r = np.where(np.isnan(r), 0, r)
    return np.clip(np.rint(r).astype(np.int64) + int(y_zp), -128, 127).astype(np.int8)


def sigmoid(v: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-v))



# The integer twin of the epilogue. Per channel, y = floor((acc * M + R) / 2^32) (clamped; the
# zero point is in R), M an int32: one SMLAL (a kernel holding 2 acc adds 2 R and shifts once
# more). It agrees with onnxruntime's float32 product on EVERY accumulator of the channel's range
# when both give each output value from the same smallest accumulator: onnxruntime's function is
# non-decreasing in acc (float32 rounding and rint are), so those thresholds T_v say everything,
# and floor((acc * M + R) / 2^32) >= v exactly for acc >= T_v when, for every v,
# T_v * M + R >= v 2^32 > (T_v - 1) * M + R: R in an interval per M, searched near
# scale * 2^32. Exact rounding of acc * scale always fits; onnxruntime's float32 product crosses
# a rounding boundary where acc * scale lies within about 2^-24 |acc * scale| of one, and a
# channel where it does so both ways has no such line (it keeps the float32 epilogue).
FIXED_SPAN = 512  # candidate M on each side of scale * 2^32
LINES = True  # False: every channel keeps the float32 epilogue (tests run both kernels)


def _thresholds(f, lo: np.ndarray, hi: np.ndarray, vals: np.ndarray) -> np.ndarray:
    """For non-decreasing f(acc [C, V]) -> int: per channel c and value v the smallest acc in
    [lo[c], hi[c]] with f >= v (hi[c] + 1: none), by bisection."""
    a = np.repeat(lo[:, None], vals.size, 1)
    b = np.repeat(hi[:, None] + 1, vals.size, 1)
    while (a < b).any():
        mid = (a + b) // 2
        ok = f(np.minimum(mid, hi[:, None])) >= vals[None, :]
        act = a < b
        b = np.where(ok & act, mid, b)
        a = np.where(~ok & act, mid + 1, a)
    return a


def fixed_epilogue(scale: np.ndarray, lo_acc: np.ndarray, hi_acc: np.ndarray, out_zp: int,
                   act_lo: int, act_hi: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(M [C] int64, R [C] int64, ok [C] bool): where ok, clamp(floor((acc * M + R) / 2^32)) is
    onnx_requantize(acc) for every acc in [lo_acc[c], hi_acc[c]] (see above)."""
    scale = np.asarray(scale, np.float32)
    lo, hi = np.asarray(lo_acc, np.int64), np.asarray(hi_acc, np.int64)
    c_n = scale.size
    ms, rs, good = np.zeros(c_n, np.int64), np.zeros(c_n, np.int64), np.zeros(c_n, bool)
    if not LINES or max(-int(lo.min()), int(hi.max())) >= 1 << 30:
        return ms, rs, good
    vals = np.arange(act_lo + 1, act_hi + 1, dtype=np.int64)
    t = _thresholds(lambda acc: onnx_requantize(acc, scale[:, None], out_zp, act_lo, act_hi,
                                                np.int64), lo, hi, vals)
    steps = np.arange(-FIXED_SPAN, FIXED_SPAN + 1, dtype=np.int64)
    for c in range(c_n):
        if not 0 < scale[c] < 0.25:
            continue
        m = np.round(np.float64(scale[c]) * 2.0 ** 32).astype(np.int64) + steps
        m = m[(m > 0) & (m < 1 << 30)][:, None]
        above, below = t[c] <= hi[c], t[c] - 1 >= lo[c]  # the sides inside the range
        r_min = np.where(above, vals * (1 << 32) - t[c] * m, -(1 << 62)).max(axis=1)
        r_max = np.where(below, vals * (1 << 32) - (t[c] - 1) * m - 1, 1 << 62).min(axis=1)
        ok = np.nonzero(r_min <= r_max)[0]
        if ok.size:
            best = ok[np.argmin(np.abs(m[ok, 0] - m[m.shape[0] // 2, 0]))]
            ms[c], rs[c], good[c] = m[best, 0], r_min[best], True
    return ms, rs, good
