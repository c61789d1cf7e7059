"""The plan checkers: prove that no two buffers alive at the same time overlap.

Owns: `check_buffers` (the placement view: every buffer inside the arena, aligned, no two with
intersecting lifetimes overlapping) and `check_graph_plan`, which does not trust the planner's
buffers at all: it recomputes every value's lifetime from the graph, value by value, and accepts
shared bytes only where the semantics allow it (a reshape-like op's output at exactly its input's
offset; an in-place op's output at exactly the offset of an input of the same size that it reads
for the last time at that node, for a pair its OpDef declares).
"""
from __future__ import annotations

from edgecc.ir import Graph
from edgecc.plan.liveness import Buffer, op_traits


class PlanError(AssertionError):
    pass


def check_buffers(bufs: list[Buffer], arena: int) -> None:
    for b in bufs:
        if b.offset < 0 or b.offset % b.align or b.offset + b.size > arena:
            raise PlanError(f"buffer {b.name} at {b.offset}+{b.size} outside arena {arena} "
                            f"or not {b.align}-aligned")
    order = sorted(bufs, key=lambda b: b.offset)
    for i, a in enumerate(order):
        for b in order[i + 1:]:
            if b.offset >= a.offset + a.size:
                break
            if a.lives_with(b):
                raise PlanError(f"live buffers overlap: {a.name} [{a.offset},+{a.size}) "
                                f"steps {a.first}-{a.last} and {b.name} [{b.offset},+{b.size}) "
                                f"steps {b.first}-{b.last}")


def check_graph_plan(g: Graph, offsets: dict[str, int], scratch_at: dict[int, int],
                     scratch_sizes: dict[int, int], arena: int, alias_ops: set[str]) -> None:
    """Independent proof on the graph in its (final) node order; raises PlanError."""
    steps = len(g.nodes)
    first: dict[str, int] = {}
    last: dict[str, int] = {}
    for v in g.inputs:
        first[v] = last[v] = 0
    for i, n in enumerate(g.nodes):
        for v in [*n.inputs, *n.outputs]:
            if v is not None and not g.value(v).is_const:
                first.setdefault(v, i)
                last[v] = i
    for v in g.outputs:
        if v in first:
            last[v] = max(steps - 1, 0)
    for v in first:
        if v not in offsets:
            raise PlanError(f"value {v} has no offset")
        if offsets[v] < 0 or offsets[v] + g.type(v).nbytes > arena:
            raise PlanError(f"value {v} at {offsets[v]}+{g.type(v).nbytes} outside arena {arena}")
    # Pairs allowed to share bytes: same offset, by a reshape-like op or a declared in-place pair.
    same: dict[str, str] = {}

    def root(v: str) -> str:
        while v in same:
            v = same[v]
        return v

    for i, n in enumerate(g.nodes):
        is_alias, pairs = op_traits(n.op, alias_ops)
        if is_alias and n.inputs and n.inputs[0] in first:
            same[n.outputs[0]] = n.inputs[0]
            continue
        for oi, ii in pairs:
            if oi < len(n.outputs) and ii < len(n.inputs) and n.inputs[ii] in first:
                o, x = n.outputs[oi], n.inputs[ii]
                if (offsets[o] == offsets[x] and g.type(o).nbytes == g.type(x).nbytes
                        and g.type(o).numel == g.type(x).numel
                        and last[x] == i and all(last[w] <= i and w not in g.outputs for w in first
                                if root(w) == root(x))):
                    same[o] = x
    for v, r in same.items():
        if offsets[v] != offsets[r]:
            raise PlanError(f"{v} shares storage with {r} at another offset")
    live_at: list[list[str]] = [[] for _ in range(steps or 1)]
    for v in first:
        for s in range(first[v], last[v] + 1):
            live_at[s].append(v)
    for s, vals in enumerate(live_at):
        spans = [(offsets[v], offsets[v] + g.type(v).nbytes, v) for v in vals]
        if scratch_sizes.get(s, 0) > 0:
            spans.append((scratch_at[s], scratch_at[s] + scratch_sizes[s], f"scratch:{s}"))
        spans.sort()
        for k, (lo, hi, v) in enumerate(spans):
            for lo2, hi2, w in spans[k + 1:]:
                if lo2 >= hi:
                    break
                if hi2 == lo2 or hi == lo:
                    continue
                if v.startswith("scratch") or w.startswith("scratch") or root(v) != root(w):
                    raise PlanError(f"step {s} ({g.nodes[s].op if g.nodes else '-'}): {v} "
                                    f"[{lo},{hi}) overlaps {w} [{lo2},{hi2})")
