"""The Cortex-M DSP kernel table (Armv7E-M / Armv8-M DSP extension: SMLAD, SXTB16, SSUB8 ...).

Owns: which DSP kernels exist and in which order they are tried, when each applies, and its
constants: convolution (6 pixels x 1 channel SMLAD blocks over sign-extended fields; its
lowering and both epilogues, TFLite's and ONNX's, are edgecc/lower/dsp_conv.py),
depthwise (int16 channel planes; 3x3 stride 1 / 2 two outputs a pass), the one-input-channel
depthwise run as a convolution, fully connected (4 units a pass, offset weight bytes when the
accumulators stay below 2^23), ADD through 256-entry tables, and the pools. The checks and
requantization steps the Helium table shares (edgecc/lower/mve.py) are the public functions
here. The C is runtime_c/dsp/, the calls templates/dsp/.
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import DType, Graph, Node
from edgecc.lower.climits import c_define
from edgecc.numerics import fastrq
from edgecc.lower.layout import (doubled, fits_int32, interleave_fc8, interleave_rows,
                                 offset_bytes, pack_words, pad_to, round_up)
from edgecc.lower.geom import DspAddGeom, DspDwGeom, DspFcGeom, PoolGeom
from edgecc.lower.dsp_conv import conv_kernel, conv_rq, direct_fields, lower_conv  # noqa: F401
from edgecc.lower.dsp_conv import fast_rq as _fast_rq
from edgecc.lower.table import Candidate, Refused
from edgecc.ops import Kernel, const, in_type, out_type
from edgecc.ops._conv_common import (act_range, bias_or_zeros, conv_groups, conv_window,
                                     fc_unit_multipliers)
from edgecc.numerics.qlinear import onnx_scales
from edgecc.ops.add import add_quant
from edgecc.ops.fully_connected import fc_dims
from edgecc.ops.pool_2d import pool_geometry
from edgecc.numerics.fixed_point import mbqm_smaller_than_one

ISA = "dsp"
DW_MAX_KH = c_define("dsp/depthwise_conv_2d.h", "EC_DSP_DW_MAX_KH")  # filter rows in the planes


def _int16(g: Graph, n: Node) -> str | None:
    return "int16 activations: portable kernel" if in_type(g, n).dtype == DType.INT16 else None


# ------------------------------------------------------------------------------- CONV_2D

def conv_applies(g: Graph, n: Node, target) -> str | None:
    """int8, one group (the DSP and Helium convolutions)."""
    if _int16(g, n):
        return _int16(g, n)
    if conv_groups(g, n) != 1:
        return "grouped convolution: portable kernel"
    return None


# --------------------------------------------------------------------- DEPTHWISE_CONV_2D

def dw_common(g: Graph, n: Node, target) -> str | None:
    """What every DSP / Helium depthwise kernel needs: int8, undilated, filters of at most 8
    rows unless the layer has one input channel."""
    if _int16(g, n):
        return _int16(g, n)
    win = conv_window(g, n)
    if win.dil_h != 1 or win.dil_w != 1:
        return "dilated depthwise: portable kernel"
    if win.k_h > DW_MAX_KH and in_type(g, n).shape[3] != 1:
        return "filter taller than 8 rows: portable kernel"
    return None


def dw_rows(g: Graph, n: Node) -> np.ndarray:
    """The depthwise filter as rows [oc, kh*kw] (one channel's taps together)."""
    w = const(g, n, 1).astype(np.int64)[0]  # [kh, kw, oc]
    return np.ascontiguousarray(w.transpose(2, 0, 1)).reshape(w.shape[2], -1)


def dw_as_conv_applies(g: Graph, n: Node, target) -> str | None:
    """One input channel and a filter over 8 rows: the layer IS a CONV_2D with in_c = 1 and
    out_c = depth multiplier (micro_speech's first layer)."""
    why = dw_common(g, n, target)
    if why:
        return why
    if not (in_type(g, n).shape[3] == 1 and conv_window(g, n).k_h > DW_MAX_KH):
        return "not one input channel with a filter over 8 rows"
    return None


def lower_dw_as_conv(g: Graph, n: Node, target) -> Kernel:
    """ec_dsp_conv_2d_4px_s8's im2col blocks of pixels, which handle any filter height."""
    return conv_kernel(g, n, dw_rows(g, n), 1, False, "dsp-dw-as-conv",
                       "Cortex-M DSP: one input channel, run as a convolution: blocks of pixels "
                       "x 1 channel SMLADs over {kp} taps")


def onnx_dw_epilogue(g: Graph, n: Node, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(folded bias [c], [c, 3] records) of a depthwise layer with ONNX numerics whose filter
    rows are `rows` [c, taps]: per channel the float32 scale's bits, the output zero point, and
    1 where every |acc * scale| is proven below 2^15 (a kernel without an FPU then skips
    ec_onnx_rq's float clamp); or Refused when the folded bias overflows int32."""
    c = rows.shape[0]
    in_zp = int(in_type(g, n).q.zero_point[0])
    bias = bias_or_zeros(g, n, c)
    folded = bias - in_zp * rows.sum(axis=1)
    if not fits_int32(folded):
        raise Refused("folded bias overflows int32: portable kernel")
    scales = onnx_scales(g, n, c)
    lo_acc, hi_acc = fastrq.acc_range(rows, bias, in_zp)
    inside = np.maximum(-lo_acc, hi_acc) * scales.astype(np.float64) * (1 + 1e-6) < 32767
    recs = np.stack([scales.view(np.int32).astype(np.int64),
                     np.full(c, int(out_type(g, n).q.zero_point[0]), np.int64),
                     inside.astype(np.int64)], axis=1)
    return folded.astype(np.int64), recs


def _pair16(a, b) -> int:
    """Two int16 taps in one int32 word, a in the bottom half (SMLAD's first pair)."""
    return int(np.int32(np.uint32((int(a) & 0xFFFF) | ((int(b) & 0xFFFF) << 16))))


def lower_dw(g: Graph, n: Node, target) -> Kernel:
    """Input rows transposed once into int16 channel planes, so a filter row's taps are
    adjacent halfwords and SMLAD takes two at a time; 3x3 stride 1 and stride 2 get kernels
    that compute two outputs per pass and share loads."""
    win = conv_window(g, n)
    x = in_type(g, n)
    w = const(g, n, 1).astype(np.int64)[0]  # [kh, kw, oc]
    kh, kw, oc = w.shape
    ic = x.shape[3]
    onnx = n.numerics.qlinear
    if onnx:  # onnxruntime's epilogue: unscaled weights and bias, (scale, zp, flag) per channel
        L, (folded, epi) = 0, onnx_dw_epilogue(g, n, dw_rows(g, n))
        lo, hi = act_range(g, n)
    else:
        rq = conv_rq(g, n, dw_rows(g, n))
        L, folded, lo, hi = rq.fr.L, rq.folded, rq.fr.lo, rq.fr.hi
        epi = np.stack([rq.fr.m, rq.fr.n, rq.fr.e], axis=1).astype(np.int64)
    if L > 8:  # the weights are pre-scaled by 2^L and must stay int16
        raise Refused("requantization left shift above 8: portable kernel")
    taps = w.transpose(2, 0, 1) << L  # [oc, kh, kw], scaled so the kernel needs no shift
    if kh == 3 and kw == 3 and win.stride_h == win.stride_w and win.stride_w in (1, 2):
        kind, wpr = win.stride_w, 2
        words = [[v for r in taps[c] for v in (_pair16(r[0], r[1]), _pair16(r[1], r[2]))]
                 for c in range(oc)]
        need = (win.out_w + 3) if kind == 1 else (2 * win.out_w + 4)
        variant = f"dsp-dw3x3-s{kind}"
        how = f"3x3 stride {kind}: two outputs per pass over int16 channel planes"
    else:
        kind, wpr = 0, (kw + 1) // 2
        padded = np.zeros((oc, kh, 2 * wpr), np.int64)
        padded[:, :, :kw] = taps
        words = [[_pair16(r[2 * t], r[2 * t + 1]) for r in padded[c] for t in range(wpr)]
                 for c in range(oc)]
        need = (win.out_w - 1) * win.stride_w + 2 * wpr
        variant = "dsp-dw-general"
        how = f"{kh}x{kw}: tap pairs per SMLAD over int16 channel planes"
    # One record per output channel: weight words, bias * 2^L, the epilogue's 3 words.
    recs = np.concatenate([np.array(words, np.int64),
                           (np.asarray(folded, np.int64) << L)[:, None], epi], axis=1)
    if not fits_int32(recs):
        raise Refused("scaled bias overflows int32: portable kernel")
    wp = round_up(max(need, win.pad_l + win.in_w) + 1, 2)
    geom = DspDwGeom(x.shape[0], win.in_h, win.in_w, ic, win.out_h, win.out_w, oc, oc // ic, kh, kw,
            win.stride_h, win.stride_w, win.pad_t, win.pad_l, wp, wpr, kind,
            int(x.q.zero_point[0]), lo, hi)
    fn = "ec_dsp_depthwise_conv_2d_planes_onnx_s8" if onnx else "ec_dsp_depthwise_conv_2d_planes_s8"
    epilogue = "onnxruntime's float32 epilogue" if onnx else "constants the compiler proved exact"
    return Kernel("dsp/depthwise_conv_2d_planes.c.j2",
                  params=dict(geom=geom, fn=fn, epilogue=epilogue),
                  consts=dict(recs=recs.ravel().astype(np.int32)),
                  scratch=kh * ic * wp * 2, variant=variant + ("-onnx" if onnx else ""),
                  streams=(1,), reason=f"Cortex-M DSP: {how}" + ("; ONNX epilogue" if onnx else ""))


# ----------------------------------------------------------------------- FULLY_CONNECTED

# Inputs the DSP FC kernels sign-extend at a time: deep rows (micro_speech's 4000) go in
# chunks so the scratch stays ~1 KiB; the partial sums cost ~15 instructions per chunk and
# 4-unit block (against ~2400 of MACs). A multiple of 16: only the last chunk may hold an odd
# number of 8-input steps.
FC_CHUNK = 512


# The offset-byte FC kernels' 8-unit step (dsp/fully_connected_8u.h) saves ~3 instructions per
# 32 MACs but its unrolled asm is ~1.8 KB of code in each kernel entry that has it (measured with
# arm-none-eabi-gcc: hello_world_int8's in-place entry 3,826 -> ~2,000 B without it). A model takes
# the entries with it (the _8u_ functions) only where its constant bytes are at least
# FC8_MIN_WEIGHT_BYTES, so that code adds at most ~10% to its flash (ad01_int8, kws_ref_model
# keep it; hello_world_int8, trained_lstm_int8, the small ONNX models go without), and only if
# some FC layer has 8 units to run it on. One choice per model: its layers share one entry.
FC8_MIN_WEIGHT_BYTES = 19000


def fc8_why_not(g: Graph) -> str | None:
    """Why the model's offset-byte FC layers take the 4u entries, or None: the 8u ones
    (FC8_MIN_WEIGHT_BYTES, an FC layer of 8 units or more)."""
    fcs = [n for n in g.nodes if n.op == "FULLY_CONNECTED"]
    if not any(fc_dims(g, n)[1] >= 8 for n in fcs if const(g, n, 1) is not None):
        return "no FC layer of 8 units"
    consts = {v for n in g.nodes for v in n.inputs if v is not None and g.value(v).is_const}
    if sum(int(g.value(v).data.nbytes) for v in consts) < FC8_MIN_WEIGHT_BYTES:
        return f"the model's constants under {FC8_MIN_WEIGHT_BYTES} B"
    return None


def fc8_entry(g: Graph, form: str) -> tuple[str, bool, str]:
    """(C function, eight, words for the kernel's reason) of the offset-byte FC kernel `form`
    ("ub", "ub_onnx", "rd", "rd_onnx")."""
    why_not = fc8_why_not(g)
    how = f"; no 8-unit step ({why_not})" if why_not else "; 8 units per step while 8 remain"
    return f"ec_dsp_fully_connected_{'4u' if why_not else '8u'}_{form}_s8", not why_not, how


def fc_chunk(dp: int, up: int) -> tuple[int, int]:
    """(inputs per chunk, scratch bytes) for ec_dsp_fully_connected_4u[_ub]_s8: the extended chunk
    (2 bytes per input), the 8-byte row tail, and with several chunks up int32 partial sums."""
    whole = 2 * dp + 8
    chunked = 2 * FC_CHUNK + 8 + 4 * up
    if dp <= FC_CHUNK or chunked >= whole:
        return dp, whole
    return FC_CHUNK, chunked


def fc_applies(g: Graph, n: Node, target) -> str | None:
    """int8, per-tensor weights (the DSP and Helium fully connected kernels)."""
    if _int16(g, n):
        return _int16(g, n)
    if in_type(g, n, 1).q.per_channel:
        return "per-channel weights: the per-channel entry (fc-4u-pc)"
    return None


def fc_pc_applies(g: Graph, n: Node, target) -> str | None:
    """int8, per-channel weights (the DSP and Helium per-channel fully connected kernels)."""
    if _int16(g, n):
        return _int16(g, n)
    if not in_type(g, n, 1).q.per_channel:
        return "per-tensor weights: the per-tensor entry (fc-4u)"
    return None


def fc_rq(g: Graph, n: Node, uniform: bool = True) -> fastrq.ConvRequant:
    """The fast requantization of a FULLY_CONNECTED layer (each unit's own multiplier and shift:
    fc_unit_multipliers), or Refused; with `uniform`, one for every unit."""
    units = fc_dims(g, n)[1]
    rq = _fast_rq(g, n, const(g, n, 1).astype(np.int64), *fc_unit_multipliers(g, n, units))
    if uniform and not rq.fr.uniform:
        raise Refused("units need different requantization constants: portable kernel")
    return rq


def _fc_padded(g: Graph, n: Node, folded: np.ndarray) -> tuple[int, int, np.ndarray, np.ndarray]:
    """(dp, up, weights, bias) for the DSP FC kernels: depth padded to a multiple of 8, units to
    a multiple of 4, with zero weights and biases."""
    _, units, depth = fc_dims(g, n)
    dp, up = round_up(depth, 8), round_up(units, 4)
    wpad = np.zeros((up, dp), np.int64)
    wpad[:units, :depth] = const(g, n, 1).astype(np.int64)
    return dp, up, wpad, pad_to(folded, up).astype(np.int64)


def lower_fc(g: Graph, n: Node, target) -> Kernel:
    """The input row sign-extended a chunk at a time (fc_chunk); 4 units at a time, their
    weights interleaved 8 inputs at a time."""
    batches, units, depth = fc_dims(g, n)
    w = const(g, n, 1).astype(np.int64)
    in_zp = int(in_type(g, n).q.zero_point[0])
    rq = fc_rq(g, n)
    fr = rq.fr
    dp, up, wpad, bias = _fc_padded(g, n, rq.folded)
    cp, scratch = fc_chunk(dp, up)
    geom = DspFcGeom(batches, depth, dp, units, up, int(fr.m[0]), int(fr.n[0]), int(fr.e[0]), fr.lo, fr.hi,
            cp)
    lo_acc, hi_acc = fastrq.acc_range(w, bias_or_zeros(g, n, units), in_zp)
    if max(-int(lo_acc.min()), int(hi_acc.max())) < (1 << 23):
        # offset weight bytes (dsp/fully_connected.h, ec_dsp_fully_connected_4u_ub_s8): the kernel sums 256 * acc
        wb, b256 = offset_bytes(wpad, bias)
        fn, eight, how = fc8_entry(g, "ub")
        return Kernel("dsp/fully_connected_4u.c.j2", params=dict(geom=geom, fn=fn),
                      consts=dict(w=pack_words(interleave_fc8(wb, eight)), bias=b256),
                      scratch=scratch, variant="dsp-fc-4u-ub",
                      reason="Cortex-M DSP: 4 units per pass over offset weight bytes "
                             "(UXTB16 + 2 SMLAD per 4 MACs; accumulators below 2^23)" + how)
    return Kernel("dsp/fully_connected_4u.c.j2",
                  params=dict(geom=geom, fn="ec_dsp_fully_connected_4u_s8"),
                  consts=dict(w=pack_words(interleave_rows(wpad, 4, 8)),
                              bias=doubled(bias)),  # the kernel doubles the activations
                  scratch=scratch, variant="dsp-fc-4u",
                  reason="Cortex-M DSP: 4 units per pass, input sign-extended once, weights "
                         "interleaved by 8 inputs")


def lower_fc_pc(g: Graph, n: Node, target) -> Kernel:
    """ec_dsp_fc_pc: ec_dsp_fc's passes with each unit's own fast-requantization constants
    (qmn, qe as the DSP convolution takes them); the sums always wait in the scratch's partial
    sums, so the scratch is the chunk, the tail and up int32 however shallow the row."""
    batches, units, depth = fc_dims(g, n)
    rq = fc_rq(g, n, uniform=False)
    fr = rq.fr
    dp, up, wpad, bias = _fc_padded(g, n, rq.folded)
    cp, _ = fc_chunk(dp, up)
    geom = DspFcGeom(batches, depth, dp, units, up, 0, 0, 0, fr.lo, fr.hi, cp)  # m, n, e: per unit
    return Kernel("dsp/fully_connected_4u_pc.c.j2", params=dict(geom=geom),
                  consts=dict(w=pack_words(interleave_rows(wpad, 4, 8)), bias=doubled(bias),
                              qmn=fr.qmn(), qe=fr.e.astype(np.int32)),
                  scratch=2 * cp + 8 + 4 * up, variant="dsp-fc-4u-pc",
                  reason="Cortex-M DSP: 4 units per pass, per-channel weights: each unit's own "
                         "requantization constants")


# ----------------------------------------------------------------------------------- ADD

def add_applies(g: Graph, n: Node, target) -> str | None:
    """int8, two same-shape activation inputs (the DSP and Helium ADD)."""
    if out_type(g, n).dtype != DType.INT8:
        return "int16: portable kernel"
    if in_type(g, n, 0).shape != in_type(g, n, 1).shape or \
            any(const(g, n, i) is not None for i in (0, 1)):
        return "broadcast or constant input: portable kernel"
    return None


def add_tables(g: Graph, n: Node) -> tuple[list[int], np.ndarray, np.ndarray]:
    """(geom, ta, tb): each input's rescaling as a function of its 256 possible values,
    tabulated (doubled) at compile time, and the fast requantization of their sum proven exact
    over the range of sums; or Refused."""
    q = add_quant(g, n)
    xs = np.arange(-128, 128, dtype=np.int64)
    ta = mbqm_smaller_than_one((xs + q["in1_off"]) * q["left_mult"], q["m1"], q["s1"])
    tb = mbqm_smaller_than_one((xs + q["in2_off"]) * q["left_mult"], q["m2"], q["s2"])
    lo, hi = np.array([ta.min() + tb.min()]), np.array([ta.max() + tb.max()])
    fr, why = fastrq.fast_requant(lo, hi, np.array([q["mo"]]), np.array([q["so"]]),
                                  q["out_zp"], q["act_min"], q["act_max"])
    if fr is None or fr.L != 1:
        raise Refused(f"no exact fast requantization ({why or 'left shift'})")
    geom = DspAddGeom(in_type(g, n, 0).numel, int(fr.m[0]), int(fr.n[0]), int(fr.e[0]), fr.lo, fr.hi)
    return geom, doubled(ta), doubled(tb)


def lower_add(g: Graph, n: Node, target) -> Kernel:
    """ec_dsp_add_lut_s8: two table entries added, the sum requantized fast."""
    geom, ta, tb = add_tables(g, n)
    return Kernel("dsp/add_lut.c.j2", params=dict(geom=geom), consts=dict(ta=ta, tb=tb),
                  variant="dsp-add-lut",
                  reason="Cortex-M DSP: inputs rescaled through 256-entry tables, fast "
                         "requantization of the sum")


# --------------------------------------------------------------------------------- pools

def pool_applies(g: Graph, n: Node, target) -> str | None:
    """int8; averages over windows of at most 256 taps, whose int16 sums cannot overflow."""
    if in_type(g, n).dtype != DType.INT8:
        return "int16: portable kernel"
    d = pool_geometry(g, n)
    if n.op == "AVERAGE_POOL_2D" and d["fh"] * d["fw"] > 256:
        return "windows over 256 taps: portable kernel"
    return None


def pool_kernel(g: Graph, n: Node, isa: str) -> Kernel:
    """The DSP (SXTAB16 sums of 8 channels / SSUB8+SEL maxima of 4) or Helium (16 channels per
    vector) pool kernel."""
    d = pool_geometry(g, n)
    average = n.op == "AVERAGE_POOL_2D"
    lo, hi = act_range(g, n)
    kind = "avgpool" if average else "maxpool"
    geom = PoolGeom(d["batches"], d["in_h"], d["in_w"], d["depth"], d["out_h"], d["out_w"], d["fh"],
            d["fw"], d["stride_h"], d["stride_w"], d["pad_h"], d["pad_w"], lo, hi)
    how = ("int16 sums of 16 channels per vector" if isa == "mve" else
           "SXTAB16 int16 sums, 8 channels at a time") if average else \
        ("VMAX.S8 on 16 channels" if isa == "mve" else "SSUB8 + SEL on 4 channels")
    return Kernel(f"{isa}/pool_2d.c.j2",
                  params=dict(geom=geom, fn=f"ec_{isa}_pool_2d_{kind[:3]}_s8"),
                  variant=f"{isa}-{kind}",
                  reason=f"{'Helium' if isa == 'mve' else 'Cortex-M DSP'}: {how}")


TABLE: list[Candidate] = [
    Candidate("CONV_2D", ISA, "conv-4px", conv_applies, lower_conv, onnx=True, near=True),
    Candidate("DEPTHWISE_CONV_2D", ISA, "dw-as-conv", dw_as_conv_applies, lower_dw_as_conv),
    Candidate("DEPTHWISE_CONV_2D", ISA, "dw", dw_common, lower_dw, onnx=True),
    Candidate("FULLY_CONNECTED", ISA, "fc-4u", fc_applies, lower_fc),
    Candidate("FULLY_CONNECTED", ISA, "fc-4u-pc", fc_pc_applies, lower_fc_pc),
    Candidate("ADD", ISA, "add-lut", add_applies, lower_add),
    Candidate("AVERAGE_POOL_2D", ISA, "avgpool", pool_applies,
              lambda g, n, t: pool_kernel(g, n, ISA)),
    Candidate("MAX_POOL_2D", ISA, "maxpool", pool_applies,
              lambda g, n, t: pool_kernel(g, n, ISA)),
]
