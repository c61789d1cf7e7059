"""Numpy-style broadcasting for the elementwise ops, resolved at compile time into loops and strides.

Owns: the broadcast output shape (numpy rules, rank <= MAX_RANK), and `broadcast_loops`, which
turns the input shapes and the output shape into the loop nest the templates print:

1. every input shape is padded with leading 1s to the output's rank;
2. output dims of extent 1 are dropped (they never move an index);
3. adjacent dims are merged when every input is either present in both or broadcast in both, so
   two same-shaped tensors become one flat loop and a per-channel operand becomes two loops;
4. each input gets one element stride per remaining dim: 0 where it is broadcast, otherwise the
   product of its own extents in the dims inside that one.

The output itself is always contiguous; its strides are returned too so templates index every
operand the same way: `x_k[i0 * s_k[0] + i1 * s_k[1] + ...]`.
"""
from __future__ import annotations

from dataclasses import dataclass

from edgecc.ir import Graph, Node

MAX_RANK = 5


def broadcast_shape(*shapes: tuple[int, ...]) -> tuple[int, ...] | None:
    """The numpy broadcast of `shapes`, or None when they do not broadcast."""
    rank = max((len(s) for s in shapes), default=0)
    out = []
    for d in range(rank):
        ext = [s[d - rank + len(s)] for s in shapes if d - rank + len(s) >= 0]
        big = {e for e in ext if e != 1}
        if len(big) > 1:
            return None
        out.append(big.pop() if big else 1)
    return tuple(out)


@dataclass(frozen=True)
class Loops:
    """A loop nest over the output: extents outer to inner, and element strides per operand."""

    dims: list[int]
    strides: list[list[int]]      # one list per input, same length as dims
    out_strides: list[int]

    @property
    def flat(self) -> bool:
        """One loop in which every input is contiguous or a scalar."""
        return len(self.dims) == 1

    def params(self, prefix: str = "s") -> dict:
        """Template params: dims, s0, s1, ... (input strides) and so (output strides)."""
        d = {"dims": self.dims, f"{prefix}o": self.out_strides}
        for k, s in enumerate(self.strides):
            d[f"{prefix}{k}"] = s
        return d


def broadcast_loops(in_shapes: list[tuple[int, ...]], out_shape: tuple[int, ...]) -> Loops:
    rank = len(out_shape)
    padded = [(1,) * (rank - len(s)) + tuple(s) for s in in_shapes]
    groups: list[tuple[int, tuple[bool, ...]]] = []  # (extent, broadcast flag per input)
    for d in range(rank):
        if out_shape[d] == 1:
            continue
        flags = tuple(p[d] == 1 for p in padded)
        if groups and groups[-1][1] == flags:
            groups[-1] = (groups[-1][0] * out_shape[d], flags)
        else:
            groups.append((out_shape[d], flags))
    if not groups:  # a single element
        return Loops([1], [[0] for _ in in_shapes], [0])
    dims = [e for e, _ in groups]
    strides = []
    for k in range(len(in_shapes)):
        run, s = 1, [0] * len(groups)
        for j in range(len(groups) - 1, -1, -1):
            if not groups[j][1][k]:
                s[j] = run
                run *= groups[j][0]
        strides.append(s)
    out_strides, run = [0] * len(dims), 1
    for j in range(len(dims) - 1, -1, -1):
        out_strides[j] = run
        run *= dims[j]
    return Loops(dims, strides, out_strides)


# ---- constraints shared by the broadcasting ops ------------------------------------------------

def shapes_broadcast(g: Graph, n: Node) -> bool:
    """input shapes must broadcast (numpy rules) to the output shape"""
    shapes = [g.type(v).shape for v in n.inputs if v is not None]
    return broadcast_shape(*shapes) == tuple(g.type(n.outputs[0]).shape)


def rank_at_most_5(g: Graph, n: Node) -> bool:
    """inputs and output must have rank <= 5"""
    return all(len(g.type(v).shape) <= MAX_RANK for v in [*n.inputs, *n.outputs] if v is not None)
