"""The plan checkers: prove that no two buffers alive at the same time overlap.

Owns: `check_buffers` (the placement view: every buffer inside the arena, aligned, no two with
intersecting lifetimes overlapping) and `check_graph_plan`, which does not trust the planner's
buffers at all: it recomputes every value's lifetime from the graph, value by value, and accepts
shared bytes only where the semantics allow it (a reshape-like op's output at exactly its input's
offset; an in-place op's output at exactly the offset of an input of the same size that it reads
for the last time at that node, for a pair its OpDef declares; a streaming window op's output
partly over its input, when the input dies at that node and no pass of the declared kernel order
writes over an input byte a later pass still reads: `stream_safe` enumerates the passes and the
in-image filter taps of every output pixel, independently of the planner's bound).
"""
from __future__ import annotations

from edgecc.ir import Graph
from edgecc.plan.liveness import Buffer, op_traits
from edgecc.plan.stream import Geometry, geometry, normalize, reads_first


class PlanError(AssertionError):
    pass


def check_buffers(bufs: list[Buffer], arena: int) -> None:
    for b in bufs:
        if b.offset < 0 or b.offset % b.align or b.offset + b.size > arena:
            raise PlanError(f"buffer {b.name} at {b.offset}+{b.size} outside arena {arena} "
                            f"or not {b.align}-aligned")
    # A sweep over first steps: each buffer is compared only with those still alive when it
    # starts (the pairs that live together), so a long chain stays linear.
    alive: list[Buffer] = []
    for b in sorted(bufs, key=lambda b: b.first):
        alive = [a for a in alive if a.last >= b.first]
        for a in alive:
            lo, hi = (a, b) if (a.offset, -a.size) <= (b.offset, -b.size) else (b, a)
            if hi.offset < lo.offset + lo.size and not _shift_ok(lo, hi):
                raise PlanError(f"live buffers overlap: {lo.name} [{lo.offset},+{lo.size}) "
                                f"steps {lo.first}-{lo.last} and {hi.name} [{hi.offset},"
                                f"+{hi.size}) steps {hi.first}-{hi.last}")
        alive.append(b)


def _shift_ok(a: Buffer, b: Buffer) -> bool:
    """A streaming pair placed within its shift bound (the graph check proves the bound)."""
    if a.name in b.shifts:
        return b.offset - a.offset <= b.shifts[a.name]
    if b.name in a.shifts:
        return a.offset - b.offset <= a.shifts[b.name]
    return False


def _first_tap(o: int, stride: int, pad: int, dil: int, k: int, size: int) -> int | None:
    """The first in-image input index the window of output index o reads, or None."""
    for f in range(k):
        i = o * stride - pad + f * dil
        if 0 <= i < size:
            return i
    return None


def _passes(geo: Geometry, decl) -> list[list[tuple[int, int, int]]]:
    """The (batch, row, column) output pixels of each pass of declaration `decl`, in order."""
    rows, cols = normalize(decl)
    if rows == 0:  # flat blocks of cols pixels
        flat = [(b, oy, ox) for b in range(geo.batches) for oy in range(geo.out_h)
                for ox in range(geo.out_w)]
        return [flat[k:k + cols] for k in range(0, len(flat), cols)]
    cols = cols or geo.out_w
    return [[(b, oy, ox) for oy in range(r0, min(r0 + rows, geo.out_h))
             for ox in range(c0, min(c0 + cols, geo.out_w))]
            for b in range(geo.batches) for r0 in range(0, geo.out_h, rows)
            for c0 in range(0, geo.out_w, cols)]


def stream_safe(geo: Geometry, decl, shift: int, in_bytes: int) -> str | None:
    """None when a kernel with pass order `decl` may run with its output `shift` bytes above its
    input's offset; else why not. Every pass's written bytes must miss [lowest input byte read
    by this or a later pass, end of input)."""
    fy = [_first_tap(o, geo.stride_h, geo.pad_t, geo.dil_h, geo.k_h, geo.in_h)
          for o in range(geo.out_h)]
    fx = [_first_tap(o, geo.stride_w, geo.pad_l, geo.dil_w, geo.k_w, geo.in_w)
          for o in range(geo.out_w)]
    table = []  # (write lo, write hi, lowest read or None) per pass, in execution order
    for px in _passes(geo, decl):
        lo = min(((b * geo.out_h + oy) * geo.out_w + ox) * geo.out_px for b, oy, ox in px)
        hi = max(((b * geo.out_h + oy) * geo.out_w + ox + 1) * geo.out_px for b, oy, ox in px)
        reads = [((b * geo.in_h + fy[oy]) * geo.in_w + fx[ox]) * geo.in_px
                 for b, oy, ox in px if fy[oy] is not None and fx[ox] is not None]
        table.append((lo, hi, min(reads) if reads else None))
    later = in_bytes  # lowest input byte read from this pass on (reads_first: after this pass)
    first = reads_first(decl)
    for k in range(len(table) - 1, -1, -1):
        lo, hi, r = table[k]
        if r is not None and not first:
            later = min(later, r)
        if shift + lo < in_bytes and shift + hi > later:
            return (f"pass {k} writes output bytes [{lo},{hi}) at input bytes "
                    f"[{shift + lo},{shift + hi}), input from byte {later} is still to be read")
        if r is not None and first:
            later = min(later, r)
    return None


def check_graph_plan(g: Graph, offsets: dict[str, int], scratch_at: dict[int, int],
                     scratch_sizes: dict[int, int], arena: int, alias_ops: set[str],
                     streams: dict[int, tuple] | None = None,
                     external: frozenset[str] = frozenset()) -> None:
    """Independent proof on the graph in its (final) node order; raises PlanError.
    `streams`: node position -> the kernel's declared pass order (Kernel.streams); `external`:
    values in caller memory (not in the arena, so not checked here)."""
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
    for v in external:
        first.pop(v, None)
        last.pop(v, None)
    for v in first:
        if v not in offsets:
            raise PlanError(f"value {v} has no offset")
        if offsets[v] < 0 or offsets[v] + g.type(v).nbytes > arena:
            raise PlanError(f"value {v} at {offsets[v]}+{g.type(v).nbytes} outside arena {arena}")
    # Pairs allowed to share bytes: same offset, by a reshape-like op or a declared in-place pair.
    # A group of values sharing storage is kept as its root with the group's last step and
    # whether a member is a graph output, so each node is checked in constant time (a chain of
    # n in-place ops stays linear).
    same: dict[str, str] = {}
    rootof: dict[str, str] = {}
    group_last: dict[str, int] = {}
    group_out: dict[str, bool] = {}
    outputs = {v for v in g.outputs if v in first}  # external values are not checked here

    def root(v: str) -> str:
        return rootof.get(v, v)

    def join(o: str, x: str) -> None:
        same[o] = x
        r = rootof[o] = root(x)
        group_last[r] = max(group_last.get(r, last.get(r, -1)), last.get(o, -1))
        group_out[r] = group_out.get(r, r in outputs) or o in outputs

    for i, n in enumerate(g.nodes):
        is_alias, pairs = op_traits(n.op, alias_ops)
        if is_alias and n.inputs and n.inputs[0] in first:
            join(n.outputs[0], n.inputs[0])
            continue
        for oi, ii in pairs:
            if (oi < len(n.outputs) and ii < len(n.inputs) and n.inputs[ii] in first
                    and n.outputs[oi] in first):
                o, x = n.outputs[oi], n.inputs[ii]
                r = root(x)
                if (offsets[o] == offsets[x] and g.type(o).nbytes == g.type(x).nbytes
                        and g.type(o).numel == g.type(x).numel and last[x] == i
                        and group_last.get(r, last.get(r, -1)) <= i
                        and not group_out.get(r, r in outputs)):
                    join(o, x)
    for v, r in same.items():
        if offsets[v] != offsets[r]:
            raise PlanError(f"{v} shares storage with {r} at another offset")
    # Streaming pairs: step -> (output, root of the input) that may overlap at that step.
    streamed: dict[int, tuple[str, str]] = {}
    for i, decl in (streams or {}).items():
        n = g.nodes[i]
        geo = geometry(g, n) if normalize(decl) else None
        if geo is None or n.inputs[0] not in first or n.outputs[0] not in first:
            continue
        o, x = n.outputs[0], n.inputs[0]
        r = root(x)
        if (first[o] != i or group_last.get(r, last.get(r, -1)) > i or group_out.get(r, r in outputs)
                or root(o) == r):
            continue  # not a streaming candidate: any overlap is caught below
        lo, hi = offsets[o], offsets[o] + g.type(o).nbytes
        if hi <= offsets[x] or lo >= offsets[x] + g.type(x).nbytes:
            continue  # no overlap
        why = stream_safe(geo, decl, offsets[o] - offsets[x], g.type(x).nbytes)
        if why is not None:
            raise PlanError(f"step {i} ({n.op}): output {o} over input {x}: {why}")
        streamed[i] = (o, r)
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
                if s in streamed and {v, w} & {streamed[s][0]} and \
                        root(w if v == streamed[s][0] else v) == streamed[s][1]:
                    continue  # the proven streaming pair of this step
                if v.startswith("scratch") or w.startswith("scratch") or root(v) != root(w):
                    raise PlanError(f"step {s} ({g.nodes[s].op if g.nodes else '-'}): {v} "
                                    f"[{lo},{hi}) overlaps {w} [{lo2},{hi2})")
