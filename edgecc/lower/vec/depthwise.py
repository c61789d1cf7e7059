"""DEPTHWISE_CONV_2D on the x86 (runtime_c/x86/depthwise_conv_2d.h, depthwise_conv_2d_3x3.h)
and AArch64 NEON (runtime_c/neon/depthwise_conv_2d.h) kernels.

Owns: when those kernels apply (and why not), the depthwise weight layouts (x86 "tap pairs": for
each pair of taps, for each channel, (w_t, w_t+1) as int16 for VPMADDWD; NEON tap by tap, int8;
the x86 3x3 kernel's row pairs), the folded bias and the geometry records, and the layer over
one input channel run as the CONV_2D it equals. Requantization arrays and the other shared
pieces come from edgecc/lower/vec/common.py; the tables name these functions through
edgecc/lower/x86/depthwise.py and edgecc/lower/neon/depthwise.py.
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import Graph, Node, QParams, TensorType, Value
from edgecc.lower.climits import c_define
from edgecc.lower.layout import int32_array, record, round_up
from edgecc.lower.table import Candidate, Refused, try_candidates
from edgecc.lower.vec.common import (ARRAY_PAD, LABEL, bias_of, int8_layer, out_act,
                                     requant_arrays, rq_params, vec_kernel)
from edgecc.metrics import const_bytes
from edgecc.ops import Kernel, const, in_type
from edgecc.ops._conv_common import channel_multipliers, conv_window

X86DwGeom = record("ec_x86_dw_geom", "batches in_h in_w chans out_h out_w k_h k_w stride_h "
                    "stride_w dil_h dil_w pad_t pad_l pairs")
NeonDwGeom = record("ec_neon_dw_geom", "batches in_h in_w chans out_h out_w k_h k_w stride_h "
                    "stride_w dil_h dil_w pad_t pad_l pairs pair_sum")
X86Dw3Geom = record("ec_x86_dw3_geom", "batches in_h in_w chans out_h out_w stride_h stride_w "
                     "pad_t pad_l d4 x_lo x_hi")

# ec_x86_depthwise_conv_2d_taps_s8 / ec_neon_depthwise_conv_2d_taps_s8 keep one pointer per tap
# on the stack
MAX_DW_TAPS = min(c_define("x86/depthwise_conv_2d.h", "EC_X86_DW_MAX_TAPS"),
                  c_define("neon/depthwise_conv_2d.h", "EC_NEON_DW_MAX_TAPS"))
DW_NARROW = 6     # 3x3 layers this many output columns wide or fewer: see lower_depthwise
# A narrow 3x3 layer runs the 3x3 row kernel (its dispatching plan entry: VPDPBUSD blocks on
# AVX-512) in a model of at least this many constant bytes, else the taps kernel at every level.
# The 3x3 kernel's level-2 blocks are worth their ~7 KB where the weights dwarf them:
# kws_ref_model (24 KB) 24.2 -> 16.9 us at -O2 -mavx2 -mfma on AVX-512 VNNI (LiteRT 22.6), flash
# 56.2 -> 62.4 KB (0.87 of its AVX2-only build); cv_dscnn (6.5 KB) would run 11.9 -> 9.6 us but
# carry 35.3 KB instead of 28.5 (1.23 of its AVX2-only build).
NARROW_DW3_MODEL_BYTES = 16 * 1024


def as_conv(g: Graph, n: Node) -> tuple[Graph, Node]:
    """A depthwise layer over ONE input channel (depth multiplier M) as the CONV_2D it equals:
    output channel m = filter m of the single channel, so the filter [1, kh, kw, M] becomes
    [M, kh, kw, 1] (per-channel quantization moves from axis 3 to axis 0). Same input, output,
    bias, window and activation; only a graph copy holds the new filter."""
    w = g.values[n.inputs[1]]
    q = w.type.q
    if q is not None and q.per_channel:
        q = QParams(q.scale, q.zero_point, 0)
    data = np.ascontiguousarray(w.data[0].transpose(2, 0, 1)[..., None])
    g2 = g.copy()
    name = n.inputs[1] + "_as_conv"
    g2.values[name] = Value(name, TensorType(tuple(data.shape), w.type.dtype, q), data, w.label)
    attrs = {k: v for k, v in n.attrs.items() if k != "depth_multiplier"}
    conv = Node("CONV_2D", [n.inputs[0], name, *n.inputs[2:]], list(n.outputs), attrs, n.name,
                n.index, n.numerics)
    g2.nodes = [conv if m is n else m for m in g2.nodes]
    return g2, conv


def as_conv_applies(g: Graph, n: Node, target) -> str | None:
    """A depthwise layer runs as a convolution when it is int8 with one input channel and a
    depth multiplier above 1."""
    why = int8_layer(g, n)
    if why:
        return why
    if not (in_type(g, n).shape[3] == 1 and in_type(g, n, 1).shape[3] != 1):
        return "not one input channel with a depth multiplier"
    return None


def lower_as_conv(g: Graph, n: Node, target, conv_entries: list[Candidate]) -> Kernel:
    """One input channel, depth multiplier M (micro_speech's first layer): the first of the
    table's CONV_2D entries `conv_entries` that runs the equivalent CONV_2D, or Refused."""
    g2, conv = as_conv(g, n)
    refused: list[tuple[str, str]] = []
    k = try_candidates(conv_entries, g2, conv, target, refused)
    if k is None:
        raise Refused(f"one input channel run as a convolution, refused: "
                      f"{refused[-1][1] if refused else 'no convolution kernel'}")
    k.reason = f"one input channel, run as a convolution: {k.reason}"
    return k


def dw_applies(g: Graph, n: Node, target) -> str | None:
    """Why the x86 / NEON depthwise kernels cannot run n (None when they can)."""
    why = int8_layer(g, n)
    if why:
        return why
    if in_type(g, n, 1).shape[3] != in_type(g, n).shape[3]:
        return "depth multiplier above 1: portable kernel"
    return None


def lower_depthwise(g: Graph, n: Node, isa: str) -> Kernel:
    """DEPTHWISE_CONV_2D (depth multiplier 1, channels a multiple of 8; on AVX2 3x3 undilated
    layers any count from 8) on AVX2 / NEON, or Refused."""
    x = in_type(g, n)
    w = const(g, n, 1).astype(np.int64)[0]  # [kh, kw, C]
    kh, kw, oc = w.shape
    win = conv_window(g, n)
    # 3x3 undilated on AVX2: ec_x86_depthwise_conv_2d_3x3_s8, any channel count from 8 (blocks may overlap)
    # (not for ONNX numerics: its epilogue is in the taps kernel, edgecc/lower/x86/onnx.py)
    dw3 = isa == "x86" and kh == kw == 3 and win.dil_h == win.dil_w == 1 and not n.numerics.qlinear
    if oc < 8:
        raise Refused("fewer than 8 channels: portable kernel")
    if oc % 8 and not dw3:
        raise Refused("channels not a multiple of 8: portable kernel")
    if kh * kw > MAX_DW_TAPS:
        raise Refused(f"more than {MAX_DW_TAPS} taps: portable kernel")
    m, s = channel_multipliers(g, n, oc)
    in_zp = int(x.q.zero_point[0])
    taps = w.reshape(kh * kw, oc)
    b = bias_of(g, n, oc)
    rq, rqp, why = requant_arrays(isa, m, s, oc, taps.T, b, in_zp, *out_act(g, n))
    if rq is None:
        raise Refused(why)
    bias = b - in_zp * taps.sum(axis=0)
    bias = np.concatenate([bias, np.zeros(round_up(oc, ARRAY_PAD) - oc, np.int64)])
    # Narrow outputs (DW_NARROW columns or fewer, channels a multiple of 8) of a model with few
    # weights run pixel by pixel ec_x86_depthwise_conv_2d_taps_s8 (all channels per pixel) at
    # every level, one kernel with one copy of the weights: see NARROW_DW3_MODEL_BYTES.
    if dw3 and (not (win.out_w <= DW_NARROW and oc % 8 == 0)
                or const_bytes(g) >= NARROW_DW3_MODEL_BYTES):
        params = dict(**rq_params(g, n), **rqp)
        return _lower_dw3(x.shape[0], win, taps, bias, in_zp, rq, params)
    pairs = (kh * kw + 1) // 2
    tp = np.zeros((2 * pairs, oc), np.int64)
    tp[:kh * kw] = taps
    if isa == "x86":
        wl = tp.reshape(pairs, 2, oc).transpose(0, 2, 1).ravel().astype(np.int16)  # [pair][c][2]
    else:
        wl = tp.ravel().astype(np.int8)  # [tap][channel]
    fields = [x.shape[0], win.in_h, win.in_w, oc, win.out_h, win.out_w, kh, kw, win.stride_h,
              win.stride_w, win.dil_h, win.dil_w, win.pad_t, win.pad_l, pairs]
    if isa == "neon":  # two int8 products share an int16 sum unless a weight is -128
        geom = NeonDwGeom(*fields, int(bool((taps > -128).all())))
    else:
        geom = X86DwGeom(*fields)
    consts = dict(w=wl, bias=int32_array(bias),
                  zrow=np.full(oc, in_zp, np.int8), **rq)  # what a tap outside the input reads
    return vec_kernel(isa, "depthwise_conv_2d", dict(geom=geom, **rq_params(g, n), **rqp), consts,
                      0, "dw", f"{LABEL[isa]}: 16 channels x tap pairs per step", "taps")


def dw3_plan(chans: int, stride_w: int) -> int:
    """The channel plan a 3x3 depthwise call names (runtime_c/x86/depthwise_conv_2d_3x3.h,
    ec_x86_dw3_all): the block kinds its channel count takes, so the C holds only those."""
    if chans % 64 == 0:
        return 1
    if stride_w == 1 and chans in (8, 16):
        return 3 if chans == 8 else 4
    if chans < 16:
        return 6
    plan = 2 if chans % 32 == 0 else (5 if chans % 16 == 0 else 0)
    return {2: 7, 5: 8, 0: 9}[plan] if chans < 64 else plan  # below 64: no block of quads


def _lower_dw3(batches: int, win, taps: np.ndarray, bias: np.ndarray, in_zp: int, rq: dict,
               params: dict) -> Kernel:
    """3x3, dilation 1 on AVX2: runtime_c/x86/depthwise_conv_2d_3x3.h (row by row; input
    pairs shared by neighbouring pixels). Weights: 5 pairs (w0,w3) (w1,w4) (w2,w5) (w6,w7) and
    (w8,0) for stride 2 (d4 = 1: that pair reads columns j+1, j+2) else (0,w8), each [c][2]
    int16; x_lo..x_hi-1 the output columns whose columns j-1..j+1+d4 lie inside the row (none
    above stride 2)."""
    oc = taps.shape[1]
    d4 = int(win.stride_w == 2)
    z = np.zeros(oc, np.int64)
    p4 = (taps[8], z) if d4 else (z, taps[8])
    pairs = [(taps[0], taps[3]), (taps[1], taps[4]), (taps[2], taps[5]), (taps[6], taps[7]), p4]
    wl = np.stack([np.stack(pr, axis=1) for pr in pairs]).ravel().astype(np.int16)  # [pair][c][2]
    inside = [ox for ox in range(win.out_w)
              if ox * win.stride_w - win.pad_l >= 0
              and ox * win.stride_w - win.pad_l + 2 + d4 < win.in_w]
    # above stride 2 the kernel has no interior loop: every column checked (x_lo == x_hi)
    x_lo, x_hi = (inside[0], inside[-1] + 1) if inside and win.stride_w <= 2 else \
        (win.out_w, win.out_w)
    geom = X86Dw3Geom(batches, win.in_h, win.in_w, oc, win.out_h, win.out_w, win.stride_h, win.stride_w,
            win.pad_t, win.pad_l, d4, x_lo, x_hi)
    if "c64" in rq:  # ec_x86_depthwise_conv_2d_3x3_s8 reads c64 in channel order (its blocks start anywhere)
        rq = dict(rq, c64=rq["c64"].reshape(-1, 2, 4).transpose(0, 2, 1).ravel())
    # 16 zero pairs after the weights: the ZMM paths of 8 or 16 channels read 16 pairs of a tap
    wl = np.concatenate([wl, np.zeros(32, np.int16)])
    # zrow: a whole input row of input_zp bytes (what a row above or below the input reads) and
    # 64 more (the widest read starting inside it)
    zrow = np.full(win.in_w * oc + 64, in_zp, np.int8)
    consts = dict(w=wl, bias=int32_array(bias), zrow=zrow, **rq)
    plan = dw3_plan(oc, win.stride_w)
    return Kernel("x86/depthwise_conv_2d_3x3.c.j2", params=dict(geom=geom, plan=plan, **params),
                  consts=consts, scratch=0, variant="x86-dw3",
                  reason="AVX2: 3x3 row by row, input pairs (AVX-512: quads of 64 channels) "
                         "shared by neighbouring pixels")

