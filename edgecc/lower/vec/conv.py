"""CONV_2D on the x86 (runtime_c/x86/conv_2d.h, conv_2d_x512.h) and AArch64 NEON
(runtime_c/neon/conv_2d.h) kernels: blocks of 4 output pixels over the quads.

Owns: when those kernels apply (and why not, as the reason the portable kernel runs), their
geometry records, the tap segments and pixel modes, and on x86 the 512-bit band a layer's tiles
take (x512_band, x512_kind).

Layout "quads": output channels padded to a multiple of 8 (`ocp`), taps (each pixel's tap
segments padded to 4 bytes: `kp`); for each block of 8 channels, for each group of 4 taps, the
8 channels' 4 weights: 32 bytes a step. Zero padding adds zero products, so the kernels never
need a tail. The x86 convolution packs blocks of 16 channels instead (pack_quads16: 64 bytes a
step, one ZMM register; the last block has 8 channels when ocp % 16 == 8), with `x512_band`
saying how its 512-bit kernel tiles the layer.
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import Graph, Node
from edgecc.lower.climits import c_define
from edgecc.lower.layout import pack_quads, pack_quads16, record, round_up
from edgecc.lower.table import Refused
from edgecc.lower.vec.common import (LABEL, bias_of, folded_biases, int8_layer, out_act,
                                     requant_arrays, rq_params, vec_kernel)
from edgecc.ops import Kernel, const, in_type
from edgecc.ops._conv_common import channel_multipliers, conv_groups, conv_window

VecConvGeom = record("ec_vec_conv_geom", "pixels in_h in_w in_c out_h out_w out_c k_h k_w "
                     "stride_h stride_w dil_h dil_w pad_t pad_l segs seg_len seg_p kp ocp in_zp "
                     "batches mode")
X86Band512 = record("ec_x86_band_512", "P NC chunk row cols slide")

# the x86 / NEON convolutions keep one offset per tap segment on the stack, and gather border
# pixels' 4 fields of kp bytes there
MAX_SEGMENTS = c_define("vec/common.h", "EC_VEC_MAX_SEGS")


MAX_KP = c_define("vec/common.h", "EC_VEC_MAX_KP")


# ZMM convolution (runtime_c/x86/conv_2d_x512.h): the input rows a row of output pixels
# reads, flipped to u8 and zero-point padded, in a stack band of at most this many bytes
X512_MAX_BAND = c_define("x86/x512.h", "EC_X86_MAX_BAND_512")


NO_BAND = X86Band512(0, 0, 0, 0, 0, 0)  # P = 0: the 256-bit kernel runs


def x512_band(win, kh: int, kw: int, ic: int, oc: int, seg_p: int, seg_len: int, mode: int,
              pixels: int, p8: bool = False) -> X86Band512:
    """ec_x86_band_512 of a layer: [P, NC, linear chunk, band row bytes, band columns, slide], or P = 0
    when the band does not fit (the 256-bit kernel runs then). P output pixels x NC blocks of 16
    channels per tile (16 accumulators): few channels take more pixels at a time. p8: 8 pixels x
    32 channels where 4 x 64 would run (a model whose other layers have that tile anyway)."""
    nb = round_up(oc, 8) // 16
    p, nc = (16, 1) if nb <= 1 else ((8, 2) if nb < 4 or p8 else (4, 4))
    slack = seg_p - seg_len + 4 if win.dil_w == 1 else seg_p - ic + 4
    if mode == 2:  # 1x1 stride 1 unpadded: chunks of consecutive pixels, one band row
        chunk = max(1, min(pixels, (X512_MAX_BAND - 64) // ic - p))
        if p <= chunk < pixels:  # whole tiles in every chunk but the last
            chunk = chunk // p * p
        row = (max(chunk, p) * ic + slack + 63) // 64 * 64
        return X86Band512(p, nc, chunk, row, 0, 0) if row <= X512_MAX_BAND else NO_BAND
    cols = (max(win.out_w, p) - 1) * win.stride_w + (kw - 1) * win.dil_w + 1
    row = (cols * ic + slack + 63) // 64 * 64
    if kh * row > X512_MAX_BAND:
        return NO_BAND
    # a filter row's 3 taps are the next pixels' first: each input quad feeds 3 pixels
    slide = int(win.stride_w == 1 and win.dil_w == 1 and kw == 3 and ic % 4 == 0 and p in (16, 8))
    return X86Band512(p, nc, 0, row, cols, slide)


def x512_kind(band, ocp: int, fast: int = 1) -> int:
    """The kind of a layer's 512-bit rows (runtime_c/x86/conv_2d_x512.h: EC_X86_KINDS_512 and
    ec_x86_kind_512, the same order) from its band, padded channels ocp and requantization: 0-1 16
    pixels x 16 channels (sliding 3 taps, or not), 2-5 8 x 32 (sliding or not; without, then
    with a last block), 6-7 4 x 64 (without, with a last block), with the fast requantization;
    8-15 the same with the exact one (fast = 0); 16 is no band (the 256-bit kernel). The pixel
    stride is a run-time argument. The call names its kind, so a model carries only the tiles
    and output stages its kinds run."""
    if not band or not band[0]:
        return 16
    p, slide = band[0], band[5]
    x = 0 if fast else 8
    if p == 16:
        return x + (0 if slide else 1)
    if p == 8:
        return x + (2 if slide else 4) + int(ocp % 32 != 0)
    return x + 6 + int(ocp % 64 != 0)


def x512_layer(g: Graph, n: Node, p8: bool = False) -> tuple[X86Band512, int]:
    """A CONV_2D layer's 512-bit band (x512_band's p8) and its pixel stride in bytes."""
    win = conv_window(g, n)
    x = in_type(g, n)
    oc, kh, kw, ic = g.type(n.inputs[1]).shape
    segs, seg_len = conv_segments(kh, kw, ic, win.dil_w)
    seg_p = round_up(seg_len, 4)
    mode = pixel_mode(win, kh, kw, ic, seg_p, x.shape[0])
    pixels = x.shape[0] * win.out_h * win.out_w
    return x512_band(win, kh, kw, ic, oc, seg_p, seg_len, mode, pixels, p8), win.stride_w * ic


def conv_segments(kh: int, kw: int, ic: int, dil_w: int) -> tuple[int, int]:
    """(segments, bytes per segment) of one pixel's taps: a filter row's k_w * in_c contiguous
    input bytes when dil_w == 1, else each tap's in_c bytes (runtime_c/x86/conv_2d.h)."""
    return (kh, kw * ic) if dil_w == 1 else (kh * kw, ic)


def pixel_mode(win, kh: int, kw: int, ic: int, seg_p: int, batches: int) -> int:
    """runtime_c/vec/common.h's EC_VEC_*: 2 (LINEAR) for a 1x1 stride-1 unpadded layer whose
    segments need no padding bytes, 1 (IN_PLACE) when every pixel's window lies inside the input
    and the last pixel's padded last segment still ends inside the input tensor, else 0."""
    inside = (win.pad_t == 0 and win.pad_l == 0
              and (win.out_h - 1) * win.stride_h + (kh - 1) * win.dil_h < win.in_h
              and (win.out_w - 1) * win.stride_w + (kw - 1) * win.dil_w < win.in_w)
    if not inside:
        return 0
    if kh == kw == 1 and win.stride_h == win.stride_w == 1 and seg_p == ic \
            and win.out_h == win.in_h and win.out_w == win.in_w:
        return 2
    segs, seg_len = conv_segments(kh, kw, ic, win.dil_w)
    last_seg = ((kh - 1) * win.dil_h * win.in_w + ((kw - 1) * win.dil_w if win.dil_w != 1 else 0)) * ic
    last = (((batches - 1) * win.in_h + (win.out_h - 1) * win.stride_h) * win.in_w
            + (win.out_w - 1) * win.stride_w) * ic
    return 1 if last + last_seg + seg_p <= batches * win.in_h * win.in_w * ic else 0


def conv_applies(g: Graph, n: Node, target) -> str | None:
    """Why the x86 / NEON convolution kernels cannot run n (None when they can)."""
    why = int8_layer(g, n)
    if why:
        return why
    if conv_groups(g, n) != 1:
        return "grouped convolution: portable kernel"
    return None


def lower_conv_2d(g: Graph, n: Node, isa: str) -> Kernel:
    """CONV_2D on AVX2 / NEON: blocks of 4 output pixels x 16 output channels over the quads;
    each pixel's taps as segments padded to 4 bytes, read in place inside the image."""
    win = conv_window(g, n)
    x = in_type(g, n)
    w = const(g, n, 1).astype(np.int64)
    oc, kh, kw, ic = w.shape
    segs, seg_len = conv_segments(kh, kw, ic, win.dil_w)
    if segs > MAX_SEGMENTS:
        raise Refused(f"more than {MAX_SEGMENTS} tap segments: portable kernel")
    seg_p = round_up(seg_len, 4)
    rows = w.reshape(oc, -1)
    seg_rows = np.zeros((oc, segs, seg_p), np.int64)  # each segment zero-padded to seg_p taps
    seg_rows[:, :, :seg_len] = rows.reshape(oc, segs, seg_len)
    m, s = channel_multipliers(g, n, oc)
    quads, ocp, kp = (pack_quads16 if isa == "x86" else pack_quads)(seg_rows.reshape(oc, -1))
    in_zp = int(x.q.zero_point[0])
    b = bias_of(g, n, oc)
    rq, rqp, why = requant_arrays(isa, m, s, ocp, rows, b, in_zp, *out_act(g, n))
    if rq is None:
        raise Refused(why)
    if kp > MAX_KP:
        raise Refused(f"{kp} taps per pixel (above {MAX_KP}): portable kernel")
    mode = pixel_mode(win, kh, kw, ic, seg_p, x.shape[0])
    pixels = x.shape[0] * win.out_h * win.out_w
    geom = VecConvGeom(pixels, win.in_h, win.in_w, ic, win.out_h, win.out_w, oc,
            kh, kw, win.stride_h, win.stride_w, win.dil_h, win.dil_w, win.pad_t, win.pad_l,
            segs, seg_len, seg_p, kp, ocp, in_zp, x.shape[0], mode)
    band = x512_layer(g, n)[0] if isa == "x86" else []
    consts = dict(w=quads, **folded_biases(isa, b, rows, in_zp, ocp), **rq)
    zmm = ""
    if band and band[0]:
        zmm = (f"; AVX-512 VNNI: tiles of {band[0]} pixels x {16 * band[1]} channels over "
               f"u8-flipped input rows on the stack" + (", 3 pixels a broadcast" if band[5] else ""))
    kind = x512_kind(band, ocp, rqp.get("fast", 0))
    return vec_kernel(isa, "conv_2d", dict(geom=geom, band=band, kind=kind, **rq_params(g, n), **rqp),
                      consts, 0,
                   "conv-4px", f"{LABEL[isa]}: 4 output pixels at a time, {segs} segments of "
                   f"{seg_len} taps (padded to {seg_p}) read in place or gathered at borders"
                   f"{zmm}", "4px")
