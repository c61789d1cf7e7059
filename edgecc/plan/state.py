"""The state region: where variable tensors (LSTM/SVDF state, resource variables) live.

Owns: placing every variable tensor the graph reads (Value.variable) in a region of the arena the
planner never reuses: at the start of the arena (everything planned moves up by the region's
size, so the arena's unaligned tail stays as tight as planned), each 16-byte aligned, alive at
every step. `name_reset()` writes their reset values there; `name_run()` reads and updates them
in place (the ops in `OpDef.updates`), so the state carries from one run to the next exactly as
TFLite Micro carries variable tensors from one Invoke() to the next. The region counts in the
arena and in every lower bound: those bytes are alive all the time, as in TFLite Micro's arena.
"""
from __future__ import annotations

from edgecc.ir import Graph
from edgecc.plan.check import check_buffers
from edgecc.plan.liveness import Buffer


def _aligned(n: int, align: int) -> int:
    return (n + align - 1) // align * align


def add_state_region(g: Graph, plan, align: int = 16) -> None:
    """Append g's variable tensors to `plan` (a Plan) as buffers alive at every step."""
    names = g.variables()
    if not names:
        return
    sizes = [g.type(v).nbytes for v in names]
    total = sum(_aligned(n, align) for n in sizes)
    for b in plan.buffers:
        b.offset += total
    plan.offsets = {v: o + total for v, o in plan.offsets.items()}
    plan.scratch = {i: o + total for i, o in plan.scratch.items()}
    offset = 0
    last = max(len(g.nodes) - 1, 0)
    for v, size in zip(names, sizes):
        plan.buffers.append(Buffer(f"state:{v}", size, 0, last, offset, [v], align))
        plan.offsets[v] = offset
        plan.state.append(v)
        offset += _aligned(size, align)
    plan.arena += total
    plan.state_bytes = total
    plan.lower_bound += total
    plan.graph_lower_bound += total
    plan.model_lower_bound += total
    plan.techniques.append(f"state region ({len(names)} variable tensors, {total} B)")
    check_buffers(plan.buffers, plan.arena)
