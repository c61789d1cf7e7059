"""MIRROR_PAD: pad every dim with a mirror image of the input (REFLECT or SYMMETRIC); raw copy.

TFLite maps output index p of a dim with pads (L, R) and extent n to input index L + o - 1 - p on
the left and n - 1 - o - (p - L - n) on the right (o = 1 for REFLECT, which skips the edge, 0 for
SYMMETRIC). edgecc copies the input into the centre of the output, then fills the pads one dim at
a time from the last to the first, each pad read (with a negative stride) from the already filled
part of the output itself: 1 + 2 * rank strided copies, rows moved with memcpy where contiguous.
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import Graph, Node, TensorType
from edgecc.ops import Kernel, OpDef, in_type, out_type, register
from edgecc.ops._copy import CopyPlan, box, const_ints, copy_kernel, row_major_strides, same_dtype


def _offset(n: Node) -> int:
    return 1 if int(n.attrs.get("mode", 0)) == 0 else 0  # MirrorPadMode REFLECT = 0


def _pads(g: Graph, n: Node) -> list[tuple[int, int]]:
    p = const_ints(g, n, 1)
    return [(p[2 * d], p[2 * d + 1]) for d in range(len(p) // 2)]


def constant_paddings(g: Graph, n: Node) -> bool:
    """paddings must be a constant [rank, 2] tensor; REFLECT pads at most dim-1, SYMMETRIC at most dim"""
    p = const_ints(g, n, 1)
    shape = in_type(g, n).shape
    if p is None or len(p) != 2 * len(shape):
        return False
    lim = [d - _offset(n) for d in shape]
    return all(0 <= a <= m and 0 <= b <= m for (a, b), m in zip(_pads(g, n), lim))


def infer(g: Graph, n: Node) -> list[TensorType | None]:
    shape = tuple(d + a + b for d, (a, b) in zip(in_type(g, n).shape, _pads(g, n)))
    return [TensorType(shape, out_type(g, n).dtype)]


def _input_index(p: int, left: int, size: int, offset: int) -> int:
    """TFLite's GetInputDimension for one output index."""
    if p < left:
        orig = left + offset - 1
        return orig - min(p, orig - offset)
    p -= left
    if p >= size:
        p -= size
        orig = size - (1 + offset)
        return orig - min(p, orig)
    return p


def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    x, off = ins[0], _offset(n)
    out = x
    for d, (a, b) in enumerate(_pads(g, n)):
        idx = [_input_index(p, a, x.shape[d], off) for p in range(x.shape[d] + a + b)]
        out = np.take(out, idx, axis=d)
    return [np.ascontiguousarray(out)]


def lower(g: Graph, n: Node, target) -> Kernel:
    x = in_type(g, n)
    pads, off = _pads(g, n), _offset(n)
    rank = len(x.shape)
    oshape = [d + a + b for d, (a, b) in zip(x.shape, pads)]
    os_ = row_major_strides(oshape)
    centre = sum(a * s for (a, _), s in zip(pads, os_))
    segs = [box(x.shape, row_major_strides(x.shape), os_, 0, centre, note="input into the centre")]
    for d in range(rank - 1, -1, -1):
        # dims before d: centre range; dim d: one pad; dims after d: already complete
        dims = [x.shape[j] for j in range(d)] + [0] + oshape[d + 1:]
        base = sum(pads[j][0] * os_[j] for j in range(d))
        left, right = pads[d]
        n_d = x.shape[d]
        if left:
            dims[d] = left
            src = [os_[j] for j in range(rank)]
            src[d] = -os_[d]
            segs.append(box(dims, src, os_, base + (2 * left + off - 1) * os_[d], base,
                            src=("out", 0), note=f"dim {d}: left pad"))
        if right:
            dims[d] = right
            src = [os_[j] for j in range(rank)]
            src[d] = -os_[d]
            segs.append(box(dims, src, os_, base + (left + n_d - 1 - off) * os_[d],
                            base + (left + n_d) * os_[d], src=("out", 0),
                            note=f"dim {d}: right pad"))
    return copy_kernel("mirror_pad.c.j2", CopyPlan(segs), x.dtype.size)


OP = register(OpDef("MIRROR_PAD", infer, reference, lower, [constant_paddings, same_dtype],
                    dtypes="any (raw copy)"))
