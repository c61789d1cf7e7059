"""What the x86 and NEON vector kernels of every op share: folded biases, requantization arrays.

Owns: the int8 test, the folded biases and the per-channel requantization arrays of the
convolution, depthwise and fully connected kernels (edgecc/lower/vec/), and how a vector Kernel
names its template.

Input offset. The kernels' accumulators start from the bias with the input offset folded in:
bias_x = bias - input_zp * sum(w) for dot products on x itself (NEON; AVX2 without VNNI), and
for AVX2's VNNI path, which runs on u = x + 128 (VPDPBUSD is u8 x s8), bias_u = bias -
(input_zp + 128) * sum(w). Both are taken modulo 2^32: the kernels add in int32 with
wrap-around, which gives TFLite's exact accumulator whenever TFLite's own int32 accumulator does
not overflow.

Requantization: TFLite's MultiplyByQuantizedMultiplier exactly. NEON's SQRDMULH and SRSHL are
its arithmetic; x86 uses edgecc/numerics/fastrq.py's proven fast form when the proof holds, else the
two roundings step by step (see runtime_c/x86/common.h).
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import DType, Graph, Node
from edgecc.numerics import fastrq
from edgecc.lower.layout import int32_array, round_up
from edgecc.ops import Kernel, const, in_type, out_type
from edgecc.ops._conv_common import act_range
from edgecc.numerics.fixed_point import INT32_MIN

LABEL = {"x86": "x86", "neon": "NEON"}  # how a kernel's reason names its ISA

# Per-channel arrays (bias, requantization) are padded to a multiple of 16 channels: a kernel's
# 16-channel code may then be specialised by the C compiler for any layer without reading
# (even provably dead) past an array's end, which gcc -Warray-bounds would report.
ARRAY_PAD = 16


def requant_arrays(isa: str, mult: np.ndarray, shift: np.ndarray, ocp: int, rows: np.ndarray,
                   bias: np.ndarray, in_zp: int, out_zp: int, act: tuple[int, int]
                   ) -> tuple[dict[str, np.ndarray] | None, dict, str]:
    """The requantization constants of a layer padded to ocp channels: (consts, params, "") or
    (None, {}, why not).

    The fast path (runtime_c/x86/common.h, ec_x86_rq) is used when edgecc/numerics/fastrq.py's
    fast_requant proves it exact from the exact accumulator range of every channel (rows: the
    weights [channels, taps] in TFLite's (x - input_zp) domain; bias unfolded); otherwise the
    kernels run TFLite's two roundings as they are (mult, left, right).
    ONNX numerics (float32 `mult`, edgecc/numerics/qlinear.py): the scales alone, padded (`scale`),
    and params onnx=1."""
    if np.asarray(mult).dtype.kind == "f":
        scale = np.zeros(round_up(ocp, ARRAY_PAD), np.float32)
        scale[:len(mult)] = mult
        return dict(scale=scale), dict(fast=0, L=0, onnx=1), ""
    mult, shift = np.asarray(mult, np.int64), np.asarray(shift, np.int64)
    n = len(mult)
    ocp = round_up(ocp, ARRAY_PAD)

    def pad(a, dtype=np.int32):
        out = np.zeros(ocp, dtype)
        out[:n] = a
        return out
    # NEON's SQRDMULH + SRSHL are TFLite's arithmetic itself: no fast path needed there
    fr = None
    if isa == "x86":
        lo, hi = fastrq.acc_range(rows, bias, in_zp)
        fr, _ = fastrq.fast_requant(lo, hi, mult, shift, out_zp, *act)
    if fr is not None:
        c64 = pad(np.int64(1 << 31) + fr.n.astype(np.int64) * (1 << 32), np.int64)
        # per block of 8: even channels, then odd (the order of VPMULDQ's products)
        c64 = c64.reshape(-1, 4, 2).transpose(0, 2, 1).ravel()
        return (dict(mult=pad(fr.m), right=pad(fr.e), c64=c64),
                dict(fast=1, L=fr.L), "")
    if (mult <= INT32_MIN).any():
        return None, {}, "a multiplier of INT32_MIN (needs the saturating SRDHM): portable kernel"
    if (-shift > 31).any():
        return None, {}, "right shift above 31: portable kernel"
    return (dict(mult=pad(mult), left=pad(np.maximum(shift, 0)), right=pad(np.maximum(-shift, 0))),
            dict(fast=0, L=0), "")


def bias_of(g: Graph, n: Node, channels: int) -> np.ndarray:
    b = const(g, n, 2) if len(n.inputs) > 2 else None
    return np.zeros(channels, np.int64) if b is None else b.astype(np.int64).ravel()


def rq_params(g: Graph, n: Node) -> dict:
    lo, hi = act_range(g, n)
    return dict(out_zp=int(out_type(g, n).q.zero_point[0]), act_min=lo, act_max=hi)


def folded_biases(isa: str, bias: np.ndarray, rows: np.ndarray, in_zp: int, ocp: int
                  ) -> dict[str, np.ndarray]:
    """The bias with the input offset folded in, padded to ocp: bias_x for dot products on x
    itself (bias - input_zp * sum(w)); AVX2 also bias_u for its VNNI path on u = x + 128."""
    out = {}
    ocp = round_up(ocp, ARRAY_PAD)
    for key, off in (("bias_x", 0), ("bias_u", 128)) if isa == "x86" else (("bias_x", 0),):
        b = np.zeros(ocp, np.int64)
        b[:len(bias)] = np.asarray(bias, np.int64) - (in_zp + off) * rows.sum(axis=1)
        out[key] = int32_array(b)
    return out


def int8_layer(g: Graph, n: Node) -> str:
    """Why this layer cannot take the int8 kernels ("" when it can)."""
    if not (in_type(g, n).dtype == DType.INT8 and out_type(g, n).dtype == DType.INT8
            and in_type(g, n, 1).dtype == DType.INT8):
        return "not int8 x int8 -> int8: portable kernel"
    return ""


def out_act(g: Graph, n: Node) -> tuple[int, tuple[int, int]]:
    return int(out_type(g, n).q.zero_point[0]), act_range(g, n)


def vec_kernel(isa: str, op: str, params: dict, consts: dict, scratch: int, variant: str,
               reason: str, c_variant: str) -> Kernel:
    """templates/<isa>/<op>_<c_variant>.c.j2 calls ec_<isa>_<op>_<c_variant>_s8."""
    return Kernel(f"{isa}/{op}_{c_variant}.c.j2", params=params, consts=consts, scratch=scratch,
                  variant=f"{isa}-{variant}", reason=reason)
