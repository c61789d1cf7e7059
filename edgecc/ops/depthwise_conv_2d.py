"""DEPTHWISE_CONV_2D, int8 activations and int8 weights (per-tensor or per-channel), int32 bias.

TFLite Micro's reference (reference_integer_ops::DepthwiseConvPerChannel): output channel
oc = ic * depth_multiplier + m reads only input channel ic; acc = sum over the filter taps inside
the input of w[0, fy, fx, oc] * (x - input_zp), + bias[oc]; then MultiplyByQuantizedMultiplier with
channel oc's (multiplier, shift), + output_zp, clamp to the fused activation range.

The C kernel stores the filter channel-major ([oc][kh][kw], repacked at compile time) so each
output channel reads its taps contiguously, and folds input_zp into the bias for interior pixels
only (see conv_2d.py for why border pixels keep the per-tap subtraction).
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import DType, Graph, Node, TensorType
from edgecc.ops import Kernel, OpDef, const, in_type, out_type, register
from edgecc.ops import _simd, _vec, _vec_dw
from edgecc.ops._conv_common import (Window, act_range, bias_or_zeros, channel_multipliers,
                                     conv_window, folded_bias, mbqm_function,
                                     output_shape_matches, requantize, valid_window_options)
from edgecc.ops import _conv16
from edgecc.ops.conv_2d import (int8_activations, nhwc_rank4, quantized_activations,
                                supported_activation)
from edgecc.ops.conv_2d import _lower_mve as conv_lower_mve


MAX_UNROLLED_TAPS = 100  # micro_speech's 10x8 filter still unrolls; bigger ones loop


def int8_constant_filter(g: Graph, n: Node) -> bool:
    """filter must be a constant int8 tensor [1, kh, kw, out_ch] with zero point 0"""
    w = g.value(n.inputs[1])
    return (w.is_const and w.type.dtype == DType.INT8 and len(w.type.shape) == 4
            and w.type.shape[0] == 1 and w.type.q is not None
            and all(z == 0 for z in w.type.q.zero_point))


def filter_scales_per_tensor_or_channel(g: Graph, n: Node) -> bool:
    """filter scales must be one per tensor or one per output channel (quantized_dimension 3)"""
    q = in_type(g, n, 1).q
    return len(q.scale) == 1 or (len(q.scale) == in_type(g, n, 1).shape[3] and q.axis == 3)


def channels_match_depth_multiplier(g: Graph, n: Node) -> bool:
    """output channels must equal input channels x depth_multiplier"""
    ic, oc = in_type(g, n).shape[3], in_type(g, n, 1).shape[3]
    return ic > 0 and oc == ic * int(n.attrs.get("depth_multiplier", 1))


def bias_int32_const(g: Graph, n: Node) -> bool:
    """bias, when present, must be a constant int32 tensor (int64 with int16 activations) with one
    value per output channel"""
    if len(n.inputs) < 3 or n.inputs[2] is None:
        return True
    b = g.value(n.inputs[2])  # its quantized_dimension is not checked: person_detect says 3 on 1-D
    return (b.is_const and b.type.dtype == _conv16.bias_dtype(g, n)
            and b.type.numel == in_type(g, n, 1).shape[3])


def infer(g: Graph, n: Node) -> list[TensorType | None]:
    win = conv_window(g, n)
    shape = (in_type(g, n).shape[0], win.out_h, win.out_w, in_type(g, n, 1).shape[3])
    return [TensorType(shape, out_type(g, n).dtype)]


def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    if _conv16.is_int16(g, n):  # 16x8: edgecc/ops/_conv16.py
        return _conv16.reference_depthwise_conv_2d(g, n, ins)
    win = conv_window(g, n)
    w = const(g, n, 1).astype(np.int64)[0]  # [kh, kw, oc]
    oc = w.shape[2]
    mult = oc // in_type(g, n).shape[3]
    # Output channel ic*mult + m reads input channel ic: repeat every input channel mult times.
    xz = np.repeat(ins[0].astype(np.int64) - in_type(g, n).q.zero_point[0], mult, axis=3)
    acc = np.zeros((xz.shape[0], win.out_h, win.out_w, oc), np.int64)
    for fy, fx, patch in win.taps(xz):
        acc += patch * w[fy, fx]
    acc += bias_or_zeros(g, n, oc)
    m, s = channel_multipliers(g, n, oc)
    lo, hi = act_range(g, n)
    return [requantize(acc, m, s, out_type(g, n).q.zero_point[0], lo, hi, np.int8)]


def _pair16(a, b) -> int:
    """Two int16 taps in one int32 word, a in the bottom half (SMLAD's first pair)."""
    return int(np.int32(np.uint32((int(a) & 0xFFFF) | ((int(b) & 0xFFFF) << 16))))


def _lower_mve(g: Graph, n: Node, win: Window, rq, w: np.ndarray, x) -> Kernel | None:
    """Helium (runtime_c/mve/depthwise_conv_2d.h): filters of at most 16 taps, or None (the DSP
    kernel runs: bigger filters, or planes too wide for byte gather offsets)."""
    kh, kw, oc = w.shape
    ic = x.shape[3]
    if kh * kw > 16:
        return None
    # plane row: input columns at pad_l.., wide enough for the last output's window
    need = max(win.pad_l + win.in_w, (win.out_w - 1) * win.stride_w + (kw - 1) * win.dil_w + 1)
    wp = _simd.round_up(need, 16)
    offs = np.zeros((kh, 16), np.int64)
    for ph in range(kh):
        for fy in range(kh):
            for fx in range(kw):
                offs[ph, fy * kw + fx] = ((ph + fy * win.dil_h) % kh) * wp + fx * win.dil_w
    if win.dil_h != 1 and kh > 1 or offs.max() > 255:
        return None  # (dilated rows would need more ring slots than filter rows)
    ocp = _simd.round_up(oc, 4)
    w16 = np.zeros((ocp, 16), np.int64)
    w16[:oc, :kh * kw] = w.transpose(2, 0, 1).reshape(oc, -1)

    # per 4 channels: [bias x4][m x4][N x4][-e x4], one pointer for the kernel's 4 loads
    rqs = np.concatenate([_simd.pad_to(rq.folded, ocp).reshape(-1, 4),
                          _simd.mve_records(rq.fr, ocp).reshape(-1, 12)], axis=1)
    geom = [x.shape[0], win.in_h, win.in_w, ic, win.out_h, win.out_w, oc, oc // ic, kh,
            win.stride_h, win.stride_w, win.pad_t, win.pad_l, wp, int(x.q.zero_point[0]),
            rq.fr.lo, rq.fr.hi]
    return Kernel("depthwise_conv_2d_mve.c.j2", params=dict(geom=geom),
                  consts=dict(w16=w16.ravel().astype(np.int8), rq=rqs.ravel().astype(np.int32),
                              offs=offs.ravel().astype(np.uint8)),
                  scratch=ic * kh * wp, variant="mve-dw-gather",
                  reason=f"Helium: {kh}x{kw} window of a channel as one byte gather over int8 "
                         "channel planes, one VMLADAVA per output, 4 channels per requantization")


def _lower_dsp_as_conv(win: Window, x: TensorType, rows: np.ndarray,
                       rq) -> tuple[Kernel | None, str]:
    """One input channel (micro_speech's first layer: 10x8 filter, depth multiplier 8): the
    layer IS a CONV_2D with in_c = 1 and out_c = depth multiplier, whose filter [oc, kh*kw] is
    `rows`; the DSP convolution kernel (dsp/conv_2d.h) runs it with its im2col
    blocks of 4 pixels, which handles any filter height."""
    if rq.fr.L != 1:  # conv_requant already refuses this; the conv kernel hard-wires it
        return None, "requantization left shift is not 1: portable kernel"
    oc, taps = rows.shape
    kp = _simd.round_up(taps, 8)
    kh, kw = win.k_h, win.k_w
    geom = [x.shape[0] * win.out_h * win.out_w, win.in_h, win.in_w, 1, win.out_h, win.out_w,
            oc, kh, kw, win.stride_h, win.stride_w, win.dil_h, win.dil_w, win.pad_t, win.pad_l,
            kp, 0, int(x.q.zero_point[0]), rq.fr.lo, rq.fr.hi]
    consts = dict(w=_simd.pack_words(_simd.pad_cols(rows, kp)),
                  bias=_simd.doubled(rq.folded), qmn=rq.fr.qmn(), qe=rq.fr.e)
    return Kernel("conv_2d_dsp.c.j2", params=dict(geom=geom), consts=consts,
                  scratch=9 * kp + 4 * oc, variant="dsp-dw-as-conv",
                  reason=f"Cortex-M DSP: one input channel, run as a convolution: 4 pixels x 1 "
                         f"channel SMLAD blocks over {kp} taps"), ""


def _lower_simd(g: Graph, n: Node, target) -> tuple[Kernel | None, str]:
    """The SIMD kernel for this layer on this target, or (None, why the portable one runs).

    Cortex-M DSP (runtime_c/dsp/depthwise_conv_2d.h): input rows transposed once into int16
    channel planes, so a filter row's taps are adjacent halfwords and SMLAD takes two at a time;
    3x3 stride 1 and stride 2 get kernels that compute two outputs per pass and share loads.
    """
    if _vec.isa_of(target):  # x86 AVX2 / AArch64 NEON: edgecc/ops/_vec_dw.py
        return _vec_dw.lower_depthwise(g, n, target)
    if not _simd.has_isa(target, "dsp"):
        return None, ""
    win = conv_window(g, n)
    if win.dil_h != 1 or win.dil_w != 1:
        return None, "dilated depthwise: portable kernel"
    x = in_type(g, n)
    if win.k_h > 8 and x.shape[3] != 1:
        return None, "filter taller than 8 rows: portable kernel"
    w = const(g, n, 1).astype(np.int64)[0]  # [kh, kw, oc]
    kh, kw, oc = w.shape
    ic = x.shape[3]
    rows = np.ascontiguousarray(w.transpose(2, 0, 1)).reshape(oc, -1)  # [oc, kh*kw]
    in_zp = int(x.q.zero_point[0])
    m, s = channel_multipliers(g, n, oc)
    lo, hi = act_range(g, n)
    rq = _simd.conv_requant(rows, bias_or_zeros(g, n, oc), in_zp, m, s,
                            int(out_type(g, n).q.zero_point[0]), lo, hi)
    if rq.fr is None:
        return None, f"no exact fast requantization ({rq.why})"
    if _simd.has_isa(target, "mve"):
        k = _lower_mve(g, n, win, rq, w, x)
        if k is not None:
            return k, ""
    if ic == 1 and kh > 8:  # one input channel: a CONV_2D with out_c = depth multiplier
        if _simd.has_isa(target, "mve"):
            return conv_lower_mve(win, x, rows.reshape(oc, kh, kw, 1), rq, False), ""
        return _lower_dsp_as_conv(win, x, rows, rq)
    L = rq.fr.L
    if L > 8:  # the weights are pre-scaled by 2^L and must stay int16
        return None, "requantization left shift above 8: portable kernel"
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
    # One record per output channel: weight words, bias * 2^L, m, N, e.
    recs = np.concatenate([np.array(words, np.int64),
                           (rq.folded.astype(np.int64) << L)[:, None],
                           rq.fr.m.astype(np.int64)[:, None], rq.fr.n.astype(np.int64)[:, None],
                           rq.fr.e.astype(np.int64)[:, None]], axis=1)
    if not _simd.fits_int32(recs):
        return None, "scaled bias overflows int32: portable kernel"
    wp = _simd.round_up(max(need, win.pad_l + win.in_w) + 1, 2)
    geom = [x.shape[0], win.in_h, win.in_w, ic, win.out_h, win.out_w, oc, oc // ic, kh, kw,
            win.stride_h, win.stride_w, win.pad_t, win.pad_l, wp, wpr, kind, in_zp,
            rq.fr.lo, rq.fr.hi]
    return Kernel("depthwise_conv_2d_dsp.c.j2", params=dict(geom=geom),
                  consts=dict(recs=recs.ravel().astype(np.int32)),
                  scratch=kh * ic * wp * 2, variant=variant,
                  reason=f"Cortex-M DSP: {how}"), ""


def lower(g: Graph, n: Node, target) -> Kernel:
    if _conv16.is_int16(g, n):  # 16x8: edgecc/ops/_conv16.py (no SIMD variant yet)
        return _conv16.lower_depthwise_conv_2d(g, n, target)
    simd, why = _lower_simd(g, n, target)
    if simd is not None:
        return simd
    win = conv_window(g, n)
    x = in_type(g, n)
    w = const(g, n, 1).astype(np.int64)[0]  # [kh, kw, oc]
    kh, kw, oc = w.shape
    ic = x.shape[3]
    w_cm = np.ascontiguousarray(w.transpose(2, 0, 1))  # [oc, kh, kw]: one channel's taps together
    in_zp = int(x.q.zero_point[0])
    bias = bias_or_zeros(g, n, oc)
    folded, (y0, y1, x0, x1) = folded_bias(win, bias, w_cm.reshape(oc, -1), in_zp)
    interior_px = (y1 - y0) * (x1 - x0)
    m, s = channel_multipliers(g, n, oc)
    lo, hi = act_range(g, n)
    consts = dict(w=w_cm.astype(np.int8), mult=m.astype(np.int32), shift=s.astype(np.int32))
    if interior_px:
        consts["bias_folded"] = folded.astype(np.int32)
    if interior_px < win.out_h * win.out_w:
        consts["bias"] = bias.astype(np.int32)
    # Interior taps as (input offset from the window's first byte, filter index); unrolled in
    # the C when there are few enough of them (one load pair and one MAC per line).
    taps = [((fy * win.dil_h * win.in_w + fx * win.dil_w) * ic, fy * kw + fx)
            for fy in range(kh) for fx in range(kw)]
    params = dict(
        batches=x.shape[0], in_h=win.in_h, in_w=win.in_w, in_c=ic, out_h=win.out_h,
        out_w=win.out_w, out_c=oc, depth_mult=oc // ic, k_h=kh, k_w=kw, stride_h=win.stride_h,
        stride_w=win.stride_w, dil_h=win.dil_h, dil_w=win.dil_w, pad_t=win.pad_t, pad_l=win.pad_l,
        in_off=-in_zp, out_zp=int(out_type(g, n).q.zero_point[0]), act_min=lo, act_max=hi,
        y0=y0, y1=y1, x0=x0, x1=x1,
        paths="interior" if interior_px == win.out_h * win.out_w else
              ("border" if interior_px == 0 else "both"),
        taps=taps if len(taps) <= MAX_UNROLLED_TAPS else [],
        tap_row_stride=win.dil_h * win.in_w * ic, tap_col_stride=win.dil_w * ic,
        mbqm=mbqm_function(m))
    # depthwise_conv_2d.c.j2 finishes output pixel p (raster order) before pixel p+1 and reads
    # only p's window meanwhile: the planner may stream the output over the input.
    return Kernel("depthwise_conv_2d.c.j2", params=params, consts=consts, reason=why,
                  streams=(1, 1))


OP = register(OpDef(
    "DEPTHWISE_CONV_2D", infer, reference, lower,
    [int8_activations, quantized_activations, nhwc_rank4, int8_constant_filter,
     filter_scales_per_tensor_or_channel, channels_match_depth_multiplier, bias_int32_const,
     supported_activation, valid_window_options, output_shape_matches,
     _conv16.int16_zero_points, _conv16.int16_shift_in_range],
    dtypes="int8 x int8 -> int8 (int32 bias), int16 x int8 -> int16 (int64 bias); "
           "per-channel or per-tensor weights"))
