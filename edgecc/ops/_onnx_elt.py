"""onnxruntime's QLinearAdd and QLinearMul (CPU provider, MLAS) for ADD / MUL nodes with
QLinear numerics, in numpy and as portable C.

Owns: their constants and element formulas, which edgecc checked against onnxruntime 1.32 on
every int8 input pair (65536) for 20 random scale/zero-point sets, with no difference:

- QLinearMul: r = float32(float32(s_a * s_b) / s_c);
  y = sat(round_half_even(float32((a - z_a) * (b - z_b)) * r) + z_c).
- QLinearAdd: r_a = float32(s_a / s_c), r_b = float32(s_b / s_c),
  k = float32(z_c - (r_a * z_a + r_b * z_b)); each operand's term is added to k with one
  rounding (a fused multiply-add in onnxruntime's AVX2 kernel): first the broadcast operand's
  (B when neither is broadcast), then the other's: t = fma(b, r_b, k), y = sat(rne(fma(a, r_a, t))).
  The C computes each fma in double: b * r_b is exact there (8 x 24 bits), and for scale ratios
  in MLAS's supported range [2^-14, 2^8) so is the sum, so one rounding to float remains.
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import Graph, Node
from edgecc.ops import Kernel, in_type, out_type
from edgecc.ops import _arith as ew
from edgecc.ops._conv_common import act_range
from edgecc.ops.quantize import c_float_literal

F32 = np.float32


def _scales(g: Graph, n: Node) -> tuple[F32, F32, F32]:
    return (ew.scale32(in_type(g, n, 0)), ew.scale32(in_type(g, n, 1)),
            ew.scale32(out_type(g, n)))


def add_params(g: Graph, n: Node) -> dict:
    sa, sb, sc = _scales(g, n)
    za, zb, zc = (ew.in_zp(g, n, 0), ew.in_zp(g, n, 1), ew.zp(out_type(g, n)))
    ra, rb = F32(sa / sc), F32(sb / sc)
    k = F32(F32(zc) - F32(F32(ra * F32(za)) + F32(rb * F32(zb))))
    a_first = in_type(g, n, 0).numel < out_type(g, n).numel <= in_type(g, n, 1).numel
    lo, hi = act_range(g, n)
    return dict(ra=ra, rb=rb, k=k, a_first=a_first, act_min=lo, act_max=hi)


def _fma(x: np.ndarray, r: F32, t) -> np.ndarray:
    return (x.astype(np.float64) * np.float64(r) + np.asarray(t, np.float64)).astype(F32)


def _finish(v: np.ndarray, lo: int, hi: int, dtype) -> np.ndarray:
    v = np.clip(v.astype(F32), -32768.0, 32767.0)
    return np.clip(np.rint(v).astype(np.int64), lo, hi).astype(dtype)


def reference_add(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    p = add_params(g, n)
    a, b = np.broadcast_arrays(*(np.asarray(x).astype(np.int64) for x in ins[:2]))
    if p["a_first"]:
        v = _fma(b, p["rb"], _fma(a, p["ra"], p["k"]))
    else:
        v = _fma(a, p["ra"], _fma(b, p["rb"], p["k"]))
    return [_finish(v, p["act_min"], p["act_max"], out_type(g, n).dtype.np)]


def mul_params(g: Graph, n: Node) -> dict:
    sa, sb, sc = _scales(g, n)
    lo, hi = act_range(g, n)
    return dict(r=F32(F32(sa * sb) / sc), za=ew.in_zp(g, n, 0), zb=ew.in_zp(g, n, 1),
                zc=ew.zp(out_type(g, n)), act_min=lo, act_max=hi)


def reference_mul(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    p = mul_params(g, n)
    a, b = (np.asarray(x).astype(np.int64) for x in ins[:2])
    prod = ((a - p["za"]) * (b - p["zb"])).astype(F32)
    v = np.rint(np.clip((prod * p["r"]).astype(F32), -32768.0, 32767.0)).astype(np.int64)
    return [np.clip(v + p["zc"], p["act_min"], p["act_max"]).astype(out_type(g, n).dtype.np)]


def _c_params(p: dict) -> dict:
    return {k: (c_float_literal(v) if isinstance(v, F32) else v) for k, v in p.items()}


def lower_add(g: Graph, n: Node, target) -> Kernel:
    k = ew.arith_kernel("add_onnx.c.j2", g, n, (out_type(g, n).dtype,),
                        lambda g_, n_: _c_params(add_params(g_, n_)))
    k.reason = k.reason or "onnxruntime's QLinearAdd arithmetic (float32, fused multiply-adds)"
    # the operand whose product goes into k first (add_params: a_first), then the other
    a = dict(x="a", at=k.derived["at"]["s0"], r=k.params["ra"])
    b = dict(x="b", at=k.derived["at"]["s1"], r=k.params["rb"])
    first, second = (a, b) if k.params["a_first"] else (b, a)
    k.derived.update(first=first, second=second)
    return k


def lower_mul(g: Graph, n: Node, target) -> Kernel:
    k = ew.arith_kernel("mul_onnx.c.j2", g, n, (out_type(g, n).dtype,),
                        lambda g_, n_: _c_params(mul_params(g_, n_)))
    k.reason = k.reason or "onnxruntime's QLinearMul arithmetic (float32 scale, half to even)"
    return k
