"""CONV_2D, int8 activations and int8 weights (per-tensor or per-channel), optional int32 bias.

TFLite Micro's reference (reference_integer_ops::ConvPerChannel): for every output pixel and output
channel, acc = sum over the filter taps that fall inside the input of w * (x - input_zp), + bias;
then MultiplyByQuantizedMultiplier with that channel's (multiplier, shift), + output_zp, clamp to
the fused activation range. Taps in the SAME padding are skipped, which is the same as reading
an input value equal to input_zp.

The C kernel folds the input zero point into the bias (bias - zp * sum(w)) for the interior output
pixels, whose taps all read real input; border pixels use the unfolded bias and (x - zp) per tap,
because folding over all taps there would also subtract zp * w for the skipped padded taps.
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import DType, Graph, Node, TensorType
from edgecc.ops import Kernel, OpDef, const, in_type, out_type, register
from edgecc.ops import _simd, _vec
from edgecc.ops._conv_common import (Window, act_range, bias_or_zeros, channel_multipliers,
                                     conv_window, folded_bias, mbqm_function,
                                     output_shape_matches, requantize, valid_window_options)
from edgecc.ops import _conv16


def int8_activations(g: Graph, n: Node) -> bool:
    """input and output must both be int8, or both int16 (16x8: int16 activations, int8 weights)"""
    return (in_type(g, n).dtype, out_type(g, n).dtype) in ((DType.INT8,) * 2, (DType.INT16,) * 2)


def quantized_activations(g: Graph, n: Node) -> bool:
    """input and output must be quantized per tensor (one scale and zero point each)"""
    x, y = in_type(g, n), out_type(g, n)
    return x.q is not None and y.q is not None and not x.q.per_channel and not y.q.per_channel


def nhwc_rank4(g: Graph, n: Node) -> bool:
    """input and output must be 4-D (NHWC)"""
    return len(in_type(g, n).shape) == 4 and len(out_type(g, n).shape) == 4


def int8_constant_filter(g: Graph, n: Node) -> bool:
    """filter must be a constant int8 tensor [out_ch, kh, kw, in_ch] with zero point 0"""
    w = g.value(n.inputs[1])
    return (w.is_const and w.type.dtype == DType.INT8 and len(w.type.shape) == 4
            and w.type.q is not None and all(z == 0 for z in w.type.q.zero_point))


def filter_scales_per_tensor_or_channel(g: Graph, n: Node) -> bool:
    """filter scales must be one per tensor or one per output channel (quantized_dimension 0)"""
    q = in_type(g, n, 1).q
    return len(q.scale) == 1 or (len(q.scale) == in_type(g, n, 1).shape[0] and q.axis == 0)


def whole_groups(g: Graph, n: Node) -> bool:
    """input depth must be a multiple of the filter's input depth, and output channels a multiple
    of the resulting group count"""
    fic, ic, oc = in_type(g, n, 1).shape[3], in_type(g, n).shape[3], in_type(g, n, 1).shape[0]
    return fic > 0 and ic % fic == 0 and oc % (ic // fic) == 0


def bias_int32_const(g: Graph, n: Node) -> bool:
    """bias, when present, must be a constant int32 tensor (int64 with int16 activations) with one
    value per output channel"""
    if len(n.inputs) < 3 or n.inputs[2] is None:
        return True
    b = g.value(n.inputs[2])
    return (b.is_const and b.type.dtype == _conv16.bias_dtype(g, n)
            and b.type.numel == in_type(g, n, 1).shape[0])


def supported_activation(g: Graph, n: Node) -> bool:
    """fused activation must be NONE, RELU, RELU_N1_TO_1 or RELU6"""
    return int(n.attrs.get("fused_activation_function", 0)) in (0, 1, 2, 3)


def infer(g: Graph, n: Node) -> list[TensorType | None]:
    win = conv_window(g, n)
    shape = (in_type(g, n).shape[0], win.out_h, win.out_w, in_type(g, n, 1).shape[0])
    return [TensorType(shape, out_type(g, n).dtype)]


def _groups(g: Graph, n: Node) -> int:
    """TFLite's grouped convolution: input channels / filter input channels."""
    return in_type(g, n).shape[3] // in_type(g, n, 1).shape[3]


def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    if _conv16.is_int16(g, n):  # 16x8: edgecc/ops/_conv16.py
        return _conv16.reference_conv_2d(g, n, ins)
    win = conv_window(g, n)
    w = const(g, n, 1).astype(np.float64)  # [oc, kh, kw, fic]
    oc, fic = w.shape[0], w.shape[3]
    groups = _groups(g, n)
    per_group = oc // groups
    xz = ins[0].astype(np.float64) - in_type(g, n).q.zero_point[0]
    # float64 sums of int8 products are exact far beyond any int32 accumulator.
    acc = np.zeros((xz.shape[0], win.out_h, win.out_w, oc), np.float64)
    for fy, fx, patch in win.taps(xz):
        for gi in range(groups):  # output channels of group gi read input channels of group gi
            ch = slice(gi * per_group, (gi + 1) * per_group)
            acc[..., ch] += patch[..., gi * fic:(gi + 1) * fic] @ w[ch, fy, fx, :].T
    acc = acc.astype(np.int64) + bias_or_zeros(g, n, oc)
    m, s = channel_multipliers(g, n, oc)
    lo, hi = act_range(g, n)
    return [requantize(acc, m, s, out_type(g, n).q.zero_point[0], lo, hi, np.int8)]


OC_BLOCK = 4  # output channels computed together: each input byte loaded once feeds 4 MACs


def pack_weights(w: np.ndarray, groups: int = 1, block: int = OC_BLOCK) -> np.ndarray:
    """[oc, K] -> per group: blocks of `block` channels interleaved ([K][block] each), then the
    group's remaining channels row-major.

    Channel oc's block (or row) then starts at byte oc*K, and the interior loop walks one weight
    pointer forward: within a block, w[k*block + j] is channel j's tap k.
    """
    out = []
    for wg in np.split(w, groups):
        main = wg.shape[0] - wg.shape[0] % block
        out.append(wg[:main].reshape(main // block, block, wg.shape[1]).transpose(0, 2, 1).ravel())
        out.append(wg[main:].ravel())
    return np.concatenate(out)


def _lower_mve(win: Window, x: TensorType, w: np.ndarray, rq, direct: bool) -> Kernel:
    """Helium (runtime_c/mve/conv_2d.h): 4 output channels per pass, VMLADAVA on
    16-byte chunks of the receptive field. How interior pixels read their field (in place as
    one run, as one run per filter row, or by byte gathers) decides the weights' input order."""
    oc, kh, kw, ic = w.shape
    run = kw * ic
    flat = _simd.round_up(kh * run, 16)
    offsets = [fy * win.dil_h * win.in_w * ic + fx * win.dil_w * ic + c
               for fy in range(kh) for fx in range(kw) for c in range(ic)]
    offs = np.zeros(0, np.uint8)
    if direct:
        mode, rowp, how = 0, run, "pixels read in place"
    elif flat <= 64 and max(offsets) < 256 and not kh * _simd.round_up(run, 16) <= flat:
        mode, rowp, how = 2, run, "fields by byte gathers"
        offs = np.zeros(flat, np.int64)
        offs[:len(offsets)] = offsets
        offs = offs.astype(np.uint8)
    elif run % 16 == 0 and win.dil_w == 1:
        mode, rowp, how = 1, run, "fields read in place, one run per filter row"
    elif run <= 16 and kh <= 4 and win.dil_w == 1:
        mode, rowp, how = 1, 16, "filter rows padded to 16 bytes, read in place"
    else:
        mode, rowp, how = 3, run, "fields copied with zero-point padding"
    rows = np.zeros((oc, kh, rowp), np.int64)
    rows[:, :, :run] = w.reshape(oc, kh, run)
    y0, y1, x0, x1 = win.interior()
    kp = _simd.round_up(kh * rowp, 16)
    if kp > 64:
        # long fields: three pixels per weight pass, blocks of 2 channels
        # (runtime_c/mve/conv_2d.h, ec_mve_conv_2d_2ch3px_s8)
        b2 = _simd.mve_blocks2(rows.reshape(oc, -1), rq.folded, rq.fr)
        geom = [x.shape[0] * win.out_h * win.out_w, win.in_h, win.in_w, ic, win.out_h,
                win.out_w, oc, kh, kw, win.stride_h, win.stride_w, win.dil_h, win.dil_w,
                win.pad_t, win.pad_l, b2.kp, mode, rowp, int(x.q.zero_point[0]), rq.fr.lo,
                rq.fr.hi, y0, y1, x0, x1]
        return Kernel("conv_2d_mve3.c.j2", params=dict(geom=geom),
                      consts=dict(w=b2.w, rq=b2.rq, offs=offs if len(offs) else
                                  np.zeros(16, np.uint8)), scratch=3 * (b2.kp + 64),
                      variant=f"mve-conv-2ch3px-m{mode}",
                      reason=f"Helium: three pixels per pass over the weights, blocks of 2 "
                             f"output channels (6 VMLADAVA sums) over {b2.kp} taps, {how}; "
                             "per-channel requantization of 3 pixels")
    mb = _simd.mve_blocks(rows.reshape(oc, -1), rq.folded, rq.fr)
    geom = [x.shape[0] * win.out_h * win.out_w, win.in_h, win.in_w, ic, win.out_h, win.out_w,
            oc, kh, kw, win.stride_h, win.stride_w, win.dil_h, win.dil_w, win.pad_t, win.pad_l,
            mb.kp, mode, rowp, int(x.q.zero_point[0]), rq.fr.lo, rq.fr.hi, y0, y1, x0, x1]
    return Kernel("conv_2d_mve.c.j2", params=dict(geom=geom),
                  consts=dict(w=mb.w, bias=mb.bias, rq=mb.rq, offs=offs if len(offs) else
                              np.zeros(16, np.uint8)),
                  scratch=mb.kp + 64, variant=f"mve-conv-4ch-m{mode}",
                  reason=f"Helium: 4 output channels per pass, VMLADAVA over {mb.kp} taps in "
                         f"16-byte chunks, {how}; vector requantization")


def _lower_simd(g: Graph, n: Node, target) -> tuple[Kernel | None, str]:
    """The SIMD kernel for this layer on this target, or (None, why the portable one runs).

    Cortex-M DSP: every output pixel's receptive field is sign-extended once into a block of 4
    pixels, and each output channel's weights (zero-padded to a multiple of 8 taps, packed in
    words) are read once per block: 4 pixels x 1 channel of SMLADs (runtime_c/dsp/conv_2d.h).
    A 1x1 unpadded layer reads its fields in place; others gather them (zero-point padded).
    Helium: the same fields against 4 output channels at a time, VMLADAVA on 16-byte chunks
    (runtime_c/mve/conv_2d.h).
    """
    if _vec.isa_of(target) == "avx2":  # few input channels: edgecc/ops/_vec_first.py
        from edgecc.ops._vec_first import lower_conv_2d_first
        first, _ = lower_conv_2d_first(g, n, target)
        if first is not None:
            return first, ""
    if _vec.isa_of(target):  # x86 AVX2 / AArch64 NEON: edgecc/ops/_vec.py
        return _vec.lower_conv_2d(g, n, target)
    if not _simd.has_isa(target, "dsp"):
        return None, ""
    if _groups(g, n) != 1:
        return None, "grouped convolution: portable kernel"
    win = conv_window(g, n)
    x = in_type(g, n)
    w = const(g, n, 1).astype(np.int64)
    oc, kh, kw, ic = w.shape
    in_zp = int(x.q.zero_point[0])
    m, s = channel_multipliers(g, n, oc)
    lo, hi = act_range(g, n)
    rq = _simd.conv_requant(w.reshape(oc, -1), bias_or_zeros(g, n, oc), in_zp, m, s,
                            int(out_type(g, n).q.zero_point[0]), lo, hi)
    if rq.fr is None:
        return None, f"no exact fast requantization ({rq.why})"
    direct = kh == 1 and kw == 1 and win.pad_t == 0 and win.pad_l == 0
    how = "fields read in place" if direct else "fields gathered with zero-point padding"
    if _simd.has_isa(target, "mve"):
        return _lower_mve(win, x, w, rq, direct), ""
    kp = _simd.round_up(kh * kw * ic, 8)
    geom = [x.shape[0] * win.out_h * win.out_w, win.in_h, win.in_w, ic, win.out_h, win.out_w,
            oc, kh, kw, win.stride_h, win.stride_w, win.dil_h, win.dil_w, win.pad_t, win.pad_l,
            kp, int(direct), in_zp, rq.fr.lo, rq.fr.hi]
    # The kernel doubles the extended activations, so it accumulates 2 * acc from 2 * bias.
    consts = dict(w=_simd.pack_words(_simd.pad_cols(w.reshape(oc, -1), kp)),
                  bias=_simd.doubled(rq.folded), qmn=rq.fr.qmn(), qe=rq.fr.e)
    return Kernel("conv_2d_dsp.c.j2", params=dict(geom=geom), consts=consts,
                  scratch=9 * kp + 4 * oc, variant="dsp-conv-4px",
                  reason=f"Cortex-M DSP: 4 pixels x 1 channel SMLAD blocks over {kp} taps, "
                         f"{how}"), ""


def lower(g: Graph, n: Node, target) -> Kernel:
    if _conv16.is_int16(g, n):  # 16x8: edgecc/ops/_conv16.py (no SIMD variant yet)
        return _conv16.lower_conv_2d(g, n, target)
    simd, why = _lower_simd(g, n, target)
    if simd is not None:
        return simd
    win = conv_window(g, n)
    x = in_type(g, n)
    w = const(g, n, 1).astype(np.int64)
    oc, kh, kw, fic = w.shape
    ic = x.shape[3]
    groups = _groups(g, n)
    per_group = oc // groups
    in_zp = int(x.q.zero_point[0])
    bias = bias_or_zeros(g, n, oc)
    folded, (y0, y1, x0, x1) = folded_bias(win, bias, w.reshape(oc, -1), in_zp)
    interior_px = (y1 - y0) * (x1 - x0)
    m, s = channel_multipliers(g, n, oc)
    lo, hi = act_range(g, n)
    consts = dict(w_packed=pack_weights(w.reshape(oc, -1), groups).astype(np.int8),
                  mult=m.astype(np.int32), shift=s.astype(np.int32))
    if interior_px:
        consts["bias_folded"] = folded.astype(np.int32)
    if interior_px < win.out_h * win.out_w:
        consts["bias"] = bias.astype(np.int32)
    # The taps of one filter row read kw runs of fic bytes, dil_w*in_c apart; with dilation 1 and
    # one group they merge into one contiguous run of kw*in_c bytes.
    merged = win.dil_w == 1 and groups == 1
    cols, run = (1, kw * ic) if merged else (kw, fic)
    params = dict(
        batches=x.shape[0], in_h=win.in_h, in_w=win.in_w, in_c=ic, out_h=win.out_h,
        out_w=win.out_w, out_c=oc, k_h=kh, k_w=kw, stride_h=win.stride_h, stride_w=win.stride_w,
        dil_h=win.dil_h, dil_w=win.dil_w, pad_t=win.pad_t, pad_l=win.pad_l,
        in_off=-in_zp, out_zp=int(out_type(g, n).q.zero_point[0]), act_min=lo, act_max=hi,
        y0=y0, y1=y1, x0=x0, x1=x1,
        # which code paths exist: all pixels interior, none, or both (then a per-pixel test)
        paths="interior" if interior_px == win.out_h * win.out_w else
              ("border" if interior_px == 0 else "both"),
        groups=groups, fic=fic, per_group=per_group,
        block=OC_BLOCK, group_main=per_group - per_group % OC_BLOCK, ksize=kh * kw * fic,
        row_stride=win.dil_h * win.in_w * ic, cols=cols, col_stride=win.dil_w * ic, run=run,
        merged=merged,
        # the interior's innermost loop handles this many input bytes per iteration
        unroll=next(u for u in (4, 2, 1) if run % u == 0),
        mbqm=mbqm_function(m))
    # conv_2d.c.j2 finishes output pixel p (raster order) before pixel p+1 and reads only p's
    # window meanwhile: the planner may stream the output over the input (plan/stream.py).
    return Kernel("conv_2d.c.j2", params=params, consts=consts, reason=why, streams=(1, 1))


OP = register(OpDef(
    "CONV_2D", infer, reference, lower,
    [int8_activations, quantized_activations, nhwc_rank4, int8_constant_filter,
     filter_scales_per_tensor_or_channel, whole_groups, bias_int32_const,
     supported_activation, valid_window_options, output_shape_matches,
     _conv16.int16_zero_points, _conv16.int16_shift_in_range],
    dtypes="int8 x int8 -> int8 (int32 bias), int16 x int8 -> int16 (int64 bias); "
           "per-channel or per-tensor weights"))
