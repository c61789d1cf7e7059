"""The Cortex-M DSP convolution (runtime_c/dsp/conv_2d.h, templates/dsp/conv_2d_6px.c.j2).

Owns: when it applies (int8, one group), its geometry record, the constants of ec_dsp_conv_2d_6px_s8 (the filter rows packed in words, one record per
output channel: the doubled bias with the input zero point folded in and the epilogue's
constants), its streaming declaration and scratch, and the two epilogues it can end with:
TFLite's fast requantization (edgecc/numerics/fastrq.py, proven exact per channel) or, for
ONNX-numerics nodes (edgecc/numerics/qlinear.py), onnxruntime's float32 requantization (the same C
body, ec_dsp_conv_2d_6px_onnx_s8). The folding and fast-requantization proof the Helium table
shares (conv_rq) is here too. A Conv group onnxruntime runs in float32 takes the same kernel's
near-tie variant (conv_2d_6px_near.c.j2, runtime_c/dsp/conv_2d_near.h, edgecc/ops/_ort_near.py).
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import Graph, Node
from edgecc.lower.climits import c_define
from edgecc.lower.dsp.common import int16_why
from edgecc.lower.layout import pack_words, pad_cols, record, round_up
from edgecc.lower.table import Refused
from edgecc.numerics import fastrq
from edgecc.numerics.fixed_point import INT32_MAX
from edgecc.numerics.qlinear import fixed_epilogue, onnx_scales
from edgecc.ops import Kernel, const, in_type, out_type
from edgecc.ops import _ort_near as on
from edgecc.ops._conv_common import (act_range, bias_or_zeros, channel_multipliers, conv_groups,
                                     conv_window)

# The kernel extends and holds the fields of PX output pixels before it writes any of their
# outputs: passes of PX pixels in raster order, all read before written (plan/stream.py).
PX = c_define("dsp/conv_2d.h", "EC_DSP_CONV_PX")
NO_LINE = -(1 << 31)  # EC_DSP_NO_LINE (dsp/common.h): a record without an integer line
STREAMS = (0, PX, 1)  # flat blocks of PX pixels, each read before written
F32, F64 = np.float32, np.float64

DspConvGeom = record("ec_dsp_conv_geom", "pixels in_h in_w in_c out_h out_w out_c k_h k_w s_h s_w "
                     "d_h d_w pad_t pad_l kp direct pad_val lo hi")


def conv_applies(g: Graph, n: Node, target) -> str | None:
    """int8, one group (the DSP and Helium convolutions)."""
    if int16_why(g, n):
        return int16_why(g, n)
    if conv_groups(g, n) != 1:
        return "grouped convolution: portable kernel"
    return None


def conv_near_applies(g: Graph, n: Node, target) -> str | None:
    """A Conv group onnxruntime's x86 defaults run in float32 (its own entry: only its kernel
    needs the near-tie headers, runtime_c/dsp/conv_2d_near.h)."""
    if not n.numerics.float_group:
        return "not a float group: the conv-6px entry"
    return conv_applies(g, n, target)


def fast_rq(g: Graph, n: Node, rows: np.ndarray, m: np.ndarray, s: np.ndarray
            ) -> fastrq.ConvRequant:
    """fastrq.conv_requant of filter rows [oc, taps] with per-channel (m, s), or Refused."""
    lo, hi = act_range(g, n)
    rq = fastrq.conv_requant(rows, bias_or_zeros(g, n, rows.shape[0]),
                             int(in_type(g, n).q.zero_point[0]), m, s,
                             int(out_type(g, n).q.zero_point[0]), lo, hi)
    if rq.fr is None:
        raise Refused(f"no exact fast requantization ({rq.why})")
    return rq


def conv_rq(g: Graph, n: Node, rows: np.ndarray) -> fastrq.ConvRequant:
    """The folded bias and fast requantization of a conv-like layer whose filter rows are
    `rows` [oc, taps], or Refused."""
    oc = rows.shape[0]
    return fast_rq(g, n, rows, *channel_multipliers(g, n, oc))


def direct_fields(win) -> bool:
    """A 1x1 unpadded layer reads its receptive fields in place."""
    return win.k_h == 1 and win.k_w == 1 and win.pad_t == 0 and win.pad_l == 0


def _tflite_records(g: Graph, n: Node, rows: np.ndarray) -> tuple[np.ndarray, int, int, int]:
    """([oc, 4] records: 2 * folded bias, m, N, e; lo; hi; 0) of TFLite's epilogue, or
    Refused."""
    rq = conv_rq(g, n, rows)
    if rq.fr.L != 1:  # conv_requant already refuses this; the kernel hard-wires it
        raise Refused("requantization left shift is not 1: portable kernel")
    fr = rq.fr
    rec = np.stack([np.asarray(rq.folded, np.int64) * 2, fr.m, fr.n, fr.e], axis=1)
    return rec, fr.lo, fr.hi, 0


def line_words(m: np.ndarray, r: np.ndarray) -> np.ndarray:
    """[C, 3] int64: each channel's line (edgecc/numerics/qlinear.py fixed_epilogue) as the DSP
    kernels read it (dsp/common.h ec_dsp_line): M, R's low word (as an int32) and high word;
    the high word is never NO_LINE."""
    r = np.asarray(r, np.int64)
    lo = r & 0xFFFFFFFF
    out = np.stack([np.asarray(m, np.int64), np.where(lo >= 1 << 31, lo - (1 << 32), lo),
                    r >> 32], axis=1)
    assert (out[:, 2] != NO_LINE).all()
    return out


def _onnx_records(g: Graph, n: Node, rows: np.ndarray) -> tuple[np.ndarray, int, int, int]:
    """([oc, 4] records; lo; hi; channels on integer lines) of onnxruntime's epilogue (see
    runtime_c/dsp/conv_2d.h): 2 * folded bias, bits of scale / 2, output zero point, 0; or, where
    edgecc/numerics/qlinear.py fixed_epilogue proves a channel's integer line, 2 * folded bias, M and
    2 R's two words (the others then end with NO_LINE). Refused when the doubled accumulator
    could leave int32, a product could reach 2^30 or a half scale is not normal."""
    oc = rows.shape[0]
    in_zp = int(in_type(g, n).q.zero_point[0])
    bias = bias_or_zeros(g, n, oc).astype(np.int64)
    lo_acc, hi_acc = fastrq.acc_range(rows, bias, in_zp)
    big = np.maximum(-lo_acc, hi_acc)
    if 2 * int(big.max()) > INT32_MAX:
        raise Refused("doubled accumulator may overflow int32: portable kernel")
    scale = onnx_scales(g, n, oc).astype(np.float32)
    half = (scale / np.float32(2)).astype(np.float32)
    if not (np.all(half >= np.finfo(np.float32).tiny) and np.all(half * 2 == scale)):
        raise Refused("an output scale too small to halve exactly: portable kernel")
    if float((big.astype(np.float64) * scale.astype(np.float64)).max()) >= 2.0 ** 30:
        raise Refused("scaled accumulators may reach 2^30: portable kernel")
    folded = bias - in_zp * np.asarray(rows, np.int64).sum(axis=1)
    bits = half.view(np.int32).astype(np.int64)
    out_zp = int(out_type(g, n).q.zero_point[0])
    zp = np.full(oc, out_zp, np.int64)
    lo, hi = act_range(g, n)
    rec = np.stack([folded * 2, bits, zp, np.zeros(oc, np.int64)], axis=1)
    m, r, ok = fixed_epilogue(scale, lo_acc, hi_acc, out_zp, lo, hi)
    if ok.any():  # onnx == 3: the proven lines, the float32 epilogue for the other channels
        line = np.concatenate([folded[:, None] * 2, line_words(m, 2 * r)], axis=1)  # 2 acc
        rec[:, 3] = NO_LINE
        rec = np.where(ok[:, None], line, rec)
    return rec, lo, hi, int(ok.sum())


def conv_kernel(g: Graph, n: Node, rows: np.ndarray, ic: int, direct: bool, variant: str,
                reason: str) -> Kernel:
    """ec_dsp_conv_2d_6px_s8 (or its ONNX twin) over filter rows [oc, kh*kw*ic] of node n. The
    kernel doubles the extended activations, so it accumulates 2 * acc from 2 * bias."""
    win, x = conv_window(g, n), in_type(g, n)
    onnx = n.numerics.qlinear
    oc = rows.shape[0]
    if n.numerics.float_group:  # a float group: edgecc/ops/_ort_near.py
        return _near_kernel(g, n, rows, ic, direct, variant, reason)
    rec, lo, hi, lines = (_onnx_records if onnx else _tflite_records)(g, n, rows)
    kp = round_up(rows.shape[1], 8)
    geom = DspConvGeom(x.shape[0] * win.out_h * win.out_w, win.in_h, win.in_w, ic, win.out_h,
                       win.out_w, oc, win.k_h, win.k_w, win.stride_h, win.stride_w, win.dil_h,
                       win.dil_w, win.pad_t, win.pad_l, kp, int(direct), int(x.q.zero_point[0]),
                       lo, hi)
    fn = ("ec_dsp_conv_2d_6px_fixed_s8" if lines else "ec_dsp_conv_2d_6px_onnx_s8") if onnx \
        else "ec_dsp_conv_2d_6px_s8"
    epilogue = (f"onnxruntime's requantization: integer lines proven equal on {lines} of {oc} "
                "channels, float32 on the others" if lines else
                "onnxruntime's float32 requantization" if onnx else
                "fast requantization proven exact per channel")
    return Kernel("dsp/conv_2d_6px.c.j2", params=dict(geom=geom, fn=fn, epilogue=epilogue),
                  consts=dict(w=pack_words(pad_cols(rows, kp)), rec=rec.astype(np.int32).ravel()),
                  scratch=(2 * PX + 1) * kp + PX * oc, variant=variant,  # EC_DSP_CONV_SCRATCH
                  reason=reason.format(kp=kp) + ("; ONNX epilogue" if onnx else ""),
                  streams=STREAMS)


# A float-group conv whose filters have fewer taps runs the portable near-tie kernel: the DSP
# near variant's code (about 1.4 KB) would be a tenth of a small model's flash, and its
# 6-pixel blocks do not pay off on so few MACs (ox_autoenc_qdq_s8's 3x3 x 1-channel first
# layer, cortex-m4: 18,116 -> 16,568 B and 38.4 -> 38.1 M instructions)
NEAR_MIN_TAPS = 16


def dsp_records(g: Graph, n: Node, rows: np.ndarray) -> tuple[np.ndarray, dict, list[str]]:
    """runtime_c/dsp/conv_2d_near.h's records [oc, 4] of a float-group conv over its filter rows
    [oc, taps] (the doubled folded zero point, the bits of sc / 2, of bb and of max|w| * kt),
    the ec_ortn_conv constants and the factors (edgecc/ops/_ort_near.py derive_factors) the
    kernel derives kt and kb with; ValueError when the kernel's float32 estimate could leave its range."""
    segs, m = on.conv_segments_sk(g, n)
    k = on.channel_constants(g, n, m)
    rows = np.asarray(rows, np.int64)
    zx = int(in_type(g, n).q.zero_point[0])
    if not on.exact_sum_fits(g, n) or rows.shape[1] * 510 * 128 >= 2 ** 31:
        raise ValueError("the exact bound's sum may leave int32")  # ec_dsp_xs_dot: 2 |x - zx| |w|
    big = np.abs(rows).sum(axis=1) * max(zx + 128, 127 - zx)  # max |acc|
    if 2 * int(big.max()) >= 2 ** 31 or \
            float((big * k["sc"].astype(F64) + np.abs(k["bb"])).max()) >= 2.0 ** 30:
        raise ValueError("the estimate may leave int32")
    half = (k["sc"] / F32(2)).astype(F32)
    if not (np.all(half >= np.finfo(F32).tiny) and np.all(half * 2 == k["sc"])):
        raise ValueError("an estimate scale too small to halve exactly")
    wk = (k["wmax"].astype(F64) * k["kt"].astype(F64)).astype(F32) * F32(1 + 2 ** -20)
    rec = np.stack([-2 * zx * rows.sum(axis=1), half.view(np.int32), k["bb"].view(np.int32),
                    wk.astype(F32).view(np.int32)], axis=1)
    consts = {name: k[name] for name in ("sw", "bias")}
    consts.update(seg_end=np.array([s + c for s, c, _ in segs], np.int32),
                  seg_sk=np.array([sk for _, _, sk in segs], np.int32))
    return rec.astype(np.int64), consts, on.derive_factors(g, n, m)


DSP_WHY = ("onnxruntime runs this QDQ group in float32: the exact accumulator, its float32 "
           "order for the outputs near a rounding boundary")


def _near_kernel(g: Graph, n: Node, rows: np.ndarray, ic: int, direct: bool, variant: str,
                 reason: str) -> Kernel:
    """ec_dsp_conv_2d_6px_near_s8: a Conv group onnxruntime runs in float32 (x86 numerics), the
    exact accumulator and its order for the outputs near a rounding boundary."""
    win, x = conv_window(g, n), in_type(g, n)
    if rows.shape[1] < NEAR_MIN_TAPS:
        raise Refused(f"a float group of {rows.shape[1]}-tap filters: the portable near-tie "
                      "kernel (the DSP near variant's code and blocks do not pay off)")
    try:
        rec, consts, factors = dsp_records(g, n, rows)
    except ValueError as e:
        raise Refused(f"{e}: portable kernel") from None
    oc, kp = rows.shape[0], round_up(rows.shape[1], 8)
    lo, hi = act_range(g, n)
    geom = DspConvGeom(x.shape[0] * win.out_h * win.out_w, win.in_h, win.in_w, ic, win.out_h,
                       win.out_w, oc, win.k_h, win.k_w, win.stride_h, win.stride_w, win.dil_h,
                       win.dil_w, win.pad_t, win.pad_l, kp, int(direct), int(x.q.zero_point[0]),
                       lo, hi)
    consts.update(w=pack_words(pad_cols(rows, kp)), rec=rec.astype(np.int32).ravel())
    return Kernel("dsp/conv_2d_6px_near.c.j2",
                  params=dict(geom=geom, near=on.near_geometry(g, n), factors=factors),
                  consts=consts,
                  scratch=(2 * PX + 1) * kp + PX * oc, variant=variant, streams=STREAMS,
                  reason=reason.format(kp=kp) + "; " + DSP_WHY)


def lower_conv(g: Graph, n: Node, target) -> Kernel:
    """Every output pixel's receptive field sign-extended once into a block of PX pixels; each
    output channel's weights (zero-padded to a multiple of 8 taps, packed in words) read once
    per block: PX pixels x 1 channel of SMLADs. A 1x1 unpadded layer reads its fields in place;
    others gather them (zero-point padded)."""
    w = const(g, n, 1).astype(np.int64)
    oc, kh, kw, ic = w.shape
    direct = direct_fields(conv_window(g, n))
    how = "fields read in place" if direct else "fields gathered with zero-point padding"
    return conv_kernel(g, n, w.reshape(oc, -1), ic, direct, "dsp-conv-6px",
                       f"Cortex-M DSP: {PX} pixels x 1 channel SMLAD blocks over {{kp}} taps, " + how)
