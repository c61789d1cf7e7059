"""Checks the DSP (and Helium) kernels of several ops share.

Owns: the int16 refusal every DSP / Helium entry makes, and `dead_bytes`, the bytes the
activations' own peak leaves dead at a node's step, which the kernels with an arena scratch
must fit in (the in-place depthwise and fully connected kernels exist because they need none).
"""
from __future__ import annotations

from edgecc.ir import DType, Graph, Node
from edgecc.ops import all_ops, in_type
from edgecc.plan.liveness import buffers_for


def int16_why(g: Graph, n: Node) -> str | None:
    """Why an int16 layer takes the portable kernel, or None."""
    return "int16 activations: portable kernel" if in_type(g, n).dtype == DType.INT16 else None


def dead_bytes(g: Graph, n: Node, target) -> int:
    """Bytes the activations' own peak leaves dead at n's step: the target's budget under
    `--scratch fit`, else the same measure (edgecc.compiler.scratch_budget) taken here, so
    the default build too gives a kernel scratch only where it cannot grow the arena."""
    if getattr(target, "scratch_budget", None) is not None:
        return int(target.scratch_budget)
    bufs = buffers_for(g, {}, {k for k, op in all_ops().items() if op.alias})
    i = next(k for k, m in enumerate(g.nodes) if m is n)
    live = [sum(b.size for b in bufs if b.first <= s <= b.last) for s in range(len(g.nodes))]
    return max(live, default=0) - live[i]
