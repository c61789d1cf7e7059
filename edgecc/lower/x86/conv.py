"""CONV_2D on x86: the general 4-pixel kernel (runtime_c/x86/conv_2d.h, conv_2d_x512.h; its
lowering is the one x86 shares with NEON, edgecc/lower/vec/conv.py) and the kernel for layers with
few input channels (in_c <= 4, typically a model's first layer), ec_x86_conv_2d_first_s8
(runtime_c/x86/conv_2d_first.h).

Owns: when the few-channel kernel applies (and why not: then ec_x86_conv_2d_4px_s8 runs), its
geometry record, and its two weight layouts. The table (edgecc/lower/x86/table.py) tries it
first.

The kernel copies output rows' patches (k_h * k_w * in_c taps per pixel, in the filter's own
(fy, fx, c) order, padded with zero weights to kpp, a multiple of 4, or of 8 when there is a
block of 8) into a stack buffer
and multiplies them densely by the weights, so no tap is wasted on per-row padding (3x3x3: 27
taps -> 28, where ec_x86_conv_2d_avx2 reads 3 x 12). Output channels come in blocks of 16, the last
one a block of 8 when out_c % 16 is 1..8. Layouts, per block of B channels (16 or 8):
- wq (VPDPBUSD): block of 16: [kpp/4][16][4] int8: each step of 4 taps, the 16 channels' 4
  weights; block of 8: [kpp/8][8][8]: each step of 8 taps, the 8 channels' 8 weights (two
  quads a channel, against one 8-byte broadcast of the pixel's taps);
the plain AVX2 path (VPMADDWD) widens each block to int16 tap pairs on the stack itself, so
the weights are in flash once for every level (kpp at most MAX_KPP: the stack buffer).
Biases (bias_u / bias_x, the input offset folded in) and the requantization constants are
edgecc/lower/vec/common.py's, so the kernel shares ec_x86_conv_2d_4px_s8's arithmetic exactly.
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import Graph, Node
from edgecc.lower.climits import c_define
from edgecc.lower.layout import record, round_up
from edgecc.lower.table import Refused
from edgecc.lower.vec.common import bias_of, folded_biases, out_act, requant_arrays, rq_params
from edgecc.lower.vec.conv import conv_applies, lower_conv_2d
from edgecc.ops import Kernel, const, in_type
from edgecc.ops._conv_common import channel_multipliers, conv_window

X86FirstGeom = record("ec_x86_first_geom", "batches in_h in_w in_c out_h out_w out_c k_h k_w "
                      "stride_h stride_w dil_h dil_w pad_t pad_l seg kpp nb16 tail8 row_cols "
                      "row_b band in_zp")

MAX_IN_C = 4        # the layers this kernel is for: a few channels, short runs per filter row
# (band * out_w + 8) * kpp, and a band's input rows x row_b: the kernel's stack buffers
MAX_COL = c_define("x86/conv_2d_first_common.h", "EC_X86_FIRST_MAX_COL")
MAX_ROWS = c_define("x86/conv_2d_first_common.h", "EC_X86_FIRST_MAX_ROWS")
MAX_KPP = c_define("x86/conv_2d_first_common.h", "EC_X86_FIRST_MAX_KPP")
ROW_SLACK = 16      # a padded row's bytes past its last column: 16-byte moves may read them


def channel_blocks(oc: int) -> tuple[int, int]:
    """(blocks of 16 channels, 1 if a last block of 8 follows): out_c % 16 in 1..8 ends with a
    block of 8, 9..15 with one more block of 16."""
    nb16, rem = divmod(oc, 16)
    if rem > 8:
        return nb16 + 1, 0
    return nb16, int(rem > 0)


def pack_first(rows: np.ndarray, kpp: int) -> tuple[np.ndarray, int]:
    """[oc, K] weights -> (wq int8, ocp): see the module docstring."""
    oc, k = rows.shape
    nb16, tail8 = channel_blocks(oc)
    ocp = 16 * nb16 + 8 * tail8
    w = np.zeros((ocp, kpp), np.int64)
    w[:oc, :k] = rows
    wq = []
    c = 0
    for size in [16] * nb16 + [8] * tail8:
        blk = w[c:c + size]  # [B, kpp]
        group = 4 if size == 16 else 8  # the block of 8 takes each channel's 8 taps a step
        wq.append(blk.reshape(size, kpp // group, group).transpose(1, 0, 2).ravel())
        c += size
    return np.concatenate(wq).astype(np.int8), ocp


def first_applies(g: Graph, n: Node, target) -> str | None:
    """Why ec_x86_conv_first cannot run n (None when it can)."""
    why = conv_applies(g, n, target)
    if why:
        return why
    ic = in_type(g, n, 1).shape[3]
    if ic > MAX_IN_C:
        return f"{ic} input channels (above {MAX_IN_C})"
    return None


def lower_conv_2d_first(g: Graph, n: Node, target) -> Kernel:
    """CONV_2D with in_c <= 4 on AVX2, or Refused -- the table then takes the general kernel
    (lower_conv)."""
    isa = "x86"
    x = in_type(g, n)
    w = const(g, n, 1).astype(np.int64)
    oc, kh, kw, ic = w.shape
    win = conv_window(g, n)
    k = kh * kw * ic
    kpp = round_up(k, 8 if channel_blocks(oc)[1] else 4)
    if kpp > MAX_KPP:
        raise Refused(f"a patch of {kpp} taps (above {MAX_KPP}: the int16 weights of a block "
                      f"of 16 channels on the stack)")
    seg = kw * ic if win.dil_w == 1 else ic
    row_cols = (win.out_w - 1) * win.stride_w + (kw - 1) * win.dil_w + 1
    row_b = row_cols * ic + ROW_SLACK
    # a band: output rows whose patches, and whose padded input rows, fit the stack buffers
    band = max(0, min(win.out_h, (MAX_COL // kpp - 8) // win.out_w))
    while band and ((band - 1) * win.stride_h + (kh - 1) * win.dil_h + 1) * row_b > MAX_ROWS:
        band -= 1
    if band == 0:
        raise Refused(f"an output row's {win.out_w} x {kpp} patch bytes or its {kh} padded input "
                      f"rows of {row_b} bytes exceed the stack buffers")
    rows = w.reshape(oc, k)
    m, s = channel_multipliers(g, n, oc)
    in_zp = int(x.q.zero_point[0])
    b = bias_of(g, n, oc)
    wq, ocp = pack_first(rows, kpp)
    rq, rqp, why = requant_arrays(isa, m, s, ocp, rows, b, in_zp, *out_act(g, n))
    if rq is None:
        raise Refused(why)
    nb16, tail8 = channel_blocks(oc)
    geom = X86FirstGeom(x.shape[0], win.in_h, win.in_w, ic, win.out_h, win.out_w, oc, kh, kw, win.stride_h,
            win.stride_w, win.dil_h, win.dil_w, win.pad_t, win.pad_l, seg, kpp, nb16, tail8,
            row_cols, row_b, band, in_zp)
    consts = dict(wq=wq, **folded_biases(isa, b, rows, in_zp, ocp), **rq)
    blocks = " + ".join(([f"{nb16} x 16"] if nb16 else []) + (["8"] if tail8 else []))
    return Kernel("x86/conv_2d_first.c.j2", params=dict(geom=geom, **rq_params(g, n), **rqp),
                  consts=consts, scratch=0, variant="x86-conv-first",
                  reason=f"AVX2, {ic} input channel(s): each output row's patches "
                         f"({k} taps padded to {kpp}) copied once, zero-point padded, to the "
                         f"stack, then a dense product over channel blocks of {blocks}")


def lower_conv(g: Graph, n: Node, target) -> Kernel:
    """The general x86 convolution: blocks of 4 output pixels x 16 output channels over the
    quads (edgecc/lower/vec/conv.py); AVX-512 tiles where the band fits."""
    return lower_conv_2d(g, n, "x86")
