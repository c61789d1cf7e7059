"""The Helium (MVE, Cortex-M55) kernel table. Tried before the DSP table (edgecc/lower/dsp.py).

Owns: which Helium kernels exist and in which order they are tried, when each applies, and its
constants: the 4-channel (and 2-channel, 3-pixel) blocks of 16-input chunks the VMLADAVA
kernels walk with their requantization records, the depthwise byte-gather offsets, and the
ADD / pool entries (which share the DSP arithmetic: dsp.add_tables, dsp.pool_kernel). The
C is runtime_c/mve/, the calls templates/mve/.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from edgecc.ir import Graph, Node
from edgecc.lower import dsp
from edgecc.lower import mve_onnx as mo
from edgecc.lower import mve_ring
from edgecc.numerics.fastrq import FastRequant
from edgecc.lower.layout import interleave_rows, pad_to, round_up
from edgecc.lower.geom import MveConvGeom, MveDwGeom, MveFcGeom
from edgecc.lower.table import Candidate, Refused
from edgecc.ops import Kernel, const, in_type
from edgecc.ops._conv_common import conv_window
from edgecc.ops.fully_connected import fc_dims

ISA = "mve"


@dataclass
class MveBlocks:
    """Weights, biases and requantization records in the layout of mve/common.h's ec_mve_row."""

    kp: int
    w: np.ndarray      # int8 [ocp/4][kp/16][4][16]
    bias: np.ndarray   # int32 [ocp]
    rq: np.ndarray     # int32 per 4 channels: [m x4][N x4][-e x4]


def mve_records(fr: FastRequant, ocp: int) -> np.ndarray:
    """Per 4 channels [m x4][N x4][-e x4] (the MVE sign convention, N_raw); padded channels
    get zeros."""
    parts = [pad_to(a, ocp).reshape(-1, 4) for a in (fr.m, fr.n_raw, -fr.e.astype(np.int64))]
    return np.concatenate(parts, axis=1).ravel().astype(np.int32)


def mve_blocks(w_rows: np.ndarray, folded: np.ndarray, fr: FastRequant) -> MveBlocks:
    """[oc, K] weights -> 4-channel blocks of 16-input chunks (K padded to 16, oc to 4)."""
    oc, k = np.asarray(w_rows).shape
    kp, ocp = round_up(max(k, 1), 16), round_up(oc, 4)
    w = np.zeros((ocp, kp), np.int64)
    w[:oc, :k] = w_rows
    return MveBlocks(kp, interleave_rows(w, 4, 16).astype(np.int8),
                     pad_to(folded, ocp).astype(np.int32), mve_records(fr, ocp))


def mve_blocks2(w_rows: np.ndarray, folded: np.ndarray, fr: FastRequant) -> MveBlocks:
    """[oc, K] -> blocks of 2 channels of 16-input chunks (mve/conv_2d.h, ec_mve_conv_2d_2ch3px_s8):
    weights [blocks][K/16][2][16]; per channel the record [bias, m, N_raw, -e]."""
    oc, k = np.asarray(w_rows).shape
    kp, ocp = round_up(max(k, 1), 16), round_up(oc, 2)
    w = np.zeros((ocp, kp), np.int64)
    w[:oc, :k] = w_rows
    recs = np.stack([pad_to(a, ocp) for a in (folded, fr.m, fr.n_raw, -fr.e.astype(np.int64))],
                    axis=1)
    return MveBlocks(kp, interleave_rows(w, 2, 16).astype(np.int8), np.zeros(0, np.int32),
                     recs.ravel().astype(np.int32))


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


def _conv_kernel(n: Node, win, x, w: np.ndarray, rq, direct: bool) -> Kernel:
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
    return _conv_kernel(n, win, in_type(g, n), w, rq, dsp.direct_fields(win))


def lower_dw_as_conv(g: Graph, n: Node, target) -> Kernel:
    """One input channel, a filter over 8 rows: the convolution kernel on filter [oc, kh, kw, 1]."""
    win = conv_window(g, n)
    rows = dsp.dw_rows(g, n)
    rq = mo.conv_rq(g, n, rows)
    return _conv_kernel(n, win, in_type(g, n), rows.reshape(-1, win.k_h, win.k_w, 1), rq, False)


def dw_one_channel_applies(g: Graph, n: Node, target) -> str | None:
    """One input channel: the layer IS a CONV_2D with in_c = 1 and out_c = the depth multiplier
    (person_detect's first layer), whose fields of at most 64 bytes stay in registers across
    all output channels (the depthwise gather walks its one plane once per 4 channels)."""
    why = dsp.dw_common(g, n, target)
    if why:
        return why
    if in_type(g, n).shape[3] != 1:
        return "more than one input channel"
    return None


def dw_applies(g: Graph, n: Node, target) -> str | None:
    """ec_mve_depthwise_conv_2d_gather_s8 takes filters of at most 16 taps (bigger ones: the DSP kernel)."""
    why = dsp.dw_common(g, n, target)
    if why:
        return why
    win = conv_window(g, n)
    if win.k_h * win.k_w > 16:
        return "filter over 16 taps"
    return None


def lower_dw(g: Graph, n: Node, target) -> Kernel:
    """Helium (runtime_c/mve/depthwise_conv_2d.h, ec_mve_depthwise_conv_2d_gather_s8): a channel's window as one byte gather over
    int8 channel planes, or Refused (planes too wide for byte gather offsets)."""
    win = conv_window(g, n)
    x = in_type(g, n)
    w = const(g, n, 1).astype(np.int64)[0]  # [kh, kw, oc]
    kh, kw, oc = w.shape
    ic = x.shape[3]
    rq = mo.conv_rq(g, n, dsp.dw_rows(g, n))
    # plane row: input columns at pad_l.., wide enough for the last output's window
    need = max(win.pad_l + win.in_w, (win.out_w - 1) * win.stride_w + (kw - 1) * win.dil_w + 1)
    wp = need
    offs = np.zeros((kh, 16), np.int64)
    for ph in range(kh):
        for fy in range(kh):
            for fx in range(kw):
                offs[ph, fy * kw + fx] = ((ph + fy * win.dil_h) % kh) * wp + fx * win.dil_w
    if win.dil_h != 1 and kh > 1 or offs.max() > 255:
        # (dilated rows would need more ring slots than filter rows)
        raise Refused("dilated rows or planes too wide for byte gather offsets")
    ocp = round_up(oc, 4)
    w16 = np.zeros((ocp, 16), np.int64)
    w16[:oc, :kh * kw] = w.transpose(2, 0, 1).reshape(oc, -1)

    # per 4 channels: [bias x4][m x4][N x4][-e x4], one pointer for the kernel's 4 loads
    rqs = np.concatenate([pad_to(rq.folded, ocp).reshape(-1, 4),
                          mve_records(rq.fr, ocp).reshape(-1, 12)], axis=1)
    geom = MveDwGeom(x.shape[0], win.in_h, win.in_w, ic, win.out_h, win.out_w, oc, oc // ic, kh,
            win.stride_h, win.stride_w, win.pad_t, win.pad_l, wp, int(x.q.zero_point[0]),
            rq.fr.lo, rq.fr.hi)
    return Kernel("mve/depthwise_conv_2d_gather.c.j2",
                  params=dict(geom=geom, fn=mo.entry("ec_mve_depthwise_conv_2d_gather_s8", n)),
                  consts=dict(w16=w16.ravel().astype(np.int8), rq=rqs.ravel().astype(np.int32),
                              offs=offs.ravel().astype(np.uint8)),
                  scratch=ic * kh * wp, variant=mo.tag("mve-dw-gather", n), streams=(1,),
                  reason=f"Helium: {kh}x{kw} window of a channel as one byte gather over int8 "
                         "channel planes, one VMLADAVA per output, 4 channels per requantization")


def _fc_kernel(g: Graph, n: Node, per_channel: bool) -> Kernel:
    """4 units per pass, VMLADAVA on 16-byte chunks (mve/fully_connected.h): per-tensor weights
    one requantization record for every block, per-channel weights every block's own record."""
    batches, units, depth = fc_dims(g, n)
    per_channel = per_channel or n.numerics.qlinear  # (ONNX numerics: a scale per unit)
    w = const(g, n, 1).astype(np.int64)
    rq = mo.fc_rq(g, n, w, per_channel)
    fr = rq.fr
    mb = mve_blocks(w, rq.folded, fr)
    geom = MveFcGeom(batches, depth, mb.kp, units, fr.lo, fr.hi)
    scratch = 0 if depth == mb.kp or mb.kp <= 64 else mb.kp  # (short rows: a stack copy)
    if per_channel:
        return Kernel("mve/fully_connected_4u_pc.c.j2",
                      params=dict(geom=geom, fn=mo.entry("ec_mve_fully_connected_4u_pc_s8", n)),
                      consts=dict(w=mb.w, bias=mb.bias, rq=mb.rq), scratch=scratch,
                      variant=mo.tag("mve-fc-4u-pc", n),
                      reason="Helium: 4 units per pass, VMLADAVA on 16-byte chunks, per-channel "
                             "weights: each 4 units' own requantization record")
    rec = mb.rq[:12]  # per-tensor: one requantization record for every block
    return Kernel("mve/fully_connected_4u.c.j2", params=dict(geom=geom),
                  consts=dict(w=mb.w, bias=mb.bias, rq=rec), scratch=scratch, variant="mve-fc-4u",
                  reason="Helium: 4 units per pass, VMLADAVA on 16-byte chunks, vector "
                         "requantization")


def lower_fc(g: Graph, n: Node, target) -> Kernel:
    """FULLY_CONNECTED with per-tensor weights: one requantization record for every block."""
    return _fc_kernel(g, n, per_channel=False)


def lower_fc_pc(g: Graph, n: Node, target) -> Kernel:
    """FULLY_CONNECTED with per-channel weights (ec_mve_fully_connected_4u_pc_s8): every 4 units'
    own requantization record, the per-channel epilogue of the Helium convolutions."""
    return _fc_kernel(g, n, per_channel=True)


def lower_add(g: Graph, n: Node, target) -> Kernel:
    """The DSP ADD's tables (edgecc/lower/dsp.py add_tables), read by word gathers."""
    geom, ta, tb = dsp.add_tables(g, n)
    return Kernel("mve/add_lut.c.j2", params=dict(geom=geom), consts=dict(ta=ta, tb=tb),
                  variant="mve-add-lut",
                  reason="Helium: inputs rescaled through 256-entry tables read by word "
                         "gathers, 4 elements per vector")

TABLE: list[Candidate] = [
    # (onnx: the conv / depthwise / FC kernels also run ONNX numerics, edgecc/lower/mve_onnx.py)
    Candidate("CONV_2D", ISA, "conv-ring", mve_ring.ring_applies,
              lambda g, n, t: mve_ring.lower_ring(g, n, t, mve_blocks2), onnx=True),
    Candidate("CONV_2D", ISA, "conv", dsp.conv_applies, lower_conv, onnx=True),
    Candidate("DEPTHWISE_CONV_2D", ISA, "dw-as-conv", dw_one_channel_applies, lower_dw_as_conv,
              onnx=True),
    Candidate("DEPTHWISE_CONV_2D", ISA, "dw-gather", dw_applies, lower_dw, onnx=True),
    Candidate("FULLY_CONNECTED", ISA, "fc-4u", dsp.fc_applies, lower_fc, onnx=True),
    Candidate("FULLY_CONNECTED", ISA, "fc-4u-pc", dsp.fc_pc_applies, lower_fc_pc, onnx=True),
    Candidate("ADD", ISA, "add-onnx", mo.add_applies, mo.lower_add, onnx=True),
    Candidate("ADD", ISA, "add-lut", dsp.add_applies, lower_add),
    Candidate("AVERAGE_POOL_2D", ISA, "avgpool", dsp.pool_applies,
              lambda g, n, t: dsp.pool_kernel(g, n, ISA)),
    Candidate("MAX_POOL_2D", ISA, "maxpool", dsp.pool_applies,
              lambda g, n, t: dsp.pool_kernel(g, n, ISA)),
]
