"""Cortex-M DSP ADD and MUL with ONNX numerics (onnxruntime's QLinearAdd / QLinearMul,
edgecc/ops/_onnx_elt.py).

Owns: when the DSP table's ONNX ADD and MUL entries apply and their constants (edgecc/lower/
dsp/table.py lists them before TFLite's add-lut entry). Two same-shape activations: an
integer form proven equal on all 65536 int8 pairs (edgecc/lower/dsp/near.py add_kernel: two
multipliers, else TFLite's table kernel ec_dsp_add_lut_s8), else ec_dsp_add_onnx_s8 (a table and
one fused multiply-add). An activation plus
a constant row broadcast along all but the last dimension (a folded BatchNorm's shift, e.g.
ox_dscnn): ec_dsp_add_lin_row_s8 (a's term a * ka, no table) or ec_dsp_add_lut_row_s8 (a
256-entry table), the same integer form proven on every (value, channel) pair.
MUL of two activations, of one shape or the second a row of the channels (a squeeze-and-
excitation scale): ec_dsp_mul_onnx_s8, the portable kernel's float32 arithmetic with VCVTR.
The C is runtime_c/dsp/{add,mul}.h, the calls templates/dsp/{add_*,mul_onnx_row}.c.j2.

Why: onnxruntime's element formula, run as the portable kernel does, costs a double-precision
multiply-add per element, which a Cortex-M4 emulates in software (~190 instructions).
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import DType, Graph, Node
from edgecc.lower.dsp import eltwise as dsp  # the TFLite ADD's checks (add_applies)
from edgecc.lower.dsp import near as dsp_near
from edgecc.lower.dsp.eltwise import DspAddGeom
from edgecc.lower.dsp.near import lut_form
from edgecc.lower.table import Refused
from edgecc.ops import Kernel, const, in_type, out_type

XS = np.arange(-128, 128, dtype=np.float64)  # the int8 values, table order


def add_onnx_applies(g: Graph, n: Node, target) -> str | None:
    """ONNX numerics (TFLite's ADD takes the add-lut entry), int8, two same-shape activations."""
    if not n.numerics.qlinear:
        return "TFLite numerics: the add-lut entry"
    return dsp.add_applies(g, n, target)


def _onnx_add_want(p: dict, prod: np.ndarray, t: np.ndarray) -> np.ndarray:
    """The portable kernel's QLinearAdd result for every pair: the double sum a * r_a + t(b)
    (exact, proven by the caller) rounded once to float32, half to even, clamped."""
    v32 = (prod + t).astype(np.float32)
    return np.clip(np.rint(np.clip(v32, -32768.0, 32767.0)),
                   p["act_min"], p["act_max"]).astype(np.int64)


def _onnx_add_lut(p: dict, prod: np.ndarray, t: np.ndarray, xs: np.ndarray, linear: bool = False):
    """(m, N, e, ta, tb) for ec_dsp_add_lut_s8 (TFLite's table ADD) that give onnxruntime's
    QLinearAdd for all 65536 pairs, or None. The value v = a * r_a + t(b) (exact in double,
    proven by the caller): lut_form's tables, checked exhaustively against the portable
    kernel's result (_onnx_add_want): a near-tie refuses. linear: ta is
    a * rint(r_a * 2^F) instead of rint(a * r_a * 2^F) (no table: ec_dsp_add_lin_row_s8), under
    the same proof; ta[129] (a = 1) is then the multiplier."""
    want = _onnx_add_want(p, prod, t)
    ra = np.float64(p["ra"])
    return lut_form(xs * ra, t[0], want, p["act_min"], p["act_max"],
                    lin=(xs, ra) if linear else None)


def lower_add_onnx(g: Graph, n: Node, target) -> Kernel:
    """onnxruntime's QLinearAdd: t(b) = float32(b * r_b + k) for b's 256 values, as the portable
    kernel computes it; refused unless its double sum a * r_a + t(b) is exact for all 65536
    pairs. Then, where an integer form is proven equal on every pair (dsp_near.add_kernel), two
    multipliers or TFLite's table kernel ec_dsp_add_lut_s8; else ec_dsp_add_onnx_s8, whose one
    fused multiply-add rounds as the portable kernel does."""
    from edgecc.ops._onnx_elt import add_params
    p = add_params(g, n)
    if p["a_first"]:  # same shapes: b's term first (edgecc/ops/_onnx_elt.py)
        raise Refused("broadcast order: portable kernel")
    xs = XS
    tb = (xs * np.float64(p["rb"]) + np.float64(p["k"])).astype(np.float32)
    prod = xs[:, None] * np.float64(p["ra"])            # exact: 8 x 24 bits
    t = tb.astype(np.float64)[None, :]
    s = prod + t
    bb = s - prod
    if ((prod - (s - bb)) + (t - bb) != 0).any():     # TwoSum: the double sum rounded somewhere
        raise Refused("the double sum is not exact for every pair: portable kernel")
    numel, act = in_type(g, n, 0).numel, (int(p["act_min"]), int(p["act_max"]))
    k = dsp_near.add_kernel(numel, act, xs * np.float64(p["ra"]), t[0], _onnx_add_want(p, prod, t),
                            (np.float64(p["ra"]), np.float64(p["rb"]), np.float64(p["k"])),
                            "dsp-add-onnx", "onnxruntime's QLinearAdd")
    if k is not None:
        return k
    geom = DspAddGeom(numel, 0, 0, 0, *act)
    return Kernel("dsp/add_onnx_fma.c.j2", params=dict(geom=geom),
                  consts=dict(tb=tb, ra=np.array([p["ra"]], np.float32)), variant="dsp-add-onnx",
                  reason="Cortex-M DSP: onnxruntime's QLinearAdd, one operand tabulated, one "
                         "fused multiply-add per element")


def add_row_applies(g: Graph, n: Node, target) -> str | None:
    """ONNX numerics, int8; input 0 an activation of the output's shape, input 1 a constant
    row: every dimension 1 but the last, which is the output's channels."""
    if not n.numerics.qlinear:
        return "TFLite numerics: the add-lut entry"
    y = out_type(g, n)
    if y.dtype != DType.INT8:
        return "int16: portable kernel"
    b = in_type(g, n, 1)
    if const(g, n, 0) is not None or in_type(g, n, 0).shape != y.shape or const(g, n, 1) is None \
            or b.numel != y.shape[-1] or b.shape[-1:] != y.shape[-1:]:
        return "not an activation plus a constant row of its channels: portable kernel"
    return None


# The row ADD tries a's term linear first (ec_dsp_add_lin_row_s8, no table); tests turn it off to
# reach the table form.
ROW_LINEAR = True


def lower_add_row(g: Graph, n: Node, target) -> Kernel:
    """ec_dsp_add_lin_row_s8 / ec_dsp_add_lut_row_s8: t(b_c) = float32(b_c * r_b + k) per
    channel, as the portable kernel computes it; a * r_a + t(b_c) in integers (_onnx_add_lut
    over every int8 a and every channel c: a's term linear where that is proven, else its
    table), one SMMLAR per element. Refused where neither form is proven."""
    from edgecc.ops._onnx_elt import add_params
    p = add_params(g, n)
    if p["a_first"]:
        raise Refused("broadcast order: portable kernel")
    b = const(g, n, 1).astype(np.float64).ravel()
    t = (b * np.float64(p["rb"]) + np.float64(p["k"])).astype(np.float32).astype(np.float64)
    y = out_type(g, n)
    prod = XS[:, None] * np.float64(p["ra"])
    lut = _onnx_add_lut(p, prod, t[None, :], XS, linear=True) if ROW_LINEAR else None
    if lut is not None:  # a * ka: no 256-entry table (1 KB of flash) for a's term
        m, n_, e, ta, tr = lut
        geom = DspAddGeom(y.numel, m, n_, e, int(p["act_min"]), int(p["act_max"]))
        return Kernel("dsp/add_lin_row.c.j2", params=dict(geom=geom, c=y.shape[-1],
                                                          ka=int(ta[129])),
                      consts=dict(tr=tr), variant="dsp-add-onnx-row-lin",
                      reason="Cortex-M DSP: onnxruntime's QLinearAdd of a constant row, one "
                             "multiply and one table entry per channel, one SMMLAR, proven equal "
                             "on every (value, channel) pair")
    lut = _onnx_add_lut(p, prod, t[None, :], XS)
    if lut is None:
        raise Refused("no integer form proven equal on every (value, channel) pair: portable kernel")
    m, n_, e, ta, tr = lut
    geom = DspAddGeom(y.numel, m, n_, e, int(p["act_min"]), int(p["act_max"]))
    return Kernel("dsp/add_lut_row.c.j2", params=dict(geom=geom, c=y.shape[-1]),
                  consts=dict(ta=ta, tr=tr), variant="dsp-add-onnx-row",
                  reason="Cortex-M DSP: onnxruntime's QLinearAdd of a constant row, a 256-entry "
                         "integer table and one per channel, one SMMLAR, proven equal on every "
                         "(value, channel) pair")


def mul_onnx_applies(g: Graph, n: Node, target) -> str | None:
    """ONNX numerics, int8, two activations: of the output's shape, or the second one row of
    the output's channels (every other dimension 1)."""
    if not n.numerics.qlinear:
        return "TFLite numerics: portable kernel"
    y = out_type(g, n)
    a, b = in_type(g, n, 0), in_type(g, n, 1)
    if y.dtype != DType.INT8 or a.dtype != DType.INT8 or b.dtype != DType.INT8:
        return "int16: portable kernel"
    if a.shape != y.shape or not (b.shape == y.shape or (b.numel == y.shape[-1]
                                                         and b.shape[-1:] == y.shape[-1:])):
        return "broadcast other than one row of the last dimension: portable kernel"
    return None


def lower_mul_onnx(g: Graph, n: Node, target) -> Kernel:
    """ec_dsp_mul_onnx_s8: the portable kernel's arithmetic (edgecc/ops/_onnx_elt.py
    mul_params) per element, with VCVTR for its rounding; b of a's shape (c = 0) or one row."""
    from edgecc.ops._onnx_elt import mul_params
    p = mul_params(g, n)
    y, b = out_type(g, n), in_type(g, n, 1)
    c = 0 if b.shape == y.shape else y.shape[-1]
    return Kernel("dsp/mul_onnx_row.c.j2",
                  params=dict(n=y.numel, c=c, za=int(p["za"]), zb=int(p["zb"]), zc=int(p["zc"]),
                              lo=int(p["act_min"]), hi=int(p["act_max"])),
                  consts=dict(r=np.array([p["r"]], np.float32)), variant="dsp-mul-onnx",
                  derived=dict(b_shape=f"one row of {c} channels" if c else "of a's shape"),
                  reason="Cortex-M DSP: onnxruntime's QLinearMul, the integer product times "
                         "one float32 scale, VCVTR" + (f", b one row of {c}" if c else ""))

