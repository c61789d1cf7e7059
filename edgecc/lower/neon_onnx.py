"""NEON lowering of ONNX-numerics ADD (onnxruntime's QLinearAdd): ec_neon_add_fma_s8.

Owns: when the kernel applies, and the compile-time proof that its float32 fused multiply-adds
(FMLA: each rounds the exact b * r_b + k, then a * r_a + t, once to float32) give exactly what the
portable kernel computes (templates/c/add_onnx.c.j2: each sum in double, then rounded to float).
The two agree wherever the double sum is exact, which the proof checks for all 256 values of b
and then all 65536 pairs (a, t(b)) with Knuth's TwoSum (s = p + t; the error p + t - s is computed
exactly, and must be zero): p = x * r is exact in double (8 x 24 bits), so then both round the
same real number once. The formulas and constants are edgecc/ops/_onnx_elt.py's.
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import Graph, Node
from edgecc.lower.dsp import add_applies
from edgecc.lower.geom import record
from edgecc.lower.table import Refused
from edgecc.ops import Kernel, in_type
from edgecc.ops._onnx_elt import add_params
from edgecc.ops._onnx_rq import is_onnx
from edgecc.ops.quantize import c_float_literal

# runtime_c/neon/add.h's struct, field for field
AddFmaGeom = record("ec_neon_add_fma_geom", "n ra rb k lo hi")

_X = np.arange(-128, 128, dtype=np.float64)


def _two_sum_exact(p: np.ndarray, t: np.ndarray) -> bool:
    """Whether every double sum p + t is exact (TwoSum's error term is zero)."""
    s = p + t
    bv = s - p
    return bool(np.all((p - (s - bv)) + (t - bv) == 0))


def fma_matches_double(ra: np.float32, rb: np.float32, k: np.float32) -> bool:
    """Whether fma32(a, ra, fma32(b, rb, k)) equals the portable float(a*ra + float(b*rb + k))
    (each sum in double) on every int8 pair: both sums are exact in double."""
    pb = _X * np.float64(rb)
    if not _two_sum_exact(pb, np.full_like(pb, np.float64(k))):
        return False
    t = np.unique((pb + np.float64(k)).astype(np.float32)).astype(np.float64)
    pa = _X * np.float64(ra)
    return _two_sum_exact(pa[:, None], t[None, :])


def add_onnx_applies(g: Graph, n: Node, target) -> str | None:
    """Why ec_neon_add_fma_s8 cannot run n (None when it can)."""
    if not is_onnx(n):
        return "TFLite numerics: the add-exact entry"
    return add_applies(g, n, target)  # int8, two same-shape activations


def lower_add_onnx(g: Graph, n: Node, target) -> Kernel:
    """int8 ADD of two same-shape activations with onnxruntime's arithmetic, 16 per step."""
    p = add_params(g, n)
    if p["a_first"] or not fma_matches_double(p["ra"], p["rb"], p["k"]):
        raise Refused("a double sum of the portable kernel is inexact (fused float32 "
                      "multiply-adds could round differently): portable kernel")
    geom = AddFmaGeom(in_type(g, n, 0).numel, *(c_float_literal(p[f]) for f in ("ra", "rb", "k")),
                       p["act_min"], p["act_max"])
    return Kernel("neon/add_fma.c.j2", params=dict(geom=geom), variant="neon-add-onnx",
                  reason="NEON: onnxruntime's QLinearAdd, two FMLA per 4 lanes, proven equal to "
                         "the portable double sums on every input pair")
