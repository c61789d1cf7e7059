"""The Cortex-M DSP ADD (runtime_c/dsp/add.h, templates/dsp/add_lut.c.j2).

Owns: when TFLite's int8 ADD of two same-shape activations runs ec_dsp_add_lut_s8 (which the
Helium ADD shares: add_applies, add_tables), its geometry record, and its tables: each input's
rescaling as a function of its 256 values, tabulated at compile time, the sum's fast
requantization proven exact over every reachable sum. The ONNX ADD / MUL are eltwise_onnx.py
and near.py, on the same kernels.
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import DType, Graph, Node
from edgecc.numerics import fastrq
from edgecc.lower.layout import doubled, record
from edgecc.lower.table import Refused
from edgecc.ops import Kernel, const, in_type, out_type
from edgecc.ops.add import add_quant
from edgecc.numerics.fixed_point import mbqm_smaller_than_one

DspAddGeom = record("ec_dsp_add_geom", "n m nn e lo hi")


def add_applies(g: Graph, n: Node, target) -> str | None:
    """int8, two same-shape activation inputs (the DSP and Helium ADD)."""
    if out_type(g, n).dtype != DType.INT8:
        return "int16: portable kernel"
    if in_type(g, n, 0).shape != in_type(g, n, 1).shape or \
            any(const(g, n, i) is not None for i in (0, 1)):
        return "broadcast or constant input: portable kernel"
    return None


def add_tables(g: Graph, n: Node) -> tuple[list[int], np.ndarray, np.ndarray]:
    """(geom, ta, tb): each input's rescaling as a function of its 256 possible values,
    tabulated (doubled) at compile time, and the fast requantization of their sum proven exact
    over the range of sums; or Refused."""
    q = add_quant(g, n)
    xs = np.arange(-128, 128, dtype=np.int64)
    ta = mbqm_smaller_than_one((xs + q["in1_off"]) * q["left_mult"], q["m1"], q["s1"])
    tb = mbqm_smaller_than_one((xs + q["in2_off"]) * q["left_mult"], q["m2"], q["s2"])
    lo, hi = np.array([ta.min() + tb.min()]), np.array([ta.max() + tb.max()])
    fr, why = fastrq.fast_requant(lo, hi, np.array([q["mo"]]), np.array([q["so"]]),
                                  q["out_zp"], q["act_min"], q["act_max"])
    if fr is None or fr.L != 1:
        raise Refused(f"no exact fast requantization ({why or 'left shift'})")
    geom = DspAddGeom(in_type(g, n, 0).numel, int(fr.m[0]), int(fr.n[0]), int(fr.e[0]), fr.lo, fr.hi)
    return geom, doubled(ta), doubled(tb)


def lower_add(g: Graph, n: Node, target) -> Kernel:
    """ec_dsp_add_lut_s8: two table entries added, the sum requantized fast."""
    geom, ta, tb = add_tables(g, n)
    return Kernel("dsp/add_lut.c.j2", params=dict(geom=geom), consts=dict(ta=ta, tb=tb),
                  variant="dsp-add-lut",
                  reason="Cortex-M DSP: inputs rescaled through 256-entry tables, fast "
                         "requantization of the sum")
