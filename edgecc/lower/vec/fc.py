"""FULLY_CONNECTED on the x86 (runtime_c/x86/fully_connected.h) and AArch64 NEON
(runtime_c/neon/fully_connected.h) quads kernels.

Owns: when those kernels apply (per-tensor, or per-channel weights: each unit's own
requantization constants) and their constants: the batch row once as u8 (x86) into scratch, then
32 (x86) / 16 (NEON) units at a time over quads of 4 inputs (edgecc/lower/layout.py
pack_quads). x86 tries its 16-unit streaming kernel first (edgecc/lower/x86/fc.py).
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import Graph, Node
from edgecc.lower.layout import pack_quads
from edgecc.lower.table import Refused
from edgecc.lower.vec.common import (LABEL, bias_of, folded_biases, int8_layer, out_act,
                                     requant_arrays, rq_params, vec_kernel)
from edgecc.ops import Kernel, const, in_type
from edgecc.ops._conv_common import fc_unit_multipliers
from edgecc.ops.fully_connected import fc_dims


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
                   f"{LABEL[isa]}: {32 if isa == 'x86' else 16} units at a time over quads of "
                   f"4 inputs", "quads")
