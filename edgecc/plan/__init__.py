"""Memory planning: every activation and every kernel's scratch gets an offset in ONE arena.

Owns: liveness over the node order, alias groups (reshape-like ops share their input's storage),
placement, the live-bytes lower bound, and the checker that proves no two buffers alive at the same
time overlap.

Algorithm (v1, as TFLite Micro's greedy planner): a buffer lives from the step of its producer
(step 0 for graph inputs) to the step of its last consumer (the last step for graph outputs); a
kernel's scratch lives only during its node's step. Buffers are placed largest first; each goes to
the lowest 16-byte-aligned offset where it does not overlap any already placed buffer whose lifetime
intersects its own. The lower bound is the largest sum of (unaligned) live bytes at any step.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from edgecc.ir import Graph

ALIGN = 16


@dataclass
class Buffer:
    name: str          # a value name, or "scratch:<node index>"
    size: int
    first: int
    last: int
    offset: int = -1
    values: list[str] = field(default_factory=list)  # the values stored here (alias group)

    def lives_with(self, other: "Buffer") -> bool:
        return self.first <= other.last and other.first <= self.last


@dataclass
class Plan:
    buffers: list[Buffer]
    arena: int
    lower_bound: int
    offsets: dict[str, int]  # value name -> byte offset in the arena
    scratch: dict[int, int]  # node index -> scratch offset


def _align(x: int) -> int:
    return (x + ALIGN - 1) // ALIGN * ALIGN


def buffers_for(g: Graph, scratch_sizes: dict[int, int], alias_ops: set[str]) -> list[Buffer]:
    """Liveness of each storage group; aliased values join the buffer of their input."""
    root: dict[str, str] = {}
    for n in g.nodes:
        if n.op in alias_ops and n.inputs[0] is not None and not g.value(n.inputs[0]).is_const:
            root[n.outputs[0]] = root.get(n.inputs[0], n.inputs[0])
    last_step = max(len(g.nodes) - 1, 0)
    bufs: dict[str, Buffer] = {}

    def touch(v: str, step: int) -> None:
        r = root.get(v, v)
        b = bufs.get(r)
        if b is None:
            bufs[r] = Buffer(r, g.type(v).nbytes, step, step, values=[v])
        else:
            b.first, b.last = min(b.first, step), max(b.last, step)
            b.size = max(b.size, g.type(v).nbytes)
            if v not in b.values:
                b.values.append(v)

    for v in g.inputs:
        touch(v, 0)
    for i, n in enumerate(g.nodes):
        for v in [*n.inputs, *n.outputs]:
            if v is not None and not g.value(v).is_const:
                touch(v, i)
    for v in g.outputs:
        if not g.value(v).is_const:
            touch(v, last_step)
    out = list(bufs.values())
    for i, size in sorted(scratch_sizes.items()):
        if size > 0:
            out.append(Buffer(f"scratch:{i}", size, i, i))
    return out


def lower_bound(bufs: list[Buffer]) -> int:
    if not bufs:
        return 0
    steps = max(b.last for b in bufs) + 1
    return max(sum(b.size for b in bufs if b.first <= s <= b.last) for s in range(steps))


def place_greedy_by_size(bufs: list[Buffer]) -> int:
    placed: list[Buffer] = []
    for b in sorted(bufs, key=lambda b: (-b.size, b.first, b.name)):
        conflicts = sorted((p for p in placed if p.lives_with(b)), key=lambda p: p.offset)
        offset = 0
        for p in conflicts:
            if offset + b.size <= p.offset:
                break
            offset = max(offset, _align(p.offset + p.size))
        b.offset = offset
        placed.append(b)
    return _align(max((b.offset + b.size for b in bufs), default=0))


def check_plan(bufs: list[Buffer], arena: int) -> None:
    """Prove the plan: every buffer inside the arena, aligned, and no live pair overlapping."""
    for b in bufs:
        if b.offset < 0 or b.offset % ALIGN or b.offset + b.size > arena:
            raise AssertionError(f"buffer {b.name} at {b.offset}+{b.size} outside arena {arena}")
    for i, a in enumerate(bufs):
        for b in bufs[i + 1:]:
            if a.lives_with(b) and a.offset < b.offset + b.size and b.offset < a.offset + a.size:
                raise AssertionError(f"live buffers overlap: {a.name} [{a.offset},+{a.size}) "
                                     f"steps {a.first}-{a.last} and {b.name} [{b.offset},+{b.size}) "
                                     f"steps {b.first}-{b.last}")


def plan_arena(g: Graph, scratch_sizes: dict[int, int], alias_ops: set[str]) -> Plan:
    bufs = buffers_for(g, scratch_sizes, alias_ops)
    arena = place_greedy_by_size(bufs)
    check_plan(bufs, arena)
    offsets = {v: b.offset for b in bufs for v in b.values}
    scratch = {int(b.name.split(":")[1]): b.offset for b in bufs if b.name.startswith("scratch:")}
    return Plan(bufs, max(arena, ALIGN), lower_bound(bufs), offsets, scratch)
