"""Lowering of int8 FULLY_CONNECTED to the x86 kernel ec_x86_fully_connected_stream_s8
(runtime_c/x86/fully_connected_stream.h).

Owns: when that kernel applies (else the quads kernel edgecc/lower/vec/fc.py runs, then the
portable kernel), its weight layout (16-unit blocks in passes of 8 / 4 / 2 / 1 blocks, each pass one
in-order stream: `pack_fc_blocks`), and its parameters. The folded biases and requantization
arrays are edgecc/lower/vec/common.py's (folded_biases, requant_arrays), padded to the 16-unit
blocks. The per-channel entries (each unit's own constants) are both kernels' too.
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import Graph, Node
from edgecc.lower.climits import c_define
from edgecc.lower.layout import round_up
from edgecc.lower.table import Refused
from edgecc.lower.vec.common import bias_of, folded_biases, out_act, requant_arrays, rq_params
from edgecc.lower.vec.fc import lower_fc as lower_quads, per_channel_kernel
from edgecc.ops import Kernel, const, in_type
from edgecc.ops._conv_common import fc_unit_multipliers
from edgecc.ops.fully_connected import fc_dims

# ec_x86_fully_connected_stream_s8 keeps the prepared batch row on the stack (EC_X86_FC_MAX_KP in the header)
MAX_KP = c_define("x86/fully_connected_stream_passes.h", "EC_X86_FC_MAX_KP")
BLOCK = 16  # units per block: one ZMM of int32 accumulators
PASS = 8    # blocks per full pass (128 units)


def fc_passes(blocks: int) -> list[int]:
    """Blocks per pass, in the kernel's order: 8 while they last, then 4, 2, 1 (the binary
    digits of the remainder)."""
    out = [PASS] * (blocks // PASS)
    rem = blocks % PASS
    out += [p for p in (4, 2, 1) if rem & p]
    return out


def half_block(units: int) -> bool:
    """The last pass is a single block holding 1..8 real units: packed as 8 units (32 bytes a
    step; ec_x86_fc_half) rather than padded to 16."""
    up = round_up(units, BLOCK)
    return fc_passes(up // BLOCK)[-1] == 1 and units - (up - BLOCK) <= 8


def pack_fc_blocks(w_rows: np.ndarray) -> tuple[np.ndarray, int, int]:
    """[units, depth] int8 -> (packed int8, up, kp): units padded to a multiple of 16 (up), the
    depth to a multiple of 4 (kp), both with zero weights; for each pass of P blocks, for each
    step of 4 inputs, the P blocks' 16 units x 4 weights (64 bytes each). A pass starting at
    block b starts at byte 16 * b * kp. A last single-block pass with at most 8 real units
    (half_block) stores 8 units x 4 weights per step."""
    units, depth = w_rows.shape
    up, kp = round_up(units, BLOCK), round_up(depth, 4)
    w = np.zeros((up, kp), np.int8)
    w[:units, :depth] = w_rows
    parts, b = [], 0
    passes = fc_passes(up // BLOCK)
    for i, p in enumerate(passes):
        n = BLOCK // 2 if i == len(passes) - 1 and half_block(units) else BLOCK
        blk = w[b * BLOCK:b * BLOCK + (p - 1) * BLOCK + n].reshape(p, n, kp // 4, 4)
        parts.append(blk.transpose(2, 0, 1, 3).ravel())
        b += p
    return np.concatenate(parts).astype(np.int8), up, kp


def _uniform(rq: dict[str, np.ndarray], units: int) -> bool:
    """The fast requantization arrays (mult, right, c64: see requant_arrays) hold one value for
    every real unit. c64 is stored per 8 units as 4 even then 4 odd: undone before comparing."""
    c64 = rq["c64"].reshape(-1, 2, 4).transpose(0, 2, 1).ravel()
    return all(bool((a[:units] == a[0]).all()) for a in (rq["mult"], rq["right"], c64))


def lower_fc(g: Graph, n: Node, target) -> Kernel:
    """FULLY_CONNECTED on x86 with ec_x86_fully_connected_stream_s8, or Refused: then the table
    tries the quads kernel (lower_fc_quads)."""
    batches, units, depth = fc_dims(g, n)
    w = const(g, n, 1).astype(np.int64)
    packed, up, kp = pack_fc_blocks(w)
    if kp > MAX_KP:
        raise Refused(f"depth {depth} above {MAX_KP}")
    in_zp = int(in_type(g, n).q.zero_point[0])
    b = bias_of(g, n, units)
    rq, rqp, why = requant_arrays("x86", *fc_unit_multipliers(g, n, units), up, w, b, in_zp,
                                  *out_act(g, n))
    if rq is None:
        raise Refused(why)
    uni = int(bool(rqp["fast"]) and _uniform(rq, units))
    if uni:  # per-tensor: 16 entries serve every block (less to stream from L2 per layer)
        rq = {k: np.full(BLOCK, v[0], v.dtype) for k, v in rq.items()}
    params = dict(batches=batches, depth=depth, kp=kp, units=units, up=up, uni=uni,
                  half=int(half_block(units)),
                  **rq_params(g, n), **rqp)
    consts = dict(w=packed, **folded_biases("x86", b, w, in_zp, up), **rq)
    passes = fc_passes(up // BLOCK)
    return Kernel("x86/fully_connected_stream.c.j2", params=params, consts=consts, scratch=0,
                  variant="x86-fc16",
                  reason=f"x86: 16-unit blocks in {len(passes)} pass(es) of {passes} blocks, "
                         f"one in-order weight stream per pass, the row read in place "
                         f"(stack copy when the depth is not a multiple of 4); ZMM VPDPBUSD "
                         f"where the build has it")


def lower_fc_pc(g: Graph, n: Node, target) -> Kernel:
    """The 16-unit kernel with each unit's own requantization constants."""
    return per_channel_kernel(lower_fc(g, n, target))


def lower_fc_quads(g: Graph, n: Node, target) -> Kernel:
    """The quads kernel: 32 units at a time (edgecc/lower/vec/fc.py)."""
    return lower_quads(g, n, "x86")


def lower_fc_quads_pc(g: Graph, n: Node, target) -> Kernel:
    """The quads kernel with each unit's own requantization constants."""
    return per_channel_kernel(lower_quads(g, n, "x86"))
