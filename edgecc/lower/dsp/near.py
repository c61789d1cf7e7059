"""Cortex-M DSP kernels of the QDQ groups onnxruntime's x86 defaults run in float32, in the x86
numerics (edgecc/ops/_ort_near.py; table entries marked Candidate.near).

Owns: the integer forms of an ADD of two int8 activations proven equal to a reference on all
65536 pairs (add_kernel: a * ka + b * kb, ec_dsp_add_lin2_s8, else TFLite's two-table kernel,
lut_form; edgecc/lower/dsp/eltwise_onnx.py's QLinearAdd shares them), the float-group ADD on
them, and
the one-row Gemm group as ec_dsp_fc_near_s8 (runtime_c/dsp/fc_near.h: SMLAD accumulators, the
near-tie test and path of runtime_c/edgecc_ort_near.h) for layers of FC_NEAR_MIN_MACS or more.
edgecc/lower/dsp/table.py lists its entries. The Conv group is the conv-6px entry's near variant
(edgecc/lower/dsp/conv.py, runtime_c/dsp/conv_2d_near.h and dsp/near.h).
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import Graph, Node
from edgecc.lower.dsp import eltwise as dsp  # the TFLite ADD's checks (add_applies)
from edgecc.lower.dsp.conv import DSP_WHY
from edgecc.lower.dsp.eltwise import DspAddGeom
from edgecc.lower.table import Refused
from edgecc.ops import _ort_near as on
from edgecc.ops import Kernel, const, in_type, out_type

F32 = np.float32

# A one-row Gemm group this small runs the portable near kernel: ec_dsp_fc_near_s8 and its
# near-tie path are about 1.6 KB of code (kws_ref_model_qdq's 64 x 12 classifier: 768 MACs,
# about 2,000 instructions either way)
FC_NEAR_MIN_MACS = 4096

# ADDs try the table-free linear form first (add_kernel; tests switch it off to reach the tables)
ADD_LINEAR = True

# The integer form of an ADD (lut_form): the kernel's SMMLAR by 2^30 is floor((s + 2) / 4).
_LUT_M = 1 << 30


def lut_form(va: np.ndarray, vt: np.ndarray, want: np.ndarray, act_min: int, act_max: int,
             lin: tuple[np.ndarray, float] | None = None,
             lin_b: tuple[np.ndarray, float, float] | None = None):
    """(m, N, e, ta, tb) for ec_dsp_add_lut_s8 whose result is want [256, 256] (clamped to
    [act_min, act_max]) for every pair of int8 inputs, or None. The value v = va[a] + vt[b]
    scaled by 2^F (F = e + 2) and rounded into two int32 tables, tb carrying 2^(F-1) - 2 for
    the rounding and O * 2^F so every sum s is >= 0; the kernel's ((N + floor((s + 2) / 4)) >> e)
    with N = -O * 2^e is then floor(v + 1/2) wherever the tables' rounding leaves v's side of a
    half integer alone; checked on all 65536 pairs. lin = (xs, r_a) with va = xs * r_a: ta is
    xs * rint(r_a * 2^F), a multiplier instead of a table, under the same check. lin_b = (xs,
    r_b, c) with vt = xs * r_b + c: tb is xs * rint(r_b * 2^F) + its constant (with lin:
    ec_dsp_add_lin2_s8, no table at all; ka = ta[129], kb = tb[129] - tb[128], kc = tb[128])."""
    lo, hi = float(va.min() + vt.min()), float(va.max() + vt.max())
    off = int(np.ceil(-lo)) + 2 if lo < 0 else 2
    for e in range(20, -1, -1):
        f = e + 2
        if (hi + off + 2) * 2.0 ** f >= 2.0 ** 31:
            continue
        ta = (lin[0].astype(np.int64) * int(np.rint(lin[1] * 2.0 ** f)) if lin is not None
              else np.rint(va * 2.0 ** f).astype(np.int64))
        tv = (lin_b[0].astype(np.int64) * int(np.rint(lin_b[1] * 2.0 ** f))
              + int(np.rint(lin_b[2] * 2.0 ** f)) if lin_b is not None
              else np.rint(vt * 2.0 ** f).astype(np.int64))
        tb = tv + (1 << (f - 1)) - 2 + (off << f)
        sums = ta[:, None] + tb[None, :]
        if sums.min() < 0 or sums.max() >= 1 << 31:
            continue
        n_ = -(off << e)
        got = ((n_ + ((sums * _LUT_M + (1 << 31)) >> 32)) >> e)
        if (np.clip(got, act_min, act_max) == want).all():
            return _LUT_M, n_, e, ta.astype(np.int32), tb.astype(np.int32)
        return None  # the finest scale that fits failed: a coarser one rounds no better
    return None


def add_kernel(numel: int, act: tuple[int, int], va, vt, want, lin2, variant: str,
               what: str) -> Kernel | None:
    """The DSP ADD of two activations whose result is want on every pair: ec_dsp_add_lin2_s8
    (a * ka + b * kb + kc, no table) where lin2 = (r_a, r_b, c) with va ~ xs * r_a and vt ~ xs *
    r_b + c is proven, else the table kernel ec_dsp_add_lut_s8; None when neither is."""
    xs = np.arange(-128, 128, dtype=np.float64)
    if lin2 is not None and ADD_LINEAR:
        ra, rb, c = lin2
        lut = lut_form(va, vt, want, *act, lin=(xs, ra), lin_b=(xs, rb, c))
        if lut is not None:
            m, n_, e, ta, tb = lut
            k = np.array([ta[129], tb[129] - tb[128], tb[128]], np.int32)
            return Kernel("dsp/add_lin2.c.j2", params=dict(geom=DspAddGeom(numel, m, n_, e, *act)),
                          consts=dict(k=k), variant=variant + "-lin",
                          reason=f"Cortex-M DSP: {what} as a * {int(k[0])} + b * {int(k[1])} and "
                                 "one SMMLAR, proven equal on all 65536 pairs")
    lut = lut_form(va, vt, want, *act)
    if lut is None:
        return None
    m, n_, e, ta, tb = lut
    return Kernel("dsp/add_lut.c.j2", params=dict(geom=DspAddGeom(numel, m, n_, e, *act)),
                  consts=dict(ta=ta, tb=tb), variant=variant + "-lut",
                  reason=f"Cortex-M DSP: {what} as two 256-entry integer tables and one SMMLAR, "
                         "proven equal on all 65536 pairs")


def add_ortf_applies(g: Graph, n: Node, target) -> str | None:
    """An ADD group onnxruntime runs in float32 (edgecc/ops/_ort_float.py), two same-shape
    int8 activations."""
    if not n.numerics.float_group:
        return "not a float group"
    return dsp.add_applies(g, n, target)


def lower_add_ortf(g: Graph, n: Node, target) -> Kernel:
    """TFLite's table kernel ec_dsp_add_lut_s8 with tables proven to give onnxruntime's float32
    ADD (float32(a_f + b_f) / y_scale, half to even, + y_zp) on all 65536 pairs, or Refused."""
    from edgecc.ops._conv_common import act_range
    from edgecc.ops._ort_float import _deq, _finish
    da, db = _deq(in_type(g, n, 0)), _deq(in_type(g, n, 1))
    want = _finish(g, n, (da[:, None] + db[None, :]).astype(np.float32)).astype(np.int64)
    y = out_type(g, n)
    ys = np.float64(np.float32(y.q.scale[0]))
    lo, hi = act_range(g, n)
    ra = np.float64(F32(in_type(g, n, 0).q.scale[0])) / ys
    rb = np.float64(F32(in_type(g, n, 1).q.scale[0])) / ys
    za, zb = int(in_type(g, n, 0).q.zero_point[0]), int(in_type(g, n, 1).q.zero_point[0])
    k = add_kernel(in_type(g, n, 0).numel, (lo, hi), da.astype(np.float64) / ys,
                   db.astype(np.float64) / ys + int(y.q.zero_point[0]), want,
                   (ra, rb, int(y.q.zero_point[0]) - za * ra - zb * rb), "dsp-add-ortf",
                   "onnxruntime's float32 ADD group")
    if k is None:
        raise Refused("no integer form equals onnxruntime's float32 ADD on every pair")
    return k


def fc_near_applies(g: Graph, n: Node, target) -> str | None:
    """A one-row Gemm group onnxruntime runs in float32, units and depth multiples of 4."""
    if not n.numerics.float_group:
        return "not a float group"
    from edgecc.ops._ort_near import exact_sum_fits
    if const(g, n, 1).shape[0] % 4 or const(g, n, 1).shape[1] % 4:
        return "units or depth not a multiple of 4: portable kernel"
    if not exact_sum_fits(g, n):
        return "depth too large for the exact bound's uint32: portable kernel"
    if const(g, n, 1).size < FC_NEAR_MIN_MACS:
        return (f"under {FC_NEAR_MIN_MACS} MACs: the portable kernel (its DSP twin's code would "
                "cost more flash than its instructions save)")
    return None


def lower_fc_near(g: Graph, n: Node, target) -> Kernel:
    w = const(g, n, 1)
    return Kernel("dsp/fc_near.c.j2", params=dict(near=on.fc_geometry(g, n)),
                  consts=dict(w=w.astype(np.int8), **on.fc_constants(g, n)),
                  variant="dsp-fc-near",
                  reason=f"Cortex-M DSP: 4 units x {w.shape[1]} taps of SMLAD; "
                         + DSP_WHY)

