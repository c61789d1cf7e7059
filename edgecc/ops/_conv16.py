"""16x8 CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED: int16 activations, int8 weights, int64 bias.

Owns: everything these three ops do differently when their activations are int16 (TFLite's 16x8
quantization scheme), so their own modules only dispatch on the input type: the extra constraints,
the numpy references and the lowering to the portable templates templates/c/*_s16.c.j2.

TFLite Micro (reference_integer_ops ConvPerChannel / DepthwiseConvPerChannel / FullyConnected for
int16): zero points are 0 and never subtracted or added; acc = sum(x * w) over the taps inside the
input in an int64 accumulator, + the int64 bias; then the int64 overload of
MultiplyByQuantizedMultiplier (multiplier rounded to 16 bits, one rounding shift: quant.mbqm64,
ec_mbqm64), clamp to the fused activation range, cast to int16. Multipliers are computed as for
int8 (per channel for the convolutions; for FULLY_CONNECTED per unit with per-channel weights, else
per tensor: _conv_common.fc_unit_multipliers).

The C accumulates in int32 when no partial sum of a layer can leave int32 (sum |w| * 2**15 of
every output channel fits), which gives the same sum as TFLM's int64 accumulator, and in int64
otherwise; the bias is added in int64 either way.
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import DType, Graph, Node
from edgecc.ops import Kernel, const, in_type, out_type
from edgecc.ops._conv_common import (Window, act_range, channel_multipliers,
                                     fc_unit_multipliers, window)
from edgecc.ops._conv_parts import PARTS, oc_runs
from edgecc.numerics.fixed_point import INT32_MAX, mbqm64, mbqm64_prepare

MAX_SHIFT = 14  # mbqm64 shifts by 15 - shift: it needs shift <= 14 (TFLite assumes <= 7)
MAX_UNROLLED_TAPS = 100  # depthwise filters up to this many taps are unrolled in the C


def is_int16(g: Graph, n: Node) -> bool:
    return in_type(g, n).dtype == DType.INT16


def bias_dtype(g: Graph, n: Node) -> DType:
    """The bias type TFLite Micro reads: int64 with int16 activations, int32 with int8."""
    return DType.INT64 if is_int16(g, n) else DType.INT32


def int16_zero_points(g: Graph, n: Node) -> bool:
    """int16 input and output must have zero point 0 (TFLite's 16x8 quantization)"""
    if not is_int16(g, n):
        return True
    x, y = in_type(g, n), out_type(g, n)
    return (x.q is not None and y.q is not None and all(int(z) == 0 for z in x.q.zero_point)
            and all(int(z) == 0 for z in y.q.zero_point))


def _shifts(g: Graph, n: Node) -> np.ndarray:
    if n.op == "FULLY_CONNECTED":
        return fc_unit_multipliers(g, n, in_type(g, n, 1).shape[0])[1]
    ch_axis = 3 if n.op == "DEPTHWISE_CONV_2D" else 0
    return channel_multipliers(g, n, in_type(g, n, 1).shape[ch_axis])[1]


def int16_shift_in_range(g: Graph, n: Node) -> bool:
    """with int16 activations, input scale x filter scale / output scale must stay below 2**14
    (TFLite's 64-bit requantization shifts right by 15 - shift)"""
    return not is_int16(g, n) or bool(np.all(_shifts(g, n) <= MAX_SHIFT))


# ---- references ---------------------------------------------------------------------------

def _requantize16(g: Graph, n: Node, acc: np.ndarray, mult, shift) -> np.ndarray:
    lo, hi = act_range(g, n)
    return np.clip(mbqm64(acc, mult, shift), lo, hi).astype(np.int16)


def _bias64(g: Graph, n: Node, channels: int) -> np.ndarray:
    b = const(g, n, 2)
    return np.zeros(channels, np.int64) if b is None else b.astype(np.int64).ravel()


def _conv_window(g: Graph, n: Node, filter_hw: tuple[int, int]) -> Window:
    x = in_type(g, n)
    return window(n, (x.shape[1], x.shape[2]), filter_hw)


def reference_conv_2d(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    w = const(g, n, 1).astype(np.int64)  # [oc, kh, kw, fic]
    oc, kh, kw, fic = w.shape
    win = _conv_window(g, n, (kh, kw))
    x = ins[0].astype(np.int64)
    groups = x.shape[3] // fic
    per_group = oc // groups
    acc = np.zeros((x.shape[0], win.out_h, win.out_w, oc), np.int64)
    for fy, fx, patch in win.taps(x):  # zero padding == TFLM skipping the tap (zero point 0)
        for gi in range(groups):
            ch = slice(gi * per_group, (gi + 1) * per_group)
            acc[..., ch] += patch[..., gi * fic:(gi + 1) * fic] @ w[ch, fy, fx, :].T
    acc += _bias64(g, n, oc)
    m, s = channel_multipliers(g, n, oc)
    return [_requantize16(g, n, acc, m, s)]


def reference_depthwise_conv_2d(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    w = const(g, n, 1).astype(np.int64)[0]  # [kh, kw, oc]
    kh, kw, oc = w.shape
    win = _conv_window(g, n, (kh, kw))
    x = np.repeat(ins[0].astype(np.int64), oc // in_type(g, n).shape[3], axis=3)
    acc = np.zeros((x.shape[0], win.out_h, win.out_w, oc), np.int64)
    for fy, fx, patch in win.taps(x):
        acc += patch * w[fy, fx]
    acc += _bias64(g, n, oc)
    m, s = channel_multipliers(g, n, oc)
    return [_requantize16(g, n, acc, m, s)]


def _fc_dims(g: Graph, n: Node) -> tuple[int, int, int]:
    units, depth = in_type(g, n, 1).shape
    return in_type(g, n).numel // depth, units, depth


def reference_fully_connected(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    batches, units, depth = _fc_dims(g, n)
    x = ins[0].reshape(batches, depth).astype(np.int64)
    acc = x @ const(g, n, 1).astype(np.int64).T + _bias64(g, n, units)
    m, s = fc_unit_multipliers(g, n, units)
    return [_requantize16(g, n, acc, m[None, :], s[None, :]).reshape(out_type(g, n).shape)]


# ---- lowering -----------------------------------------------------------------------------

def _requant(g: Graph, n: Node, w_rows: np.ndarray, bias: np.ndarray, mult: np.ndarray,
             shift: np.ndarray) -> tuple[dict, dict]:
    """The template's accumulator type and requantization: (params, consts).

    The accumulator is int32 when every partial sum of every output channel provably fits
    (sum |w| * 2**15, as |x| <= 2**15). When acc + bias fits too and every shift is <= -1, the
    C adds an int32 bias and requantizes with ec_mbqm64_pre (one 32x32->64 multiply-add; the
    constants of quant.mbqm64_prepare); otherwise it adds the int64 bias and calls ec_mbqm64.
    """
    lo, hi = act_range(g, n)
    wsum = np.abs(w_rows.astype(np.int64)).sum(axis=1) << 15
    params = dict(acc_t="int32_t" if int(wsum.max(initial=0)) <= INT32_MAX else "int64_t",
                  act_min=lo, act_max=hi, fast=False)
    pre = mbqm64_prepare(mult, shift)
    if pre is not None and int((wsum + np.abs(bias)).max(initial=0)) <= INT32_MAX:
        m_pre, r_pre, k = pre
        params["fast"] = True
        return params, dict(bias=bias.astype(np.int32), qm=m_pre.astype(np.int32),
                            qr=r_pre.astype(np.int64), qk=k.astype(np.int32))
    return params, dict(bias=bias.astype(np.int64), mult=np.asarray(mult, np.int32),
                        shift=np.asarray(shift, np.int32))


REASON = "int16 activations (16x8): portable kernel"


def _rq_form(params: dict) -> str:
    """The macro of templates/c/_rq16.j2 that requantizes: fast (ec_mbqm64_pre) or exact."""
    return "fast" if params["fast"] else "exact"


OC_BLOCK = 4  # output channels computed together: each input load feeds 4 MACs


def pack_blocks(rows: np.ndarray, groups: int, block: int = OC_BLOCK) -> np.ndarray:
    """[oc, K] -> per group: blocks of `block` channels interleaved tap by tap ([K][block]),
    then the group's remaining channels row-major, so channel oc's block starts at oc * K."""
    out = []
    for wg in np.split(rows, groups):
        main = wg.shape[0] - wg.shape[0] % block
        blocks = wg[:main].reshape(main // block, block, wg.shape[1])
        out.append(blocks.transpose(0, 2, 1).ravel())
        out.append(wg[main:].ravel())
    return np.concatenate(out)


def lower_conv_2d(g: Graph, n: Node, target) -> Kernel:
    w = const(g, n, 1).astype(np.int64)
    oc, kh, kw, fic = w.shape
    win = _conv_window(g, n, (kh, kw))
    x = in_type(g, n)
    ic = x.shape[3]
    groups = ic // fic
    per_group = oc // groups
    m, s = channel_multipliers(g, n, oc)
    rq_params, rq_consts = _requant(g, n, w.reshape(oc, -1), _bias64(g, n, oc), m, s)
    params = dict(
        rq_params, batches=x.shape[0], in_h=win.in_h, in_w=win.in_w,
        in_c=ic, out_h=win.out_h, out_w=win.out_w, out_c=oc, k_h=kh, k_w=kw, fic=fic,
        stride_h=win.stride_h, stride_w=win.stride_w, dil_h=win.dil_h, dil_w=win.dil_w,
        pad_t=win.pad_t, pad_l=win.pad_l, groups=groups, per_group=per_group,
        block=OC_BLOCK, group_main=per_group - per_group % OC_BLOCK, ksize=kh * kw * fic,
        # one filter row's taps are one contiguous run of input when they are adjacent pixels
        # holding all the input channels
        merged=win.dil_w == 1 and groups == 1)
    consts = dict(w=pack_blocks(w.reshape(oc, -1), groups).astype(np.int8), **rq_consts)
    derived = dict(rq=_rq_form(params), in_image=win.in_h * win.in_w * ic,
                   runs=oc_runs(per_group, params["group_main"], OC_BLOCK, fic),
                   row_form="merged" if params["merged"] else "columns")
    return Kernel("conv_2d_s16.c.j2", params=params, consts=consts, variant="s16",
                  reason=REASON, derived=derived)


def lower_depthwise_conv_2d(g: Graph, n: Node, target) -> Kernel:
    w = const(g, n, 1).astype(np.int64)[0]  # [kh, kw, oc]
    kh, kw, oc = w.shape
    win = _conv_window(g, n, (kh, kw))
    x = in_type(g, n)
    w_cm = np.ascontiguousarray(w.transpose(2, 0, 1)).reshape(oc, -1)  # a channel's taps together
    m, s = channel_multipliers(g, n, oc)
    ic = x.shape[3]
    y0, y1, x0, x1 = win.interior()
    interior_px = (y1 - y0) * (x1 - x0)
    # Interior taps as (input offset from the window's first value, filter index), unrolled in
    # the C when there are few enough of them.
    taps = [((fy * win.dil_h * win.in_w + fx * win.dil_w) * ic, fy * kw + fx)
            for fy in range(kh) for fx in range(kw)]
    rq_params, rq_consts = _requant(g, n, w_cm, _bias64(g, n, oc), m, s)
    params = dict(
        rq_params, batches=x.shape[0], in_h=win.in_h, in_w=win.in_w,
        in_c=ic, out_h=win.out_h, out_w=win.out_w, out_c=oc,
        depth_mult=oc // ic, k_h=kh, k_w=kw, stride_h=win.stride_h,
        stride_w=win.stride_w, dil_h=win.dil_h, dil_w=win.dil_w, pad_t=win.pad_t,
        pad_l=win.pad_l, y0=y0, y1=y1, x0=x0, x1=x1,
        paths="interior" if interior_px == win.out_h * win.out_w else
              ("border" if interior_px == 0 else "both"),
        taps=taps if len(taps) <= MAX_UNROLLED_TAPS else [],
        tap_row_stride=win.dil_h * win.in_w * ic, tap_col_stride=win.dil_w * ic)
    consts = dict(w=w_cm.astype(np.int8).ravel(), **rq_consts)
    few = bool(params["taps"])
    derived = dict(rq=_rq_form(params), in_image=win.in_h * win.in_w * ic, k_size=kh * kw,
                   col_step=win.dil_w * ic, n_taps=len(params["taps"]),
                   parts=PARTS[params["paths"]],
                   interior_taps="interior_unrolled" if few else "interior_looped",
                   border_taps="border_listed" if few else "border_looped")
    return Kernel("depthwise_conv_2d_s16.c.j2", params=params, consts=consts, variant="s16",
                  reason=REASON, derived=derived)


def lower_fully_connected(g: Graph, n: Node, target) -> Kernel:
    batches, units, depth = _fc_dims(g, n)
    w = const(g, n, 1).astype(np.int64)
    m, s = fc_unit_multipliers(g, n, units)
    rq_params, rq_consts = _requant(g, n, w, _bias64(g, n, units), m, s)
    params = dict(rq_params, batches=batches, units=units, depth=depth)
    return Kernel("fully_connected_s16.c.j2", params=params,
                  consts=dict(w=w.astype(np.int8).ravel(), **rq_consts), variant="s16",
                  reason=REASON, derived=dict(rq=_rq_form(params)))
