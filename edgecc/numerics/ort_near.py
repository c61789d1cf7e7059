"""The near-tie bound of onnxruntime's float32 groups: when the exact integer result is theirs.

Owns: the rigorous bound (below) an integer kernel uses to decide that an output's float32
estimate lies so near a rounding boundary that onnxruntime's float32 order (ort_order.py) could
cross it, and its test in numpy (`near`) as the C evaluates it. The per-layer constants and the
kernels that apply it are edgecc/ops/_ort_near.py (portable) and edgecc/lower/dsp_conv.py /
dsp_near.py (Cortex-M DSP); runtime_c/edgecc_ort_near.h holds the C.

The bound. Let u = 2^-24 (float32's unit roundoff), x_k = (q_k - zx) and w_k the int8 values of
one output, sx, sw, ys the input, weight and output scales, b the bias (scale sb). The exact value
in output steps is V = (sx * sw * acc + sb * b) / ys with acc = sum x_k w_k. onnxruntime computes
r = fl(fl(S + fl(sb * b)) / ys), S its float32 sum of the products fl(x_k sx) * fl(w_k sw), then
rounds r half to even. Every product term carries 2 input roundings; in any summation order where
each term passes through at most m roundings (a chain of fused multiply-adds: one per tap of its
K slice; then one per later slice addition; MLAS's one-row Gemm: one product rounding, at most 3
additions in its group of 4, one per later group), |S - sum x_k w_k sx sw| <= gamma_{m+2} T with
T = sx * sw * sum |x_k w_k| and gamma_n = n u / (1 - n u). The bias rounding, the bias addition and
the division add u (|sb b| + T) / ys each, to first order. The kernel's own estimate
e = fl(fl(float(acc) * fl(sx sw / ys)) + fl(sb b / ys)) errs by at most 4 u (T + |sb b|) / ys, and
its distance to the nearest boundary, 0.5 - |e - round(e)|, is computed exactly (Sterbenz) up to
one rounding of 0.5 - delta (<= 2^-25). So with

    delta = (m + 12) * u * 1.02 * (T' + |sb b|) / ys + 2^-21,   T' >= T,

an output whose estimate lies farther than delta from n + 0.5 rounds to the same integer in
onnxruntime's order as its exact value (the 2% covers gamma's 1 / (1 - n u) for n u < 1%, the
second-order terms and the float32 evaluation of delta itself), so the integer result is
onnxruntime's; one within delta is recomputed in onnxruntime's order. T' is cheap and rigorous:
max_k |w_k| (per output channel) times the sum of |q - zx| over the pixel's receptive field (the
one-row Gemm: over the whole input row), computed once per pixel.
"""
from __future__ import annotations

import numpy as np

F32 = np.float32
U = 2.0 ** -24
MARGIN = 1.02
ABS_SLACK = 2.0 ** -21


def roundings(op: str, k: int, slices: int) -> int:
    """m: the most float32 roundings a product passes through in onnxruntime's sum of k products
    (CONV_2D: `slices` fma chains; FULLY_CONNECTED: MLAS's one-row groups of 4)."""
    return k + slices if op == "CONV_2D" else 1 + 3 + -(-k // 4)


def coefficient(m: int) -> float:
    """delta per unit of (T' + |sb b|) / ys: (m + 12) u, with the margin."""
    return (m + 12) * U * MARGIN


def near(acc: np.ndarray, tbound: np.ndarray, k: dict) -> np.ndarray:
    """The kernel's test in numpy (float32 as the C evaluates it): which outputs it recomputes.
    acc, tbound: [..., channels] int; k: edgecc/ops/_ort_near.py channel_constants."""
    e = (np.asarray(acc).astype(F32) * k["sc"]).astype(F32)
    e = np.clip((e + k["bb"]).astype(F32), F32(-32768), F32(32767))
    f = (e - np.rint(e).astype(F32)).astype(F32)
    delta = ((np.asarray(tbound).astype(F32) * k["kt"]).astype(F32) + k["kb"]).astype(F32)
    return np.abs(f) >= (F32(0.5) - delta).astype(F32)
