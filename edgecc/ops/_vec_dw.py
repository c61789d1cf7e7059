"""Lowering of DEPTHWISE_CONV_2D to the x86 AVX2 (runtime_c/edgecc_avx2_dw.h) and AArch64 NEON
(runtime_c/edgecc_neon.h) kernels.

Owns: when those kernels apply (and why not), the depthwise weight layouts (AVX2 "tap pairs": for
each pair of taps, for each channel, (w_t, w_t+1) as int16 for VPMADDWD; NEON tap by tap, int8),
the folded bias and the geometry record. Requantization arrays and the other shared pieces come
from edgecc/ops/_vec.py.
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import Graph, Node
from edgecc.ops import Kernel, const, in_type
from edgecc.ops._conv_common import channel_multipliers
from edgecc.ops._vec import (ARRAY_PAD, _bias, _int8_layer, _kernel, _out_act, _rq_params,
                             isa_of, requant_arrays, round_up, wrap32)

MAX_DW_TAPS = 64  # ec_avx2_dw / ec_neon_dw keep one pointer per tap on the stack


def lower_depthwise(g: Graph, n: Node, target) -> tuple[Kernel | None, str]:
    """DEPTHWISE_CONV_2D (depth multiplier 1, channels a multiple of 8) on AVX2 / NEON."""
    from edgecc.ops._conv_common import conv_window as _window
    isa = isa_of(target)
    why = _int8_layer(g, n)
    if why:
        return None, why
    x = in_type(g, n)
    w = const(g, n, 1).astype(np.int64)[0]  # [kh, kw, C]
    kh, kw, oc = w.shape
    ic = x.shape[3]
    if oc != ic:
        return None, "depth multiplier above 1: portable kernel"
    if oc % 8:
        return None, "channels not a multiple of 8: portable kernel"
    if kh * kw > MAX_DW_TAPS:
        return None, f"more than {MAX_DW_TAPS} taps: portable kernel"
    win = _window(g, n)
    m, s = channel_multipliers(g, n, oc)
    in_zp = int(x.q.zero_point[0])
    taps = w.reshape(kh * kw, oc)
    b = _bias(g, n, oc)
    rq, rqp, why = requant_arrays(isa, m, s, oc, taps.T, b, in_zp, *_out_act(g, n))
    if rq is None:
        return None, why
    pairs = (kh * kw + 1) // 2
    tp = np.zeros((2 * pairs, oc), np.int64)
    tp[:kh * kw] = taps
    if isa == "avx2":
        wl = tp.reshape(pairs, 2, oc).transpose(0, 2, 1).ravel().astype(np.int16)  # [pair][c][2]
    else:
        wl = tp.ravel().astype(np.int8)  # [tap][channel]
    bias = b - in_zp * taps.sum(axis=0)
    geom = [x.shape[0], win.in_h, win.in_w, oc, win.out_h, win.out_w, kh, kw, win.stride_h,
            win.stride_w, win.dil_h, win.dil_w, win.pad_t, win.pad_l, pairs]
    if isa == "neon":  # two int8 products share an int16 sum unless a weight is -128
        geom.append(int(bool((taps > -128).all())))
    bias = np.concatenate([bias, np.zeros(round_up(oc, ARRAY_PAD) - oc, np.int64)])
    consts = dict(w=wl, bias=wrap32(bias),
                  zrow=np.full(oc, in_zp, np.int8), **rq)  # what a tap outside the input reads
    return _kernel(isa, "depthwise_conv_2d", dict(geom=geom, **_rq_params(g, n), **rqp), consts,
                   0, "dw", f"{isa.upper()}: 16 channels x tap pairs per step"), ""
