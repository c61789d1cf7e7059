"""Storage groups and their lifetimes: which values share bytes, and from when to when they live.

Owns: the static alias groups (reshape-like ops: the output IS the input's bytes), the in-place
decision (an elementwise op writes its output over an input that dies at that very node), the
buffers of one node order, and the live-bytes lower bounds.

Liveness convention (the issue's and TFLite Micro's): a value lives from the step of its producer
(step 0 for graph inputs) to the step of its last consumer, both inclusive; graph outputs live to
the last step. At one step the inputs and the outputs of the node are therefore both alive, which
is what a kernel that is not in-place needs. A kernel's scratch lives only during its own step.

In-place: an op lists `inplace` pairs (output index, input index) in its OpDef when its C reads
element i of that input before it writes element i of that output. The planner uses a pair when
the input's whole alias group is last read at this node, is not a graph output, and input and
output have the same element count and element size; the output then joins the input's buffer.

Streaming (stream.py): a window op whose kernel declares its pass order (`Kernel.streams`) may put
its output partly over its input when the input's buffer dies at that node and the output's is
born there. The two stay separate buffers; the output buffer records `shifts[input buffer] =
d_max`: the pair may overlap when offset(output) - offset(input) <= d_max. The lower bounds
subtract what such a pair can save at its step.
"""
from __future__ import annotations

import collections

from dataclasses import dataclass, field

from edgecc.ir import Graph, Node
from edgecc.ops import get_op
from edgecc.plan.stream import aligned, saving, stream_pair


@dataclass
class Buffer:
    name: str          # a value name, or "scratch:<node index>"
    size: int
    first: int
    last: int
    offset: int = -1
    values: list[str] = field(default_factory=list)  # the values stored here (alias group)
    align: int = 16
    # input buffer name -> d_max: this (output) buffer may overlap that input buffer, at the one
    # step they share, when offset(self) - offset(input) <= d_max (a streaming pair)
    shifts: dict[str, int] = field(default_factory=dict)

    def lives_with(self, other: "Buffer") -> bool:
        return self.first <= other.last and other.first <= self.last


def op_traits(op: str, alias_ops: set[str]) -> tuple[bool, tuple[tuple[int, int], ...]]:
    """(is alias op, in-place pairs) of an op; unknown ops (not registered yet) have neither."""
    try:
        pairs = tuple(getattr(get_op(op), "inplace", ()) or ())
    except KeyError:
        pairs = ()
    return op in alias_ops, pairs


@dataclass
class StaticGroups:
    """Alias groups that do not depend on the node order (reshape-like ops)."""

    root: dict[str, str]            # value -> root value of its group
    size: dict[str, int]            # root -> bytes (max over members)
    members: dict[str, list[str]]   # root -> values, in first-appearance order
    outputs: set[str]               # roots holding a graph output (live to the end)
    inputs: set[str]                # roots holding a graph input (live from the start)


def static_groups(g: Graph, alias_ops: set[str]) -> StaticGroups:
    root: dict[str, str] = {}
    for v in g.activations():
        root[v] = v
    for n in g.nodes:
        if (n.op in alias_ops and n.inputs and n.inputs[0] is not None
                and not g.value(n.inputs[0]).is_const):
            root[n.outputs[0]] = root.get(n.inputs[0], n.inputs[0])
    size: dict[str, int] = {}
    members: dict[str, list[str]] = {}
    for v, r in root.items():
        size[r] = max(size.get(r, 0), g.type(v).nbytes)
        members.setdefault(r, []).append(v)
    outs = {root[v] for v in g.outputs if v in root}
    ins = {root[v] for v in g.inputs if v in root}
    return StaticGroups(root, size, members, outs, ins)


def inplace_candidates(g: Graph, n: Node, sg: StaticGroups,
                       alias_ops: set[str]) -> list[tuple[str, str]]:
    """(output root, input root) pairs node `n` may share in place, before any liveness check."""
    _, pairs = op_traits(n.op, alias_ops)
    out = []
    for oi, ii in pairs:
        if oi >= len(n.outputs) or ii >= len(n.inputs) or n.inputs[ii] is None:
            continue
        o, i = n.outputs[oi], n.inputs[ii]
        if g.value(i).is_const or sg.root.get(o) != o:
            continue
        to, ti = g.type(o), g.type(i)
        if (to.numel != ti.numel or to.dtype.size != ti.dtype.size
                or sg.size[o] != sg.size[sg.root[i]]):
            continue
        out.append((o, sg.root[i]))
    return out


def buffers_for(g: Graph, scratch_sizes: dict[int, int], alias_ops: set[str],
                inplace: bool = True, align: int = 16,
                streams: dict[int, tuple] | None = None,
                external: frozenset[str] = frozenset()) -> list[Buffer]:
    """The buffers of `g` in its own node order: alias groups, in-place merges, then scratch.
    `streams` (node position -> the kernel's declaration) adds the streaming pairs. The groups of
    the values in `external` (graph inputs and outputs in caller memory, `--io external`) get no
    buffer and take part in no in-place or streaming merge."""
    sg = static_groups(g, alias_ops)
    ext = {sg.root[v] for v in external if v in sg.root}
    last_step = max(len(g.nodes) - 1, 0)
    first: dict[str, int] = {r: 0 for r in sg.inputs}
    last: dict[str, int] = {r: 0 for r in sg.inputs}
    for i, n in enumerate(g.nodes):
        for v in [*n.inputs, *n.outputs]:
            if v is not None and v in sg.root:
                r = sg.root[v]
                first[r] = min(first.get(r, i), i)
                last[r] = max(last.get(r, i), i)
    for r in sg.outputs:
        last[r] = last_step
    # In-place merges: union of static groups, decided in node order.
    merged: dict[str, str] = {r: r for r in sg.size}

    def find(r: str) -> str:
        while merged[r] != r:
            r = merged[r]
        return r

    if inplace:
        for i, n in enumerate(g.nodes):
            taken: set[str] = set()
            for o, ir in inplace_candidates(g, n, sg, alias_ops):
                if ir in taken or o in taken or ir in sg.outputs or last[ir] != i:
                    continue
                if ir in ext or o in ext:
                    continue
                if find(o) != o:
                    continue
                merged[o] = find(ir)
                taken.update((ir, o))
    bufs: dict[str, Buffer] = {}
    for r in sg.size:
        if r not in first or r in ext:
            continue  # a value in no node and no graph io, or one in caller memory
        top = find(r)
        b = bufs.get(top)
        if b is None:
            b = bufs[top] = Buffer(top, 0, first[r], last[r], align=align)
        b.first, b.last = min(b.first, first[r]), max(b.last, last[r])
        b.size = max(b.size, sg.size[r])
        b.values.extend(sg.members[r])
    out = list(bufs.values())
    for i, decl in sorted((streams or {}).items()):
        pair = stream_pair(g, g.nodes[i], decl) if i < len(g.nodes) else None
        if pair is None:
            continue
        o, x, d = pair
        bo, bx = bufs.get(find(sg.root[o])), bufs.get(find(sg.root[x]))
        # the input's bytes die here and the output's are born here: they share only this step
        if (bo is None or bx is None or bo is bx or bx.last != i or bo.first != i
                or any(sg.root[v] in sg.outputs for v in bx.values)):
            continue
        bo.shifts[bx.name] = d
    for i, s in sorted(scratch_sizes.items()):
        if s > 0:
            out.append(Buffer(f"scratch:{i}", s, i, i, align=align))
    return out


def inplace_pairs(bufs: list[Buffer], g: Graph, alias_ops: set[str]) -> list[tuple[str, str]]:
    """(output, input) value pairs of the nodes that write over an input, for reports."""
    where = {v: b.name for b in bufs for v in b.values}
    out = []
    for n in g.nodes:
        if n.op in alias_ops:
            continue
        for o in n.outputs:
            for i in n.inputs:
                if i is not None and i in where and o in where and where[i] == where[o]:
                    out.append((o, i))
                    break
    return out


def stream_savings(bufs: list[Buffer]) -> dict[int, int]:
    """step -> bytes the streaming pairs of that step can save (at most)."""
    by_name = {b.name: b for b in bufs}
    out: dict[int, int] = {}
    for b in bufs:
        for x, d in b.shifts.items():
            if x in by_name:
                s = saving(by_name[x].size, b.size, aligned(d, b.align))
                out[b.first] = out.get(b.first, 0) + s
    return out


def lower_bound(bufs: list[Buffer]) -> int:
    """Largest sum of buffer bytes alive at one step, less what streaming pairs overlap there:
    no placement of these buffers is smaller."""
    if not bufs:
        return 0
    steps = max(b.last for b in bufs) + 1
    live = [0] * (steps + 1)
    for b in bufs:
        live[b.first] += b.size
        live[b.last + 1] -= b.size
    save = stream_savings(bufs)
    best = run = 0
    for s in range(steps):
        run += live[s]
        best = max(best, run - save.get(s, 0))
    return best


def aligned_lower_bound(bufs: list[Buffer]) -> int:
    """As lower_bound, but counting that every buffer starts aligned: at each step all live
    buffers but the topmost take their size rounded up to their alignment."""
    if not bufs:
        return 0
    steps = max(b.last for b in bufs) + 1
    save = stream_savings(bufs)
    # a sweep over steps: the padded bytes alive and a count of the live buffers' slacks
    # (padding < alignment, so few distinct values) give each step's sum in O(1) amortized
    starts: dict[int, list[Buffer]] = {}
    ends: dict[int, list[Buffer]] = {}
    for b in bufs:
        starts.setdefault(b.first, []).append(b)
        ends.setdefault(b.last, []).append(b)
    padded_sum, slacks, best = 0, collections.Counter(), 0
    for s in range(steps):
        for b in starts.get(s, ()):
            p = -(-b.size // b.align) * b.align
            padded_sum += p
            slacks[p - b.size] += 1
        if slacks:
            best = max(best, padded_sum - max(slacks) - save.get(s, 0))
        for b in ends.get(s, ()):
            p = -(-b.size // b.align) * b.align
            padded_sum -= p
            slacks[p - b.size] -= 1
            if not slacks[p - b.size]:
                del slacks[p - b.size]
    return best


def model_lower_bound(g: Graph) -> int:
    """The issue's LB: the model's own order, every non-constant tensor its own bytes (no
    aliasing, no in-place, no scratch), graph inputs from step 0 and outputs to the last step."""
    bufs = buffers_for(g, {}, set(), inplace=False)
    return lower_bound(bufs)
