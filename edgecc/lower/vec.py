"""Lowering of CONV_2D and FULLY_CONNECTED to the x86 AVX2 (runtime_c/x86/) and AArch64
NEON (runtime_c/neon/) kernels, and the pieces the depthwise lowering (vec_dw.py) shares.

Owns: when those kernels apply (and why not, as the reason the portable kernel runs), the
folded biases, the per-channel requantization arrays, and the kernels' geometry records. The
tables edgecc/lower/x86.py and edgecc/lower/neon.py name `lower_conv_2d` / `lower_fc` with
their ISA; DEPTHWISE_CONV_2D's is in edgecc/lower/vec_dw.py, the quads in layout.py.

Layouts:
- conv / fully connected "quads": output channels padded to a multiple of 8 (`ocp`), taps
  (each pixel's tap segments padded to 4 bytes, or the depth padded to 4: `kp`); for each block
  of 8 channels, for each group of 4 taps, the 8 channels' 4 weights: 32 bytes a step. Zero
  padding adds zero products, so the kernels never need a tail. The x86 convolution packs
  blocks of 16 channels instead (pack_quads16: 64 bytes a step, one ZMM register; the last
  block has 8 channels when ocp % 16 == 8), with `x512_band` saying how its 512-bit kernel
  tiles the layer.

Input offset. The kernels' accumulators start from the bias with the input offset folded in:
bias_x = bias - input_zp * sum(w) for dot products on x itself (NEON; AVX2 without VNNI), and
for AVX2's VNNI path, which runs on u = x + 128 (VPDPBUSD is u8 x s8), bias_u = bias -
(input_zp + 128) * sum(w). Both are taken modulo 2^32: the kernels add in int32 with
wrap-around, which gives TFLite's exact accumulator whenever TFLite's own int32 accumulator does
not overflow.

Requantization: TFLite's MultiplyByQuantizedMultiplier exactly. NEON's SQRDMULH and SRSHL are
its arithmetic; AVX2 uses edgecc/numerics/fastrq.py's proven fast form when the proof holds, else the
two roundings step by step (see runtime_c/x86/common.h).
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import DType, Graph, Node
from edgecc.lower.climits import c_define
from edgecc.numerics import fastrq
from edgecc.lower.layout import int32_array, pack_quads, pack_quads16, round_up
from edgecc.lower.geom import VecConvGeom, X512Band
from edgecc.lower.table import Candidate, Refused
from edgecc.ops import Kernel, const, in_type, out_type
from edgecc.ops._conv_common import (act_range, channel_multipliers, conv_groups, conv_window,
                                     fc_unit_multipliers)
from edgecc.ops.fully_connected import fc_dims
from edgecc.numerics.fixed_point import INT32_MIN

# the x86 / NEON convolutions keep one offset per tap segment on the stack, and gather border
# pixels' 4 fields of kp bytes there
MAX_SEGMENTS = c_define("vec/common.h", "EC_VEC_MAX_SEGS")
MAX_KP = c_define("vec/common.h", "EC_VEC_MAX_KP")
# Per-channel arrays (bias, requantization) are padded to a multiple of 16 channels: a kernel's
# 16-channel code may then be specialised by the C compiler for any layer without reading
# (even provably dead) past an array's end, which gcc -Warray-bounds would report.
ARRAY_PAD = 16


# ZMM convolution (runtime_c/x86/conv_2d_x512.h): the input rows a row of output pixels
# reads, flipped to u8 and zero-point padded, in a stack band of at most this many bytes
X512_MAX_BAND = c_define("x86/x512.h", "EC_X512_MAX_BAND")
NO_BAND = X512Band(0, 0, 0, 0, 0, 0)  # P = 0: the 256-bit kernel runs


def x512_band(win, kh: int, kw: int, ic: int, oc: int, seg_p: int, seg_len: int, mode: int,
              pixels: int, p8: bool = False) -> X512Band:
    """ec_x512_band of a layer: [P, NC, linear chunk, band row bytes, band columns, slide], or P = 0
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
        return X512Band(p, nc, chunk, row, 0, 0) if row <= X512_MAX_BAND else NO_BAND
    cols = (max(win.out_w, p) - 1) * win.stride_w + (kw - 1) * win.dil_w + 1
    row = (cols * ic + slack + 63) // 64 * 64
    if kh * row > X512_MAX_BAND:
        return NO_BAND
    # a filter row's 3 taps are the next pixels' first: each input quad feeds 3 pixels
    slide = int(win.stride_w == 1 and win.dil_w == 1 and kw == 3 and ic % 4 == 0 and p in (16, 8))
    return X512Band(p, nc, 0, row, cols, slide)


def x512_kind(band, ocp: int, fast: int = 1) -> int:
    """The kind of a layer's 512-bit rows (runtime_c/x86/conv_2d_x512.h: EC_X512_KINDS and
    ec_x512_kind, the same order) from its band, padded channels ocp and requantization: 0-1 16
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


def x512_layer(g: Graph, n: Node, p8: bool = False) -> tuple[X512Band, int]:
    """A CONV_2D layer's 512-bit band (x512_band's p8) and its pixel stride in bytes."""
    win = conv_window(g, n)
    x = in_type(g, n)
    oc, kh, kw, ic = g.type(n.inputs[1]).shape
    segs, seg_len = conv_segments(kh, kw, ic, win.dil_w)
    seg_p = round_up(seg_len, 4)
    mode = pixel_mode(win, kh, kw, ic, seg_p, x.shape[0])
    pixels = x.shape[0] * win.out_h * win.out_w
    return x512_band(win, kh, kw, ic, oc, seg_p, seg_len, mode, pixels, p8), win.stride_w * ic


def requant_arrays(isa: str, mult: np.ndarray, shift: np.ndarray, ocp: int, rows: np.ndarray,
                   bias: np.ndarray, in_zp: int, out_zp: int, act: tuple[int, int]
                   ) -> tuple[dict[str, np.ndarray] | None, dict, str]:
    """The requantization constants of a layer padded to ocp channels: (consts, params, "") or
    (None, {}, why not).

    The fast path (runtime_c/x86/common.h, ec_avx2_rq) is used when edgecc/numerics/fastrq.py's
    fast_requant proves it exact from the exact accumulator range of every channel (rows: the
    weights [channels, taps] in TFLite's (x - input_zp) domain; bias unfolded); otherwise the
    kernels run TFLite's two roundings as they are (mult, left, right).
    ONNX numerics (float32 `mult`, edgecc/numerics/qlinear.py): the scales alone, padded (`scale`),
    and params onnx=1."""
    if np.asarray(mult).dtype.kind == "f":
        scale = np.zeros(round_up(ocp, ARRAY_PAD), np.float32)
        scale[:len(mult)] = mult
        return dict(scale=scale), dict(fast=0, L=0, onnx=1), ""
    mult, shift = np.asarray(mult, np.int64), np.asarray(shift, np.int64)
    n = len(mult)
    ocp = round_up(ocp, ARRAY_PAD)

    def pad(a, dtype=np.int32):
        out = np.zeros(ocp, dtype)
        out[:n] = a
        return out
    # NEON's SQRDMULH + SRSHL are TFLite's arithmetic itself: no fast path needed there
    fr = None
    if isa == "avx2":
        lo, hi = fastrq.acc_range(rows, bias, in_zp)
        fr, _ = fastrq.fast_requant(lo, hi, mult, shift, out_zp, *act)
    if fr is not None:
        c64 = pad(np.int64(1 << 31) + fr.n.astype(np.int64) * (1 << 32), np.int64)
        # per block of 8: even channels, then odd (the order of VPMULDQ's products)
        c64 = c64.reshape(-1, 4, 2).transpose(0, 2, 1).ravel()
        return (dict(mult=pad(fr.m), right=pad(fr.e), c64=c64),
                dict(fast=1, L=fr.L), "")
    if (mult <= INT32_MIN).any():
        return None, {}, "a multiplier of INT32_MIN (needs the saturating SRDHM): portable kernel"
    if (-shift > 31).any():
        return None, {}, "right shift above 31: portable kernel"
    return (dict(mult=pad(mult), left=pad(np.maximum(shift, 0)), right=pad(np.maximum(-shift, 0))),
            dict(fast=0, L=0), "")


def bias_of(g: Graph, n: Node, channels: int) -> np.ndarray:
    b = const(g, n, 2) if len(n.inputs) > 2 else None
    return np.zeros(channels, np.int64) if b is None else b.astype(np.int64).ravel()


def rq_params(g: Graph, n: Node) -> dict:
    lo, hi = act_range(g, n)
    return dict(out_zp=int(out_type(g, n).q.zero_point[0]), act_min=lo, act_max=hi)


def folded_biases(isa: str, bias: np.ndarray, rows: np.ndarray, in_zp: int, ocp: int
                  ) -> dict[str, np.ndarray]:
    """The bias with the input offset folded in, padded to ocp: bias_x for dot products on x
    itself (bias - input_zp * sum(w)); AVX2 also bias_u for its VNNI path on u = x + 128."""
    out = {}
    ocp = round_up(ocp, ARRAY_PAD)
    for key, off in (("bias_x", 0), ("bias_u", 128)) if isa == "avx2" else (("bias_x", 0),):
        b = np.zeros(ocp, np.int64)
        b[:len(bias)] = np.asarray(bias, np.int64) - (in_zp + off) * rows.sum(axis=1)
        out[key] = int32_array(b)
    return out


def int8_layer(g: Graph, n: Node) -> str:
    """Why this layer cannot take the int8 kernels ("" when it can)."""
    if not (in_type(g, n).dtype == DType.INT8 and out_type(g, n).dtype == DType.INT8
            and in_type(g, n, 1).dtype == DType.INT8):
        return "not int8 x int8 -> int8: portable kernel"
    return ""


def out_act(g: Graph, n: Node) -> tuple[int, tuple[int, int]]:
    return int(out_type(g, n).q.zero_point[0]), act_range(g, n)


def vec_kernel(isa: str, op: str, params: dict, consts: dict, scratch: int, variant: str,
               reason: str, c_variant: str) -> Kernel:
    """templates/<isa>/<op>_<c_variant>.c.j2 calls ec_<isa>_<op>_<c_variant>_s8."""
    return Kernel(f"{isa}/{op}_{c_variant}.c.j2", params=params, consts=consts, scratch=scratch,
                  variant=f"{isa}-{variant}", reason=reason)


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
    quads, ocp, kp = (pack_quads16 if isa == "avx2" else pack_quads)(seg_rows.reshape(oc, -1))
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
    band = x512_layer(g, n)[0] if isa == "avx2" else []
    consts = dict(w=quads, **folded_biases(isa, b, rows, in_zp, ocp), **rq)
    zmm = ""
    if band and band[0]:
        zmm = (f"; AVX-512 VNNI: tiles of {band[0]} pixels x {16 * band[1]} channels over "
               f"u8-flipped input rows on the stack" + (", 3 pixels a broadcast" if band[5] else ""))
    kind = x512_kind(band, ocp, rqp.get("fast", 0))
    return vec_kernel(isa, "conv_2d", dict(geom=geom, band=band, kind=kind, **rq_params(g, n), **rqp),
                      consts, 0,
                   "conv-4px", f"{isa.upper()}: 4 output pixels at a time, {segs} segments of "
                   f"{seg_len} taps (padded to {seg_p}) read in place or gathered at borders"
                   f"{zmm}", "4px")


def fc_applies(g: Graph, n: Node, target) -> str | None:
    """Why the x86 / NEON fully connected kernels cannot run n (None when they can)."""
    why = int8_layer(g, n)
    if why:
        return why
    if len(in_type(g, n, 1).q.scale) != 1:
        return "per-channel weights: the per-channel (-pc) entry"
    return None


def fc_pc_applies(g: Graph, n: Node, target) -> str | None:
    """Why the x86 / NEON per-channel fully connected kernels cannot run n (None when they can)."""
    if not in_type(g, n, 1).q.per_channel:
        return "per-tensor weights: the per-tensor entry"
    return int8_layer(g, n)


def per_channel_kernel(k: Kernel) -> Kernel:
    """A fully connected kernel built from each unit's own multiplier and shift, named so."""
    k.variant += "-pc"
    k.reason += "; per-channel weights: each unit's own requantization constants"
    return k


def lower_fc(g: Graph, n: Node, isa: str) -> Kernel:
    """FULLY_CONNECTED on AVX2 / NEON: the batch row once as u8 (AVX2) into scratch, then 32 units
    at a time over the quads."""
    batches, units, depth = fc_dims(g, n)
    w = const(g, n, 1).astype(np.int64)
    quads, ocp, kp = pack_quads(w)
    in_zp = int(in_type(g, n).q.zero_point[0])
    b = bias_of(g, n, units)
    rq, rqp, why = requant_arrays(isa, *fc_unit_multipliers(g, n, units), ocp, w, b, in_zp,
                                  *out_act(g, n))
    if rq is None:
        raise Refused(why)
    params = dict(batches=batches, depth=depth, kp=kp, units=units, ocp=ocp, **rq_params(g, n),
                  **rqp)
    consts = dict(w=quads, **folded_biases(isa, b, w, in_zp, ocp), **rq)
    return vec_kernel(isa, "fully_connected", params, consts, 0, "fc",
                   f"{isa.upper()}: {32 if isa == 'avx2' else 16} units at a time over quads of "
                   f"4 inputs", "quads")


def conv_entry(isa: str) -> Candidate:
    """The x86 / NEON convolution kernel as a table entry of `isa`."""
    return Candidate("CONV_2D", isa, "conv-4px", conv_applies,
                     lambda g, n, t: lower_conv_2d(g, n, isa))


def fc_entry(isa: str) -> Candidate:
    """The x86 / NEON fully connected kernel as a table entry of `isa`."""
    return Candidate("FULLY_CONNECTED", isa, "fc", fc_applies, lambda g, n, t: lower_fc(g, n, isa))


def fc_pc_entry(isa: str) -> Candidate:
    """The x86 / NEON fully connected kernel with per-channel weights as a table entry of `isa`."""
    return Candidate("FULLY_CONNECTED", isa, "fc-pc", fc_pc_applies,
                     lambda g, n, t: per_channel_kernel(lower_fc(g, n, isa)))
