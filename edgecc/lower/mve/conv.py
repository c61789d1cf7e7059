"""The Helium convolutions (runtime_c/mve/conv_2d.h, conv_2d_ring.h; templates/mve/conv_2d_*.c.j2).

Owns: when each applies and its constants, geometry records, scratch and streaming
declaration: the 4-channel blocks of 16-input chunks VMLADAVA walks over a pixel's receptive
field (read in place, one run per filter row, by byte gathers or copied with zero-point
padding), three pixels per weight pass in blocks of 2 channels for long fields, and the 3x3
convolution at stride 1 or 2 over a ring of padded input rows (`ring`: the kernel copies each
input row once into a ring of 3 rows padded with the input zero point, then computes blocks of 4
pixels x 2 output channels whose 6 input vectors per filter row and chunk serve all 3 taps: the
ResNet-style 3x3 layers with 16, 32, 64 channels, and their stride-2 ones). The epilogue
(TFLite's fast requantization or ONNX numerics) is edgecc/lower/mve/onnx.py's.
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import Graph, Node
from edgecc.lower.dsp.conv import conv_applies, direct_fields
from edgecc.lower.layout import record, round_up
from edgecc.lower.mve import onnx as mo
from edgecc.lower.mve.blocks import mve_blocks, mve_blocks2
from edgecc.ops import Kernel, const, in_type
from edgecc.ops._conv_common import conv_window

MveConvGeom = record("ec_mve_conv_geom", "pixels in_h in_w in_c out_h out_w out_c k_h k_w s_h s_w "
                     "d_h d_w pad_t pad_l kp mode rowp pad_val lo hi y0 y1 x0 x1")


def triple_streams(batches: int, out_h: int, out_w: int) -> tuple[int, ...] | None:
    """The pass order of ec_mve_conv_2d_2ch3px_s8 (Kernel.streams): it writes three pixels in
    raster order at a time, reading their fields as it goes, so a pass must hold whole
    triples: one row when the rows hold whole triples, else 3 rows (3 * out_w pixels). A
    triple that runs over into the next batch has no pass order: None."""
    if out_w % 3 == 0:
        return (1,)
    if batches > 1 and out_h * out_w % 3:
        return None
    return (3,)


def conv_kernel(n: Node, win, x, w: np.ndarray, rq, direct: bool) -> Kernel:
    """Helium (runtime_c/mve/conv_2d.h, ec_mve_conv_2d_4ch_s8): 4 output channels per pass, VMLADAVA on
    16-byte chunks of the receptive field. How interior pixels read their field (in place as
    one run, as one run per filter row, or by byte gathers) decides the weights' input order."""
    oc, kh, kw, ic = w.shape
    run = kw * ic
    flat = round_up(kh * run, 16)
    offsets = [fy * win.dil_h * win.in_w * ic + fx * win.dil_w * ic + c
               for fy in range(kh) for fx in range(kw) for c in range(ic)]
    offs = np.zeros(0, np.uint8)
    if direct:
        mode, rowp, how = 0, run, "pixels read in place"
    elif flat <= 64 and max(offsets) < 256 and not kh * round_up(run, 16) <= flat:
        mode, rowp, how = 2, run, "fields by byte gathers"
        offs = np.zeros(flat, np.int64)
        offs[:len(offsets)] = offsets
        offs = offs.astype(np.uint8)
    elif run % 16 == 0 and win.dil_w == 1 and (run == 16 or kh * run > 64):
        # (a field of at most 64 B is assembled from rows of at most 16 B: ec_mve_interior)
        mode, rowp, how = 1, run, "fields read in place, one run per filter row"
    elif run <= 16 and kh <= 4 and win.dil_w == 1:
        mode, rowp, how = 1, 16, "filter rows padded to 16 bytes, read in place"
    else:
        mode, rowp, how = 3, run, "fields copied with zero-point padding"
    rows = np.zeros((oc, kh, rowp), np.int64)
    rows[:, :, :run] = w.reshape(oc, kh, run)
    y0, y1, x0, x1 = win.interior()
    kp = round_up(kh * rowp, 16)
    # 1x1 unpadded fields of whole 16-byte chunks are read in place: no field is ever copied
    in_place = mode == 0 and ic % 16 == 0
    if kp > 64:
        # long fields: three pixels per weight pass, blocks of 2 channels
        # (runtime_c/mve/conv_2d.h, ec_mve_conv_2d_2ch3px_s8)
        b2 = mve_blocks2(rows.reshape(oc, -1), rq.folded, rq.fr)
        geom = MveConvGeom(x.shape[0] * win.out_h * win.out_w, win.in_h, win.in_w, ic, win.out_h,
                win.out_w, oc, kh, kw, win.stride_h, win.stride_w, win.dil_h, win.dil_w,
                win.pad_t, win.pad_l, b2.kp, mode, rowp, int(x.q.zero_point[0]), rq.fr.lo,
                rq.fr.hi, y0, y1, x0, x1)
        return Kernel("mve/conv_2d_2ch3px.c.j2",
                      params=dict(geom=geom, fn=mo.entry("ec_mve_conv_2d_2ch3px_s8", n)),
                      consts=dict(w=b2.w, rq=b2.rq, offs=offs if len(offs) else
                                  np.zeros(16, np.uint8)),
                      scratch=0 if in_place else 3 * (b2.kp + 64),
                      streams=triple_streams(x.shape[0], win.out_h, win.out_w),
                      variant=mo.tag(f"mve-conv-2ch3px-m{mode}", n),
                      reason=f"Helium: three pixels per pass over the weights, blocks of 2 "
                             f"output channels (6 VMLADAVA sums) over {b2.kp} taps, {how}; "
                             "per-channel requantization of 3 pixels")
    mb = mve_blocks(rows.reshape(oc, -1), rq.folded, rq.fr)
    geom = MveConvGeom(x.shape[0] * win.out_h * win.out_w, win.in_h, win.in_w, ic, win.out_h, win.out_w,
            oc, kh, kw, win.stride_h, win.stride_w, win.dil_h, win.dil_w, win.pad_t, win.pad_l,
            mb.kp, mode, rowp, int(x.q.zero_point[0]), rq.fr.lo, rq.fr.hi, y0, y1, x0, x1)
    return Kernel("mve/conv_2d_4ch.c.j2",
                  params=dict(geom=geom, fn=mo.entry("ec_mve_conv_2d_4ch_s8", n)),
                  consts=dict(w=mb.w, bias=mb.bias, rq=mb.rq, offs=offs if len(offs) else
                              np.zeros(16, np.uint8)),
                  scratch=0 if in_place else mb.kp + 64, streams=(1,),
                  variant=mo.tag(f"mve-conv-4ch-m{mode}", n),
                  reason=f"Helium: 4 output channels per pass, VMLADAVA over {mb.kp} taps in "
                         f"16-byte chunks, {how}; vector requantization")


def lower_conv(g: Graph, n: Node, target) -> Kernel:
    """The receptive fields of the DSP convolution against 4 output channels at a time."""
    win = conv_window(g, n)
    w = const(g, n, 1).astype(np.int64)
    rq = mo.conv_rq(g, n, w.reshape(w.shape[0], -1))
    return conv_kernel(n, win, in_type(g, n), w, rq, direct_fields(win))


# ------------------------------------------------------------- 3x3 over a ring of rows

RingGeom = record("ec_mve_conv_ring_geom",
                  "batches in_h in_w in_c out_h out_w out_c s pad_t pad_l pw pad_val lo hi")

# in_c / 16 by stride: the row segment's immediate offsets (16 * (6 or 9 vectors x in_c / 16))
# end at 508 bytes (VLDRW)
MAX_CHUNKS = {1: 5, 2: 3}
RING_ROWS = 3   # the filter's rows: the ring holds one input row per filter row
STREAMS = (1, 0, 1)  # whole output rows, each pass reads (copies) all its input first


def ring_width(win) -> int:
    """Ring row width in pixels: the last block of 4 pixels' windows, and the input."""
    return max(win.stride_w * (round_up(win.out_w, 4) - 1) + 3, win.pad_l + win.in_w)


def ring_applies(g: Graph, n: Node, target) -> str | None:
    """3x3 filters at stride 1 (in_c a multiple of 16 up to 80) or 2 (up to 48), undilated,
    padding of at most 2."""
    why = conv_applies(g, n, target)
    if why:
        return why
    win = conv_window(g, n)
    ic = in_type(g, n).shape[3]
    if (win.k_h, win.k_w) != (3, 3):
        return "not a 3x3 filter"
    if (win.dil_h, win.dil_w) != (1, 1):
        return "dilated"
    if win.stride_h != win.stride_w or win.stride_h not in MAX_CHUNKS:
        return "strides other than 1x1 or 2x2"
    top = 16 * MAX_CHUNKS[win.stride_h]
    if ic % 16 or ic > top:
        return f"input channels not a multiple of 16 up to {top} at this stride"
    if not (0 <= win.pad_t <= 2 and 0 <= win.pad_l <= 2):
        return "padding over 2"
    return None


def ring_stream(w: np.ndarray, recs: np.ndarray) -> np.ndarray:
    """[oc, 3, 3, ic] weights and per-channel records [oc (padded to even), 4] -> one int32
    stream: per channel pair its weights [row][chunk][tap][channel of the pair][16] (int8), then
    the pair's 2 records."""
    oc, kh, kw, ic = w.shape
    ocp = round_up(oc, 2)
    wp = np.zeros((ocp, kh, kw, ic), np.int64)
    wp[:oc] = w
    wp = wp.reshape(ocp // 2, 2, kh, kw, ic // 16, 16).transpose(0, 2, 4, 3, 1, 5)
    wb = np.ascontiguousarray(wp).reshape(ocp // 2, -1).astype(np.int8).view(np.int32)
    rb = np.asarray(recs, np.int64).reshape(ocp // 2, 8).astype(np.int32)
    return np.concatenate([wb, rb], axis=1).ravel()


def lower_ring(g: Graph, n: Node, target) -> Kernel:
    """The kernel for node n; per channel the 2-channel kernel's records [bias, m, N, -e]
    (mve_blocks2)."""
    win = conv_window(g, n)
    x = in_type(g, n)
    w = const(g, n, 1).astype(np.int64)
    oc, ic = w.shape[0], w.shape[3]
    rows = w.reshape(oc, -1)
    rq = mo.conv_rq(g, n, rows)
    q = ic // 16
    pw = ring_width(win)
    s = win.stride_h
    geom = RingGeom(x.shape[0], win.in_h, win.in_w, ic, win.out_h, win.out_w, oc, s, win.pad_t,
                    win.pad_l, pw, int(x.q.zero_point[0]), rq.fr.lo, rq.fr.hi)
    name = f"ring{q}" + ("s2" if s == 2 else "")
    return Kernel("mve/conv_2d_ring.c.j2",
                  params=dict(geom=geom, fn=mo.entry(f"ec_mve_conv_2d_{name}_s8", n)),
                  consts=dict(w=ring_stream(w, mve_blocks2(rows, rq.folded, rq.fr).rq)),
                  scratch=RING_ROWS * pw * ic, streams=STREAMS,
                  variant=mo.tag("mve-conv-ring", n),
                  reason=f"Helium: 3x3 stride {s} over a ring of {RING_ROWS} zero-point-padded "
                         f"input rows; blocks of 4 pixels x 2 output channels share each input "
                         f"vector between the 3 taps ({q} chunk(s) of 16 inputs a tap)")
