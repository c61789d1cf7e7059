"""FULLY_CONNECTED, int8 activations and weights (per-tensor weight scale), optional int32 bias.

TFLite Micro's reference: acc = bias + sum((x + in_off) * w) with in_off = -input_zp, then
MultiplyByQuantizedMultiplier, + output_zp, clamp to the fused activation range. keep_num_dims only
changes the output shape.
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import DType, Graph, Node, TensorType
from edgecc.ops import Kernel, OpDef, const, in_type, out_type, quantized_io, register
from edgecc.ops import _simd, _vec, _vec_fc
from edgecc.ops._conv_common import act_range, bias_or_zeros, fc_multiplier, requantize
from edgecc.ops import _conv16


def int8_activations(g: Graph, n: Node) -> bool:
    """input and output must both be int8, or both int16 (16x8: int16 activations, int8 weights)"""
    return (in_type(g, n).dtype, out_type(g, n).dtype) in ((DType.INT8,) * 2, (DType.INT16,) * 2)


def int8_constant_weights(g: Graph, n: Node) -> bool:
    """weights must be a constant int8 tensor of rank 2 with zero point 0"""
    w = g.value(n.inputs[1])
    return (w.is_const and w.type.dtype == DType.INT8 and len(w.type.shape) == 2
            and w.type.q is not None and all(z == 0 for z in w.type.q.zero_point))


def per_tensor_weights(g: Graph, n: Node) -> bool:
    """weights must be quantized per tensor (one scale)"""
    return not in_type(g, n, 1).q.per_channel


def bias_int32_const(g: Graph, n: Node) -> bool:
    """bias, when present, must be a constant int32 tensor (int64 with int16 activations)"""
    if len(n.inputs) < 3 or n.inputs[2] is None:
        return True
    b = g.value(n.inputs[2])
    return b.is_const and b.type.dtype == _conv16.bias_dtype(g, n)


def supported_activation(g: Graph, n: Node) -> bool:
    """fused activation must be NONE, RELU, RELU_N1_TO_1 or RELU6"""
    return int(n.attrs.get("fused_activation_function", 0)) in (0, 1, 2, 3)


def _dims(g: Graph, n: Node) -> tuple[int, int, int]:
    units, depth = in_type(g, n, 1).shape
    batches = in_type(g, n).numel // depth
    return batches, units, depth


def infer(g: Graph, n: Node) -> list[TensorType | None]:
    batches, units, _ = _dims(g, n)
    x = in_type(g, n)
    if n.attrs.get("keep_num_dims"):
        shape = (*x.shape[:-1], units)
    else:
        shape = (batches, units)
    return [TensorType(shape, out_type(g, n).dtype)]


def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    if _conv16.is_int16(g, n):  # 16x8: edgecc/ops/_conv16.py
        return _conv16.reference_fully_connected(g, n, ins)
    batches, units, depth = _dims(g, n)
    x = ins[0].reshape(batches, depth).astype(np.int64) - in_type(g, n).q.zero_point[0]
    w = const(g, n, 1).astype(np.int64)
    acc = x @ w.T + bias_or_zeros(g, n, units)
    m, s = fc_multiplier(g, n)
    lo, hi = act_range(g, n)
    out = requantize(acc, m, s, out_type(g, n).q.zero_point[0], lo, hi, np.int8)
    return [out.reshape(out_type(g, n).shape)]


# Inputs the DSP FC kernels sign-extend at a time: deep rows (micro_speech's 4000) go in
# chunks so the scratch stays ~1 KiB; the partial sums cost ~15 instructions per chunk and
# 4-unit block (against ~2400 of MACs). A multiple of 16: only the last chunk may hold an odd
# number of 8-input steps.
FC_CHUNK = 512


def _fc_chunk(dp: int, up: int) -> tuple[int, int]:
    """(inputs per chunk, scratch bytes) for ec_dsp_fully_connected_4u[_ub]_s8: the extended chunk
    (2 bytes per input), the 8-byte row tail, and with several chunks up int32 partial sums."""
    whole = 2 * dp + 8
    chunked = 2 * FC_CHUNK + 8 + 4 * up
    if dp <= FC_CHUNK or chunked >= whole:
        return dp, whole
    return FC_CHUNK, chunked


def _lower_simd(g: Graph, n: Node, target) -> tuple[Kernel | None, str]:
    """The SIMD kernel for this layer on this target, or (None, why the portable one runs).

    Cortex-M DSP (runtime_c/dsp/fully_connected.h): the input row is sign-extended a chunk
    at a time (_fc_chunk); 4 units at a time, their weights interleaved 8 inputs at a time.
    """
    if _vec.isa_of(target) == "avx2":  # x86: edgecc/ops/_vec_fc.py, else edgecc/ops/_vec.py
        k, _why = _vec_fc.lower_fc(g, n, target)
        if k is not None:
            return k, ""
    if _vec.isa_of(target):  # x86 AVX2 / AArch64 NEON: edgecc/ops/_vec.py
        return _vec.lower_fc(g, n, target)
    if not _simd.has_isa(target, "dsp"):
        return None, ""
    batches, units, depth = _dims(g, n)
    w = const(g, n, 1).astype(np.int64)
    in_zp = int(in_type(g, n).q.zero_point[0])
    m, s = fc_multiplier(g, n)
    lo, hi = act_range(g, n)
    rq = _simd.conv_requant(w, bias_or_zeros(g, n, units), in_zp, np.full(units, m), np.full(units, s),
                            int(out_type(g, n).q.zero_point[0]), lo, hi)
    if rq.fr is None:
        return None, f"no exact fast requantization ({rq.why})"
    if not rq.fr.uniform:
        return None, "units need different requantization constants: portable kernel"
    fr = rq.fr
    if _simd.has_isa(target, "mve"):
        mb = _simd.mve_blocks(w, rq.folded, fr)
        geom = [batches, depth, mb.kp, units, fr.lo, fr.hi]
        rec = mb.rq[:12]  # per-tensor: one requantization record for every block
        return Kernel("fully_connected_mve.c.j2", params=dict(geom=geom),
                      consts=dict(w=mb.w, bias=mb.bias, rq=rec),
                      scratch=0 if depth == mb.kp else mb.kp, variant="mve-fc-4u",
                      reason="Helium: 4 units per pass, VMLADAVA on 16-byte chunks, vector "
                             "requantization"), ""
    dp, up = _simd.round_up(depth, 8), _simd.round_up(units, 4)
    wpad = np.zeros((up, dp), np.int64)
    wpad[:units, :depth] = w
    bias = np.zeros(up, np.int64)
    bias[:units] = rq.folded
    cp, scratch = _fc_chunk(dp, up)
    geom = [batches, depth, dp, units, up, int(fr.m[0]), int(fr.n[0]), int(fr.e[0]), fr.lo, fr.hi,
            cp]
    lo_acc, hi_acc = _simd.acc_range(w, bias_or_zeros(g, n, units), in_zp)
    if max(-int(lo_acc.min()), int(hi_acc.max())) < (1 << 23):
        # offset weight bytes (dsp/fully_connected.h, ..._ub_s8): the kernel sums 256 * acc
        wb, b256 = _simd.offset_bytes(wpad, bias)
        return Kernel("fully_connected_dsp.c.j2", params=dict(
            geom=geom, fn="ec_dsp_fully_connected_4u_ub_s8"),
                      consts=dict(w=_simd.pack_words(_simd.interleave_rows(wb, 4, 8)),
                                  bias=b256),
                      scratch=scratch, variant="dsp-fc-4u-ub",
                      reason="Cortex-M DSP: 4 units per pass over offset weight bytes "
                             "(UXTB16 + 2 SMLAD per 4 MACs; accumulators below 2^23)"), ""
    return Kernel("fully_connected_dsp.c.j2", params=dict(
        geom=geom, fn="ec_dsp_fully_connected_4u_s8"),
                  consts=dict(w=_simd.pack_words(_simd.interleave_rows(wpad, 4, 8)),
                              bias=_simd.doubled(bias)),  # the kernel doubles the activations
                  scratch=scratch, variant="dsp-fc-4u",
                  reason="Cortex-M DSP: 4 units per pass, input sign-extended once, weights "
                         "interleaved by 8 inputs"), ""


def lower(g: Graph, n: Node, target) -> Kernel:
    if _conv16.is_int16(g, n):  # 16x8: edgecc/ops/_conv16.py (no SIMD variant yet)
        return _conv16.lower_fully_connected(g, n, target)
    simd, why = _lower_simd(g, n, target)
    if simd is not None:
        return simd
    batches, units, depth = _dims(g, n)
    w = const(g, n, 1).astype(np.int64)
    in_zp = in_type(g, n).q.zero_point[0]
    # Fold the input zero point into the bias: sum((x - zp) * w) = sum(x*w) - zp*sum(w).
    bias = bias_or_zeros(g, n, units) - in_zp * w.sum(axis=1)
    m, s = fc_multiplier(g, n)
    lo, hi = act_range(g, n)
    return Kernel("fully_connected.c.j2",
                  params=dict(batches=batches, units=units, depth=depth, mult=m, shift=s,
                              out_zp=out_type(g, n).q.zero_point[0], act_min=lo, act_max=hi),
                  consts=dict(w=w.astype(np.int8), bias=bias.astype(np.int32)), reason=why)


OP = register(OpDef(
    "FULLY_CONNECTED", infer, reference, lower,
    [quantized_io, int8_activations, int8_constant_weights, per_tensor_weights, bias_int32_const,
     supported_activation, _conv16.int16_zero_points, _conv16.int16_shift_in_range],
    dtypes="int8 x int8 -> int8 (int32 bias), int16 x int8 -> int16 (int64 bias)"))
