"""The Cortex-M DSP depthwise convolutions (runtime_c/dsp/depthwise_conv_2d.h,
depthwise_conv_2d_direct.h; templates/dsp/depthwise_conv_2d_*.c.j2).

Owns: when each applies and its constants and geometry records: the planes kernel (input rows
transposed once into int16 channel planes in scratch, SMLAD over tap pairs; 3x3 stride 1 / 2 two
outputs a pass), the in-place kernels that need no scratch (`direct`: 4 channels per SXTB16
pair; `one`: one input channel, 4 taps per pair), and the one-input-channel layer over 8 rows
run as the convolution it equals (edgecc/lower/dsp/conv.py). The checks and the filter rows the
Helium depthwise shares (dw_common, dw_rows) are here.

Why the in-place kernels: the planes kernel buys its speed with scratch that lifts the arena
over the live-bytes lower bound (kws, str_ww, ad01, hello_world). They read the activations
where they are, so their steps cost only their tensors, and they stream (Kernel.streams =
(1, 1)): each output pixel reads only its own window.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from edgecc.ir import Graph, Node
from edgecc.numerics import fastrq
from edgecc.lower.climits import c_define
from edgecc.lower.dsp import common  # (common.dead_bytes: tests set it)
from edgecc.lower.dsp.common import int16_why
from edgecc.lower.dsp.conv import NO_LINE, conv_kernel, conv_rq, line_words
from edgecc.lower.layout import fits_int32, record, round_up
from edgecc.lower.table import Refused
from edgecc.ops import Kernel, const, in_type, out_type
from edgecc.ops._conv_common import act_range, bias_or_zeros, conv_window
from edgecc.numerics.qlinear import fixed_epilogue, onnx_scales

DW_MAX_KH = c_define("dsp/depthwise_conv_2d.h", "EC_DSP_DW_MAX_KH")  # filter rows in the planes
DWD_MAX_TAPS = c_define("dsp/depthwise_conv_2d_direct.h", "EC_DSP_DWD_MAX_TAPS")


DW1_MAX_WIN = c_define("dsp/depthwise_conv_2d_direct.h", "EC_DSP_DW1_MAX_WIN")
DspDwGeom = record("ec_dsp_dw_geom", "batches in_h in_w in_c out_h out_w out_c dm k_h k_w s_h s_w "
                   "pad_t pad_l wp wpr kind pad_val lo hi")
DspDw1Geom = record("ec_dsp_dw1_geom", "batches in_h in_w out_h out_w c k_h k_w groups s_h s_w "
                    "pad_t pad_l pad_val lo hi")


DspDwDirectGeom = record("ec_dsp_dw_direct_geom",
                         "batches in_h in_w c out_h out_w k_h k_w s_h s_w pad_t pad_l pad_val lo hi")


# ------------------------------------------------------------------ the planes kernel

def dw_common(g: Graph, n: Node, target) -> str | None:
    """What every DSP / Helium depthwise kernel needs: int8, undilated, filters of at most 8
    rows unless the layer has one input channel."""
    if int16_why(g, n):
        return int16_why(g, n)
    win = conv_window(g, n)
    if win.dil_h != 1 or win.dil_w != 1:
        return "dilated depthwise: portable kernel"
    if win.k_h > DW_MAX_KH and in_type(g, n).shape[3] != 1:
        return "filter taller than 8 rows: portable kernel"
    return None


def dw_rows(g: Graph, n: Node) -> np.ndarray:
    """The depthwise filter as rows [oc, kh*kw] (one channel's taps together)."""
    w = const(g, n, 1).astype(np.int64)[0]  # [kh, kw, oc]
    return np.ascontiguousarray(w.transpose(2, 0, 1)).reshape(w.shape[2], -1)


def onnx_dw_epilogue(g: Graph, n: Node, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(folded bias [c], [c, 3] records) of a depthwise layer with ONNX numerics whose filter
    rows are `rows` [c, taps]: per channel the float32 scale's bits, the output zero point, and
    1 where every |acc * scale| is proven below 2^15 (a kernel without an FPU then skips
    ec_onnx_rq's float clamp); or Refused when the folded bias overflows int32."""
    c = rows.shape[0]
    in_zp = int(in_type(g, n).q.zero_point[0])
    bias = bias_or_zeros(g, n, c)
    folded = bias - in_zp * rows.sum(axis=1)
    if not fits_int32(folded):
        raise Refused("folded bias overflows int32: portable kernel")
    scales = onnx_scales(g, n, c)
    lo_acc, hi_acc = fastrq.acc_range(rows, bias, in_zp)
    inside = np.maximum(-lo_acc, hi_acc) * scales.astype(np.float64) * (1 + 1e-6) < 32767
    recs = np.stack([scales.view(np.int32).astype(np.int64),
                     np.full(c, int(out_type(g, n).q.zero_point[0]), np.int64),
                     inside.astype(np.int64)], axis=1)
    return folded.astype(np.int64), recs


def _pair16(a, b) -> int:
    """Two int16 taps in one int32 word, a in the bottom half (SMLAD's first pair)."""
    return int(np.int32(np.uint32((int(a) & 0xFFFF) | ((int(b) & 0xFFFF) << 16))))


def lower_dw(g: Graph, n: Node, target) -> Kernel:
    """Input rows transposed once into int16 channel planes, so a filter row's taps are
    adjacent halfwords and SMLAD takes two at a time; 3x3 stride 1 and stride 2 get kernels
    that compute two outputs per pass and share loads."""
    win = conv_window(g, n)
    x = in_type(g, n)
    w = const(g, n, 1).astype(np.int64)[0]  # [kh, kw, oc]
    kh, kw, oc = w.shape
    ic = x.shape[3]
    onnx = n.numerics.qlinear
    if onnx:  # onnxruntime's epilogue: unscaled weights and bias, (scale, zp, flag) per channel
        L, (folded, epi) = 0, onnx_dw_epilogue(g, n, dw_rows(g, n))
        lo, hi = act_range(g, n)
    else:
        rq = conv_rq(g, n, dw_rows(g, n))
        L, folded, lo, hi = rq.fr.L, rq.folded, rq.fr.lo, rq.fr.hi
        epi = np.stack([rq.fr.m, rq.fr.n, rq.fr.e], axis=1).astype(np.int64)
    if L > 8:  # the weights are pre-scaled by 2^L and must stay int16
        raise Refused("requantization left shift above 8: portable kernel")
    taps = w.transpose(2, 0, 1) << L  # [oc, kh, kw], scaled so the kernel needs no shift
    if kh == 3 and kw == 3 and win.stride_h == win.stride_w and win.stride_w in (1, 2):
        kind, wpr = win.stride_w, 2
        words = [[v for r in taps[c] for v in (_pair16(r[0], r[1]), _pair16(r[1], r[2]))]
                 for c in range(oc)]
        need = (win.out_w + 3) if kind == 1 else (2 * win.out_w + 4)
        variant = f"dsp-dw3x3-s{kind}"
        how = f"3x3 stride {kind}: two outputs per pass over int16 channel planes"
    else:
        kind, wpr = 0, (kw + 1) // 2
        padded = np.zeros((oc, kh, 2 * wpr), np.int64)
        padded[:, :, :kw] = taps
        words = [[_pair16(r[2 * t], r[2 * t + 1]) for r in padded[c] for t in range(wpr)]
                 for c in range(oc)]
        need = (win.out_w - 1) * win.stride_w + 2 * wpr
        variant = "dsp-dw-general"
        how = f"{kh}x{kw}: tap pairs per SMLAD over int16 channel planes"
    # One record per output channel: weight words, bias * 2^L, the epilogue's 3 words.
    recs = np.concatenate([np.array(words, np.int64),
                           (np.asarray(folded, np.int64) << L)[:, None], epi], axis=1)
    if not fits_int32(recs):
        raise Refused("scaled bias overflows int32: portable kernel")
    wp = round_up(max(need, win.pad_l + win.in_w) + 1, 2)
    geom = DspDwGeom(x.shape[0], win.in_h, win.in_w, ic, win.out_h, win.out_w, oc, oc // ic, kh, kw,
            win.stride_h, win.stride_w, win.pad_t, win.pad_l, wp, wpr, kind,
            int(x.q.zero_point[0]), lo, hi)
    fn = "ec_dsp_depthwise_conv_2d_planes_onnx_s8" if onnx else "ec_dsp_depthwise_conv_2d_planes_s8"
    epilogue = "onnxruntime's float32 epilogue" if onnx else "constants the compiler proved exact"
    return Kernel("dsp/depthwise_conv_2d_planes.c.j2",
                  params=dict(geom=geom, fn=fn, epilogue=epilogue),
                  consts=dict(recs=recs.ravel().astype(np.int32)),
                  scratch=kh * ic * wp * 2, variant=variant + ("-onnx" if onnx else ""),
                  streams=(1,), reason=f"Cortex-M DSP: {how}" + ("; ONNX epilogue" if onnx else ""))


# ------------------------------------------------------- one input channel as a convolution

def dw_as_conv_applies(g: Graph, n: Node, target) -> str | None:
    """One input channel and a filter over 8 rows: the layer IS a CONV_2D with in_c = 1 and
    out_c = depth multiplier (micro_speech's first layer)."""
    why = dw_common(g, n, target)
    if why:
        return why
    if not (in_type(g, n).shape[3] == 1 and conv_window(g, n).k_h > DW_MAX_KH):
        return "not one input channel with a filter over 8 rows"
    return None


def lower_dw_as_conv(g: Graph, n: Node, target) -> Kernel:
    """ec_dsp_conv_2d_6px_s8's im2col blocks of pixels, which handle any filter height."""
    return conv_kernel(g, n, dw_rows(g, n), 1, False, "dsp-dw-as-conv",
                       "Cortex-M DSP: one input channel, run as a convolution: blocks of pixels "
                       "x 1 channel SMLADs over {kp} taps")


# ------------------------------------------------------------- the in-place kernels

# Output rows at most this wide take the in-place kernel even where the planes kernel fits: its
# per-row and per-channel overheads dominate there (kws 5 wide: 274K against 321K instructions
# a layer; person_detect 6 wide: 147K against 177K), while wide rows favour it (48 wide: 504K
# against 1.12M).
DWD_NARROW = 8


def dw_direct_applies(g: Graph, n: Node, target) -> str | None:
    """int8, undilated, depth multiplier 1, channels a multiple of 4 (one SXTB16 pair each), at
    most EC_DSP_DWD_MAX_TAPS taps; and the planes kernel worse here: narrow rows (DWD_NARROW),
    one-column filters (its tap pairs would be half zero), over 8 rows (it has no slots for
    them) or its scratch not dead at this step (dead_bytes); and ONNX numerics always: both
    kernels have onnxruntime's epilogue, but the planes kernel streams by rows only, and
    dead_bytes, measured without streaming, misses the arena the in-place kernel's per-pixel
    streaming saves (ox_se_mbv2_qdq_s8 on cortex-m4: 74368 B, 91296 B with the planes kernel;
    the TFLite converter twin cv_se_mbv2 pays those 91296 B). The planes kernel takes the
    ONNX layers the in-place one cannot (channels not a multiple of 4, depth multipliers)."""
    if int16_why(g, n):
        return int16_why(g, n)
    win = conv_window(g, n)
    if win.dil_h != 1 or win.dil_w != 1:
        return "dilated depthwise: portable kernel"
    ic = in_type(g, n).shape[3]
    if const(g, n, 1).shape[3] != ic:
        return "depth multiplier above 1: the planes kernel"
    if ic % 4:
        return "channels not a multiple of 4: the planes kernel"
    if win.k_h * win.k_w > DWD_MAX_TAPS:
        return f"over {DWD_MAX_TAPS} taps: the planes kernel"
    if n.numerics.qlinear or win.out_w <= DWD_NARROW or win.k_w == 1 or dw_common(g, n, target):
        return None
    try:
        planes = lower_dw(g, n, target).scratch
    except Refused:
        return None
    if planes > common.dead_bytes(g, n, target):
        return None
    return f"rows over {DWD_NARROW} wide whose planes fit in dead bytes: the planes kernel"


def _pair_words(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """int16 pairs (a in the bottom half, SMLAD's / SMLABB's first) as int32 words."""
    return ((a & 0xFFFF) | ((b & 0xFFFF) << 16)).astype(np.uint32).view(np.int32)


def _scaled(g: Graph, n: Node, rows: np.ndarray, lines: bool = False
            ) -> tuple[int, np.ndarray, np.ndarray, int, int, bool]:
    """(L, bias * 2^L, per-channel records, lo, hi, on lines) of filter rows [c, taps] whose
    int16 weights the kernel takes scaled by 2^L, or Refused. Records: TFLite's fast
    requantization (m, N, e); ONNX numerics (L = 0), per quad of channels (the in-place
    kernel's): the 4 float32 scales' bits, the output zero point 4 times, and 4 flags, 1 where
    |acc * scale| is proven below 2^15 (the kernel without an FPU then skips ec_onnx_rq's float
    clamp); or, with `lines` and any channel's integer line proven (edgecc/numerics/qlinear.py
    fixed_epilogue; the line kernel), the 4 multipliers, the 4 constants' low words and their
    high words where all 4 of the quad have lines (else its float32 record, NO_LINE the first
    flag)."""
    if n.numerics.qlinear:  # per channel quad: 4 scales, the zero point 4 times, 4 flags
        folded, epi = onnx_dw_epilogue(g, n, rows)
        lo, hi = act_range(g, n)
        recs = epi.reshape(-1, 4, 3).transpose(0, 2, 1)  # [quad, word, channel]
        ok = np.zeros(1, bool)
        if lines:
            bias, in_zp = bias_or_zeros(g, n, rows.shape[0]), int(in_type(g, n).q.zero_point[0])
            m, r, ok = fixed_epilogue(onnx_scales(g, n, rows.shape[0]),
                                      *fastrq.acc_range(rows, bias, in_zp),
                                      int(out_type(g, n).q.zero_point[0]), lo, hi)
        if ok.any():  # the line kernel; a quad with a channel without a line stays float32
            line = line_words(m, r).reshape(-1, 4, 3).transpose(0, 2, 1)
            quad = ok.reshape(-1, 4).all(axis=1)
            recs[:, 2, :] = [NO_LINE, 0, 0, 0]  # no flags: the float clamp kept
            recs = np.where(quad[:, None, None], line, recs)
        return 0, folded.astype(np.int32), recs.astype(np.int32).ravel(), lo, hi, bool(ok.any())
    rq = conv_rq(g, n, rows)
    L = rq.fr.L
    if L > 8:  # the scaled weights must stay int16
        raise Refused("requantization left shift above 8: portable kernel")
    bias = rq.folded.astype(np.int64) << L
    if not fits_int32(bias):
        raise Refused("scaled bias overflows int32: portable kernel")
    recs = np.stack([rq.fr.m, rq.fr.n, rq.fr.e], axis=1).astype(np.int32).ravel()
    return L, bias.astype(np.int32), recs, rq.fr.lo, rq.fr.hi, False


class _Geom(NamedTuple):
    geom: tuple   # the kernel's C struct record
    onnx: bool    # onnxruntime's epilogue
    lines: bool = False  # ... as proven integer lines


def _streaming_dw(kind: str, geom: _Geom, words: np.ndarray, bias: np.ndarray, recs: np.ndarray,
                  how: str, **more: np.ndarray) -> Kernel:
    """The scratch-free depthwise kernel `kind` (templates/dsp/depthwise_conv_2d_<kind>.c.j2):
    output pixels in raster order, each reading only its own window, so it streams (1, 1)."""
    onnx = "_line" if geom.lines else "_onnx" if geom.onnx else ""
    return Kernel(f"dsp/depthwise_conv_2d_{kind}.c.j2",
                  params=dict(geom=geom.geom, fn=f"ec_dsp_depthwise_conv_2d_{kind}{onnx}_s8"),
                  consts=dict(w=words.ravel(), bias=bias, rq=recs, **more),
                  variant=f"dsp-dw-{kind}{onnx.replace('_', '-')}", streams=(1, 1),
                  reason=f"Cortex-M DSP: {how} (no scratch)"
                         + ("; onnxruntime's epilogue as integer lines proven equal to it"
                            if geom.lines else "; onnxruntime's float32 epilogue" if onnx
                            else ""))


def lower_dw_direct(g: Graph, n: Node, target) -> Kernel:
    """ec_dsp_depthwise_conv_2d_direct_s8: weights as int16 pairs (w0, w2), (w1, w3) of each
    channel quad and tap, scaled by 2^L so the accumulator is what the fast requantization
    takes; bias * 2^L; (m, N, e) per channel."""
    win = conv_window(g, n)
    x = in_type(g, n)
    rows = dw_rows(g, n)  # [c, kh*kw]
    c, taps = rows.shape
    L, bias, recs, lo, hi, lines = _scaled(g, n, rows, lines=True)
    w = (rows << L).reshape(c // 4, 4, taps).transpose(0, 2, 1)  # [quad, tap, 4]
    words = _pair_words(w[:, :, [0, 1]], w[:, :, [2, 3]])  # [quad, tap, 2]
    geom = DspDwDirectGeom(x.shape[0], win.in_h, win.in_w, c, win.out_h, win.out_w, win.k_h,
                           win.k_w, win.stride_h, win.stride_w, win.pad_t, win.pad_l,
                           int(x.q.zero_point[0]), lo, hi)
    return _streaming_dw("direct", _Geom(geom, n.numerics.qlinear, lines), words, bias, recs,
                         f"{win.k_h}x{win.k_w} read in place, 4 channels per SXTB16 pair, "
                         "SMLABB/SMLATT per tap",
                         zrow=np.full(c, x.q.zero_point[0], np.int8))  # padding taps read it


def dw_one_applies(g: Graph, n: Node, target) -> str | None:
    """int8, undilated, one input channel, output channels a multiple of 4, a window padded to
    whole words of at most EC_DSP_DW1_MAX_WIN bytes."""
    if int16_why(g, n):
        return int16_why(g, n)
    win = conv_window(g, n)
    if win.dil_h != 1 or win.dil_w != 1:
        return "dilated depthwise: portable kernel"
    if in_type(g, n).shape[3] != 1 or const(g, n, 1).shape[3] % 4:
        return "not one input channel with output channels a multiple of 4"
    if win.k_h * round_up(win.k_w, 4) > DW1_MAX_WIN:
        return f"window over {DW1_MAX_WIN} bytes: the convolution form"
    return None


def lower_dw_one(g: Graph, n: Node, target) -> Kernel:
    """ec_dsp_depthwise_conv_2d_one_s8: weights [quad][row][4-tap group][channel][2 words],
    taps past k_w zero, scaled by 2^L."""
    win = conv_window(g, n)
    x = in_type(g, n)
    rows = dw_rows(g, n)  # [c, kh*kw]
    c = rows.shape[0]
    groups = -(-win.k_w // 4)
    L, bias, recs, lo, hi, _ = _scaled(g, n, rows)
    w = np.zeros((c, win.k_h, 4 * groups), np.int64)
    w[:, :, :win.k_w] = (rows << L).reshape(c, win.k_h, win.k_w)
    w = w.reshape(c // 4, 4, win.k_h, groups, 4).transpose(0, 2, 3, 1, 4)  # [q, fy, k, ch, tap]
    words = _pair_words(w[..., [0, 1]], w[..., [2, 3]])  # [q, fy, k, ch, 2]
    geom = DspDw1Geom(x.shape[0], win.in_h, win.in_w, win.out_h, win.out_w, c, win.k_h, win.k_w,
                      groups, win.stride_h, win.stride_w, win.pad_t, win.pad_l,
                      int(x.q.zero_point[0]), lo, hi)
    return _streaming_dw("one", _Geom(geom, n.numerics.qlinear), words, bias, recs,
                         f"one input channel, {win.k_h}x{win.k_w}: 4 taps per SXTB16 pair, "
                         "4 channels per pass")
