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
from edgecc.ops._conv_common import (act_range, bias_or_zeros, channel_multipliers, conv_window,
                                     folded_bias, mbqm_function, output_shape_matches,
                                     requantize, rq_array, supported_activation,
                                     valid_window_options)
from edgecc.ops import _conv16
from edgecc.ops.conv_2d import int8_activations, nhwc_rank4, quantized_activations
from edgecc.ops import _float_conv
from edgecc.ops._conv_parts import PARTS
from edgecc.ops._float import twin


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


def lower(g: Graph, n: Node, target) -> Kernel:
    """The portable kernel (the optimized ones are edgecc/lower/'s tables)."""
    if _conv16.is_int16(g, n):  # 16x8: edgecc/ops/_conv16.py (no SIMD variant yet)
        return _conv16.lower_depthwise_conv_2d(g, n, target)
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
    consts = dict(w=w_cm.astype(np.int8), mult=rq_array(m), shift=s.astype(np.int32))
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
    derived = dict(in_image=win.in_h * win.in_w * ic, in_row=win.in_w * ic, k_size=kh * kw,
                   parts=PARTS[params["paths"]],
                   taps_form="unrolled" if params["taps"] else "looped")
    return Kernel("depthwise_conv_2d.c.j2", params=params, consts=consts, streams=(1, 1),
                  derived=derived)


OP = register(OpDef(
    "DEPTHWISE_CONV_2D", infer, reference, lower,
    [int8_activations, quantized_activations, nhwc_rank4, int8_constant_filter,
     filter_scales_per_tensor_or_channel, channels_match_depth_multiplier, bias_int32_const,
     supported_activation, valid_window_options, output_shape_matches,
     _conv16.int16_zero_points, _conv16.int16_shift_in_range],
    dtypes="int8 x int8 -> int8 (int32 bias), int16 x int8 -> int16 (int64 bias); "
           "per-channel or per-tensor weights"))
twin(OP, _float_conv.DEPTHWISE_CONV_2D,
     keep=(nhwc_rank4, channels_match_depth_multiplier, supported_activation,
           valid_window_options, output_shape_matches))
