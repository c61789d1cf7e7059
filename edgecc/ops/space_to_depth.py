"""SPACE_TO_DEPTH and DEPTH_TO_SPACE (NHWC, block size b); any element type, raw copy.

SPACE_TO_DEPTH: out[n, h, w, (by * b + bx) * C + c] = in[n, h * b + by, w * b + bx, c].
DEPTH_TO_SPACE is its inverse. Both are one 6-dim strided copy (n, h, w, by, bx, c) whose inner c
run is contiguous on both sides, so the C is a loop nest of memcpy calls of C elements.
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import Graph, Node, TensorType
from edgecc.ops import Kernel, OpDef, in_type, out_type, register
from edgecc.ops._copy import CopyPlan, box, copy_kernel, same_dtype


def _b(n: Node) -> int:
    return int(n.attrs.get("block_size", 1))


def nhwc_and_block(g: Graph, n: Node) -> bool:
    """input must be 4-D NHWC; block_size >= 1 must divide H and W (SPACE_TO_DEPTH) or C by b*b (DEPTH_TO_SPACE)"""
    s, b = in_type(g, n).shape, _b(n)
    if len(s) != 4 or b < 1:
        return False
    if n.op == "SPACE_TO_DEPTH":
        return s[1] % b == 0 and s[2] % b == 0
    return s[3] % (b * b) == 0


def infer(g: Graph, n: Node) -> list[TensorType | None]:
    (nb, h, w, c), b = in_type(g, n).shape, _b(n)
    if n.op == "SPACE_TO_DEPTH":
        shape = (nb, h // b, w // b, c * b * b)
    else:
        shape = (nb, h * b, w * b, c // (b * b))
    return [TensorType(shape, out_type(g, n).dtype)]


def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    x, b = ins[0], _b(n)
    nb, h, w, c = x.shape
    if n.op == "SPACE_TO_DEPTH":
        y = x.reshape(nb, h // b, b, w // b, b, c).transpose(0, 1, 3, 2, 4, 5)
        return [np.ascontiguousarray(y).reshape(nb, h // b, w // b, b * b * c)]
    c2 = c // (b * b)
    y = x.reshape(nb, h, w, b, b, c2).transpose(0, 1, 3, 2, 4, 5)
    return [np.ascontiguousarray(y).reshape(nb, h * b, w * b, c2)]


def lower(g: Graph, n: Node, target) -> Kernel:
    (nb, h, w, c), b = in_type(g, n).shape, _b(n)
    if n.op == "SPACE_TO_DEPTH":
        ho, wo = h // b, w // b
        dims = [nb, ho, wo, b, b, c]
        src = [h * w * c, b * w * c, b * c, w * c, c, 1]
        dst = [ho * wo * b * b * c, wo * b * b * c, b * b * c, b * c, c, 1]
    else:
        c2 = c // (b * b)
        ho, wo = h * b, w * b
        dims = [nb, h, w, b, b, c2]
        src = [h * w * c, w * c, c, b * c2, c2, 1]
        dst = [ho * wo * c2, b * wo * c2, b * c2, wo * c2, c2, 1]
    return copy_kernel("space_to_depth.c.j2", CopyPlan([box(dims, src, dst)]),
                       in_type(g, n).dtype.size)


for _name in ("SPACE_TO_DEPTH", "DEPTH_TO_SPACE"):
    register(OpDef(_name, infer, reference, lower, [nhwc_and_block, same_dtype],
                   dtypes="any (raw copy)"))
