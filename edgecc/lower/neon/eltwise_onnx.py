"""NEON lowering of ONNX-numerics ADD and MUL (onnxruntime's QLinearAdd: ec_neon_add_fma_s8;
QLinearMul: ec_neon_mul_rows_s8).

Owns: when those kernels apply; their row layout (each operand the whole tensor, or one row of
the last dimension repeated, e.g. a per-channel scale or bias of an NHWC tensor; a constant
operand is emitted as an array); MUL is the portable kernel's arithmetic exactly
(runtime_c/neon/mul.h); for ADD the compile-time proof that its float32 fused multiply-adds
(FMLA: each rounds the exact x1 * r1 + k, then x2 * r2 + t, once to float32; x1 the broadcast
operand, else b) give exactly what the portable kernel computes (templates/c/add_onnx.c.j2: each
sum in double, then rounded to float). The two agree wherever the double sum is exact, which the
proof checks for all 256 values of x1 and then all 65536 pairs (x2, t(x1)) with Knuth's TwoSum
(s = p + t; the error p + t - s is computed exactly, and must be zero): p = x * r is exact in
double (8 x 24 bits), so then both round the same real number once. The formulas and constants
are edgecc/ops/_onnx_elt.py's.
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import DType, Graph, Node
from edgecc.lower.layout import record
from edgecc.lower.table import Refused
from edgecc.ops import Kernel, in_type, out_type
from edgecc.ops._onnx_elt import add_params, mul_params
from edgecc.ops.quantize import c_float_literal

# runtime_c/neon/add.h's struct, field for field
AddFmaGeom = record("ec_neon_add_fma_geom", "outer inner a_step b_step ra rb k a_first lo hi")
MulRowsGeom = record("ec_neon_mul_rows_geom", "outer inner a_step b_step za zb zc lo hi r")

_X = np.arange(-128, 128, dtype=np.float64)


def _two_sum_exact(p: np.ndarray, t: np.ndarray) -> bool:
    """Whether every double sum p + t is exact (TwoSum's error term is zero)."""
    s = p + t
    bv = s - p
    return bool(np.all((p - (s - bv)) + (t - bv) == 0))


def fma_matches_double(ra: np.float32, rb: np.float32, k: np.float32) -> bool:
    """Whether fma32(a, ra, fma32(b, rb, k)) equals the portable float(a*ra + float(b*rb + k))
    (each sum in double) on every int8 pair: both sums are exact in double. (b is the operand
    whose term goes first.)"""
    pb = _X * np.float64(rb)
    if not _two_sum_exact(pb, np.full_like(pb, np.float64(k))):
        return False
    t = np.unique((pb + np.float64(k)).astype(np.float32)).astype(np.float64)
    pa = _X * np.float64(ra)
    return _two_sum_exact(pa[:, None], t[None, :])


def add_onnx_applies(g: Graph, n: Node, target) -> str | None:
    """Why ec_neon_add_fma_s8 cannot run n (None when it can)."""
    return _elt_applies(g, n, "the add-exact entry")


def lower_add_onnx(g: Graph, n: Node, target) -> Kernel:
    """int8 ADD with onnxruntime's arithmetic, 16 per step, row by row."""
    p = add_params(g, n)
    first, second = ("ra", "rb") if p["a_first"] else ("rb", "ra")
    if not fma_matches_double(p[second], p[first], p["k"]):
        raise Refused("a double sum of the portable kernel is inexact (fused float32 "
                      "multiply-adds could round differently): portable kernel")
    rows = rows_of(g, n)
    geom = AddFmaGeom(*rows, *(c_float_literal(p[f]) for f in ("ra", "rb", "k")),
                      int(p["a_first"]), p["act_min"], p["act_max"])
    return Kernel("neon/add_fma.c.j2", params=dict(geom=geom), variant="neon-add-onnx",
                  reason="NEON: onnxruntime's QLinearAdd, two FMLA per 4 lanes, proven equal to "
                         f"the portable double sums on every input pair{_rows_text(rows)}")


def _elt_applies(g: Graph, n: Node, tflite: str) -> str | None:
    if not n.numerics.qlinear:
        return f"TFLite numerics: {tflite}"
    if out_type(g, n).dtype != DType.INT8:
        return "not int8: portable kernel"
    if rows_of(g, n) is None:
        return "broadcast other than one row of the last dimension: portable kernel"
    return None


def _rows_text(rows: tuple[int, int, int, int]) -> str:
    return f"; {rows[0]} rows of {rows[1]}" + (", one operand a repeated row"
                                                if 0 in rows[2:] else "")


def rows_of(g: Graph, n: Node) -> tuple[int, int, int, int] | None:
    """(outer, inner, a_step, b_step) of an ADD / MUL whose operands each walk the whole output
    or repeat one row of its last dimension (at least one walks it all), else None."""
    out = out_type(g, n).shape
    total = out_type(g, n).numel
    if not out or total == 0:
        return None
    kinds = []
    for i in (0, 1):
        s = tuple(in_type(g, n, i).shape)
        s = (1,) * (len(out) - len(s)) + s
        if s == tuple(out):
            kinds.append("full")
        elif all(d == 1 for d in s[:-1]) and s[-1] == out[-1]:
            kinds.append("row")
        else:
            return None
    if "full" not in kinds:
        return None
    inner = out[-1] if "row" in kinds else total
    return (total // inner, inner, *(inner if k == "full" else 0 for k in kinds))


def mul_onnx_applies(g: Graph, n: Node, target) -> str | None:
    """Why ec_neon_mul_rows_s8 cannot run n (None when it can)."""
    return _elt_applies(g, n, "portable kernel")


def lower_mul_onnx(g: Graph, n: Node, target) -> Kernel:
    """int8 MUL with onnxruntime's arithmetic, 16 per step, row by row."""
    p = mul_params(g, n)
    rows = rows_of(g, n)
    geom = MulRowsGeom(*rows, p["za"], p["zb"], p["zc"], p["act_min"], p["act_max"],
                       c_float_literal(p["r"]))
    return Kernel("neon/mul_rows.c.j2", params=dict(geom=geom), variant="neon-mul-onnx",
                  reason=f"NEON: onnxruntime's QLinearMul, 16 per step{_rows_text(rows)}")
