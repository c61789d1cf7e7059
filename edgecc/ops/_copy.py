"""The copy helper shared by the data-movement ops (CONCATENATION, SPLIT, SLICE, TILE, ...).

Owns: `Segment`, one strided copy `dst[dst_offset + sum(i_d * dst_strides[d])] =
src[src_offset + sum(i_d * src_strides[d])]` over a box of extents `dims` (strides in elements,
possibly 0 for repetition or negative for mirroring), its simplification (unit dims dropped,
adjacent dims merged where both sides are contiguous across them), and the template parameters
of a list of segments. An op's lowering describes its data movement as a few segments; the
templates (templates/c/_copy.j2) print one loop nest per segment, with a memcpy for the innermost
run when both sides are contiguous there.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from edgecc.ops import Kernel
from edgecc.ops._loops import index, nest


def row_major_strides(shape) -> list[int]:
    out, run = [0] * len(shape), 1
    for d in range(len(shape) - 1, -1, -1):
        out[d] = run
        run *= int(shape[d])
    return out


@dataclass
class Segment:
    dims: list[int]
    src_strides: list[int]
    dst_strides: list[int]
    src_offset: int = 0
    dst_offset: int = 0
    src: tuple[str, int] = ("in", 0)   # ("in", i): input i (constant inputs too), ("out", i)
    dst: int = 0                       # output index
    note: str = ""

    @property
    def count(self) -> int:
        n = 1
        for d in self.dims:
            n *= d
        return n

    def simplified(self) -> "Segment":
        keep = [(d, s, t) for d, s, t in zip(self.dims, self.src_strides, self.dst_strides) if d != 1]
        merged: list[list[int]] = []
        for d, s, t in keep:
            if merged and merged[-1][1] == s * d and merged[-1][2] == t * d:
                merged[-1] = [merged[-1][0] * d, s, t]
            else:
                merged.append([d, s, t])
        if any(d == 0 for d in self.dims):
            merged = [[0, 1, 1]]
        return Segment([m[0] for m in merged], [m[1] for m in merged], [m[2] for m in merged],
                       self.src_offset, self.dst_offset, self.src, self.dst, self.note)

    def params(self, elem_size: int) -> dict:
        s = self.simplified()
        run = bool(s.dims) and s.src_strides[-1] == 1 and s.dst_strides[-1] == 1
        outer = s.dims[:-1] if run else s.dims
        return dict(src_kind=s.src[0], src_index=s.src[1], dst=s.dst, memcpy=run,
                    dims=outer, ss=s.src_strides[:len(outer)], ds=s.dst_strides[:len(outer)],
                    src_offset=s.src_offset, dst_offset=s.dst_offset,
                    bytes=(s.dims[-1] * elem_size if run else 0), empty=s.count == 0,
                    note=s.note,
                    # what templates/c/_copy.j2 prints (edgecc/ops/_loops.py)
                    nest=nest(outer), indent="    " * len(outer),
                    src_at=index(s.src_strides[:len(outer)], s.src_offset),
                    dst_at=index(s.dst_strides[:len(outer)], s.dst_offset),
                    notes=[s.note] if s.note else [], move="memcpy" if run else "assign",
                    source="input" if s.src[0] == "in" else "output")


@dataclass
class CopyPlan:
    """The segments of one node, in execution order, plus an optional fill of output 0 first."""

    segments: list[Segment] = field(default_factory=list)
    fill: int | None = None  # fill every output-0 byte with this value first (e.g. a pad value)

    def params(self, elem_size: int) -> dict:
        segs = [s.params(elem_size) for s in self.segments if s.count > 0]
        return dict(segments=segs, fill=self.fill)


def box(shape, src_strides, dst_strides, src_offset=0, dst_offset=0, src=("in", 0), dst=0,
        note="") -> Segment:
    return Segment([int(d) for d in shape], [int(s) for s in src_strides],
                   [int(s) for s in dst_strides], int(src_offset), int(dst_offset), src, dst, note)


# ---- helpers shared by the data-movement op modules ------------------------------------------

def copy_kernel(template: str, plan: CopyPlan, elem_size: int, consts=None, **extra) -> Kernel:
    return Kernel(template, params=dict(plan.params(elem_size), **extra), consts=consts or {},
                  variant="copy", derived=dict(fills=[] if plan.fill is None else [plan.fill]))


def positive_axis(axis: int, rank: int) -> int:
    return axis + rank if axis < 0 else axis


def same_dtype(g, n) -> bool:
    """input and output must have the same element type"""
    return g.type(n.inputs[0]).dtype == g.type(n.outputs[0]).dtype


def const_ints(g, n, i: int):
    """Input i as a list of Python ints, or None when it is missing or not a constant."""
    v = n.inputs[i] if i < len(n.inputs) else None
    if v is None or not g.value(v).is_const:
        return None
    return [int(x) for x in g.value(v).data.ravel()]
