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
from edgecc.ops._conv_common import (OC_BLOCK, act_range, bias_or_zeros, channel_multipliers,
                                     conv_groups, conv_window, folded_bias, mbqm_function,
                                     output_shape_matches, pack_weights, requantize, rq_array,
                                     supported_activation, valid_window_options)
from edgecc.ops import _conv16
from edgecc.ops import _float_conv
from edgecc.ops._conv_parts import PARTS, oc_runs
from edgecc.ops._float import twin


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


def infer(g: Graph, n: Node) -> list[TensorType | None]:
    win = conv_window(g, n)
    shape = (in_type(g, n).shape[0], win.out_h, win.out_w, in_type(g, n, 1).shape[0])
    return [TensorType(shape, out_type(g, n).dtype)]


def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    if n.numerics.float_group:  # onnxruntime's float32 group: edgecc/ops/_ort_float.py
        from edgecc.ops._ort_float import reference as ort_reference
        return ort_reference(g, n, ins)
    if _conv16.is_int16(g, n):  # 16x8: edgecc/ops/_conv16.py
        return _conv16.reference_conv_2d(g, n, ins)
    win = conv_window(g, n)
    w = const(g, n, 1).astype(np.float64)  # [oc, kh, kw, fic]
    oc, fic = w.shape[0], w.shape[3]
    groups = conv_groups(g, n)
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


def lower(g: Graph, n: Node, target) -> Kernel:
    """The portable kernel (the optimized ones are edgecc/lower/'s tables)."""
    if n.numerics.float_group:  # onnxruntime's float32 group: edgecc/ops/_ort_float.py
        from edgecc.ops._ort_near import lower as ort_lower  # (x86-float: _ort_float)
        return ort_lower(g, n, target)
    if _conv16.is_int16(g, n):  # 16x8: edgecc/ops/_conv16.py (no SIMD variant yet)
        return _conv16.lower_conv_2d(g, n, target)
    win = conv_window(g, n)
    x = in_type(g, n)
    w = const(g, n, 1).astype(np.int64)
    oc, kh, kw, fic = w.shape
    ic = x.shape[3]
    groups = conv_groups(g, n)
    per_group = oc // groups
    in_zp = int(x.q.zero_point[0])
    bias = bias_or_zeros(g, n, oc)
    folded, (y0, y1, x0, x1) = folded_bias(win, bias, w.reshape(oc, -1), in_zp)
    interior_px = (y1 - y0) * (x1 - x0)
    m, s = channel_multipliers(g, n, oc)
    lo, hi = act_range(g, n)
    consts = dict(w_packed=pack_weights(w.reshape(oc, -1), groups).astype(np.int8),
                  mult=rq_array(m), shift=s.astype(np.int32))
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
    derived = dict(in_image=win.in_h * win.in_w * ic, parts=PARTS[params["paths"]],
                   runs=oc_runs(per_group, params["group_main"], OC_BLOCK, fic, params["unroll"]),
                   cols_open="col_loop" if cols > 1 else "one_col",
                   border_row="merged_run" if merged else "tap_runs")
    return Kernel("conv_2d.c.j2", params=params, consts=consts, streams=(1, 1), derived=derived)


OP = register(OpDef(
    "CONV_2D", infer, reference, lower,
    [int8_activations, quantized_activations, nhwc_rank4, int8_constant_filter,
     filter_scales_per_tensor_or_channel, whole_groups, bias_int32_const,
     supported_activation, valid_window_options, output_shape_matches,
     _conv16.int16_zero_points, _conv16.int16_shift_in_range],
    dtypes="int8 x int8 -> int8 (int32 bias), int16 x int8 -> int16 (int64 bias); "
           "per-channel or per-tensor weights"))
twin(OP, _float_conv.CONV_2D, keep=(nhwc_rank4, whole_groups, supported_activation,
                                       valid_window_options, output_shape_matches))
