"""The two epilogues of the Helium kernels: TFLite's fast requantization or ONNX numerics.

Owns: the requantization a Helium conv / depthwise / fully connected kernel is built with.
TFLite nodes take the DSP table's proven-exact fast requantization (edgecc/lower/dsp/conv.py
conv_rq, dsp/fc.py fc_rq). ONNX-numerics nodes (edgecc/numerics/qlinear.py: onnxruntime's float32
`clamp(round_half_even(float32(acc) * scale[c]) + zp)`) take records of the same layout with
other contents: where the kernels read (m, N, -e) per channel they read (the float32 scale's
bits, the output zero point, 0), and their ONNX entry points (*_onnx_s8, runtime_c/mve/,
ec_mve_rq4_onnx / ec_mve_rq_ch) apply that epilogue with MVE floating point. The accumulator
and the folded bias are the same exact integers either way. Also the ONNX ADD (onnxruntime's
QLinearAdd: float32 fused multiply-adds, edgecc/ops/_onnx_elt.py), vectorized.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from edgecc.ir import Graph, Node
from edgecc.numerics import fastrq
from edgecc.lower.dsp import conv as dsp_conv, eltwise as dsp_eltwise, fc as dsp_fc
from edgecc.lower.table import Refused
from edgecc.ops import Kernel, in_type, out_type
from edgecc.ops._conv_common import act_range, bias_or_zeros, fits_int32
from edgecc.ops._onnx_elt import _c_params, add_params
from edgecc.numerics.qlinear import onnx_scales


@dataclass
class OnnxRecords:
    """The per-channel record fields of the Helium kernels, for ONNX numerics."""

    m: np.ndarray      # the float32 scale's bits, as int32
    n_raw: np.ndarray  # the output zero point
    e: np.ndarray      # 0 (unused)
    lo: int
    hi: int


@dataclass
class OnnxRequant:
    folded: np.ndarray  # int32 bias with the input zero point folded in
    fr: OnnxRecords


def onnx_requant(g: Graph, n: Node, rows: np.ndarray, scales: np.ndarray) -> OnnxRequant:
    """Records of filter rows [oc, taps] with float32 scales per output channel, or Refused."""
    rows = np.asarray(rows, np.int64)
    oc = rows.shape[0]
    bias = np.asarray(bias_or_zeros(g, n, oc), np.int64)
    in_zp = int(in_type(g, n).q.zero_point[0])
    folded = bias - in_zp * rows.sum(axis=1)
    lo_acc, hi_acc = fastrq.acc_range(rows, bias, in_zp)
    if not (fits_int32(folded) and fits_int32(lo_acc) and fits_int32(hi_acc)):
        raise Refused("accumulator or folded bias beyond int32: portable kernel")
    scales = np.asarray(scales, np.float32)
    if ((scales != 0) & (np.abs(scales) < np.finfo(np.float32).tiny)).any():
        raise Refused("subnormal float32 scale (MVE flushes it): portable kernel")
    lo, hi = act_range(g, n)
    zp = np.full(oc, int(out_type(g, n).q.zero_point[0]), np.int64)
    return OnnxRequant(folded.astype(np.int32),
                       OnnxRecords(scales.view(np.int32).astype(np.int64), zp,
                                   np.zeros(oc, np.int64), lo, hi))


def conv_rq(g: Graph, n: Node, rows: np.ndarray):
    """The epilogue of a conv-like layer with filter rows [oc, taps] (dsp.conv_rq for TFLite)."""
    if n.numerics.qlinear:
        return onnx_requant(g, n, rows, onnx_scales(g, n, rows.shape[0]))
    return dsp_conv.conv_rq(g, n, rows)


def fc_rq(g: Graph, n: Node, w: np.ndarray, per_channel: bool):
    """The epilogue of a FULLY_CONNECTED layer with weights [units, depth]; ONNX numerics always
    has a scale per unit (the per-channel kernel)."""
    if n.numerics.qlinear:
        return onnx_requant(g, n, w, onnx_scales(g, n, w.shape[0]))
    return dsp_fc.fc_rq(g, n, uniform=not per_channel)


def entry(fn: str, n: Node) -> str:
    """The C entry point of kernel `fn` (ec_mve_..._s8) for node n: its *_onnx_s8 twin for ONNX
    numerics."""
    return fn[:-len("_s8")] + "_onnx_s8" if n.numerics.qlinear else fn


def tag(variant: str, n: Node) -> str:
    return variant + "-onnx" if n.numerics.qlinear else variant


def add_applies(g: Graph, n: Node, target) -> str | None:
    """ONNX numerics, two same-shape int8 activations, scale ratios where onnxruntime's fused
    multiply-adds and the portable kernel's double ones agree ([2^-14, 2^8))."""
    if not n.numerics.qlinear:
        return "TFLite numerics: the table kernel (add-lut)"
    why = dsp_eltwise.add_applies(g, n, target)
    if why:
        return why
    p = add_params(g, n)
    if not all(2.0 ** -14 <= abs(float(p[r])) < 2.0 ** 8 for r in ("ra", "rb")):
        return "scale ratio outside [2^-14, 2^8): portable kernel"
    return None


def lower_add(g: Graph, n: Node, target) -> Kernel:
    """ec_mve_add_onnx_s8: both terms in float32 fused multiply-adds (b's first), 4 per vector.
    (Its template is not named add_onnx.c.j2: the mve path would shadow the portable one.)"""
    p = add_params(g, n)
    assert not p["a_first"]  # (same shapes: neither operand is broadcast)
    return Kernel("mve/add_fma_onnx.c.j2", params=dict(_c_params(p), n=in_type(g, n).numel),
                  variant="mve-add-onnx",
                  reason="Helium: onnxruntime's QLinearAdd in float32 fused multiply-adds, 4 "
                         "elements per vector")
